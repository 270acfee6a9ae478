//! Lemma 1 pieces and the calibrated bound. (The Theorem-2 tracking bound and the Lyapunov
//! solvers moved to `gpn_control::control::lyapunov`, with their tests.)

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use gpn_gp_core::bound::{
    BoundError, CalibratedBound, LemmaOne, WeightRule, beta, eta, eta_practical, expert_gamma,
    kernel_lipschitz_se, mean_lipschitz, rkhs_term, sigma_modulus,
};

#[test]
fn beta_eq13_by_hand() {
    // m = 2, τ = 0.05, box [−1, 1] × [0, 0.5], δ = 0.01:
    // ⌈(√2/0.1)·2⌉ = ⌈28.28⌉ = 29, ⌈(√2/0.1)·0.5⌉ = ⌈7.07⌉ = 8.
    let b = beta(&[-1.0, 0.0], &[1.0, 0.5], 0.05, 0.01).unwrap();
    let expect = 2.0 * (2.0 * (29f64.ln() + 8f64.ln()) - 2.0 * (0.01f64 / 2.0).ln()).sqrt();
    assert!((b - expect).abs() < 1e-12);
    // Degenerate side counts as one grid point.
    let b1 = beta(&[0.0], &[0.0], 0.1, 0.1).unwrap();
    assert!((b1 - 2.0 * (-2.0 * 0.1f64.ln()).sqrt()).abs() < 1e-12);
    assert!(matches!(
        beta(&[0.0], &[1.0], 0.1, 1.5),
        Err(BoundError::Invalid { what: "delta", .. })
    ));
    assert!(matches!(
        beta(&[0.0], &[1.0, 2.0], 0.1, 0.1),
        Err(BoundError::Dimension { .. })
    ));
}

#[test]
fn lemma_constants_and_eta() {
    let lk = kernel_lipschitz_se(2.0, &[0.5, 3.0]).unwrap();
    assert!((lk - 4.0 * (-0.5f64).exp() / 0.5).abs() < 1e-14);
    assert!((mean_lipschitz(lk, &[1.0, -2.0, 0.5]) - 3.5 * lk).abs() < 1e-14);
    let w = sigma_modulus(0.01, lk, 10, 1.0 / 0.01, 2.0);
    assert!((w - (2.0 * 0.01 * lk * (1.0 + 10.0 * 100.0 * 4.0)).sqrt()).abs() < 1e-12);
    assert!((rkhs_term(1.0, lk, 0.01) - (2.0 * lk * 0.01).sqrt()).abs() < 1e-15);
    let g = expert_gamma(3.0, w, 1.0, lk, 2.0, 0.01);
    assert!((g - (3.0 * w + (2.0 * lk * 0.01).sqrt() + 0.02)).abs() < 1e-12);

    // BCM-like weights summing to 1.5: Normalise divides them by 1.5.
    let (ws, ss, gs) = ([1.0, 0.5], [0.2, 0.4], [0.01, 0.03]);
    let e = eta(2.0, &ws, &ss, &gs, WeightRule::Normalise).unwrap();
    let expect = 2.0 * (0.2 + 0.5 * 0.4) / 1.5 + (0.01 + 0.5 * 0.03) / 1.5;
    assert!((e - expect).abs() < 1e-14);
    let e2 = eta(2.0, &ws, &ss, &gs, WeightRule::AsGiven).unwrap();
    assert!((e2 - (2.0 * 0.4 + 0.025)).abs() < 1e-14);
    let e3 = eta(
        2.0,
        &ws,
        &ss,
        &gs,
        WeightRule::PriorTerm {
            gamma_norm: 1.0,
            sigma_f: 3.0,
        },
    )
    .unwrap();
    assert!((e3 - (e2 + 0.5 * 3.0)).abs() < 1e-14);
    // Zero weights: uniform.
    let e4 = eta(1.0, &[0.0, 0.0], &ss, &gs, WeightRule::Normalise).unwrap();
    assert!((e4 - (0.3 + 0.02)).abs() < 1e-14);
    assert!(eta(1.0, &[1.0], &ss, &gs, WeightRule::Normalise).is_err());
}

#[test]
fn calibrated_bound_freezes_at_quantile() {
    let mut c = CalibratedBound::new(101, 0.95).unwrap();
    // r = |y − μ|/σ = k/100 for k = 0..=100 (shuffled order), σ = 2.
    for k in (0..=100).rev() {
        let frozen = c.observe(k as f64 / 50.0, 0.0, 2.0);
        assert_eq!(frozen, k == 0);
    }
    let b = c.beta_cal().unwrap();
    assert!((b - 0.95).abs() < 1e-12, "{b}");
    assert!((c.eta(3.0).unwrap() - 2.85).abs() < 1e-12);
    // Ignored after freezing.
    c.observe(1e6, 0.0, 1.0);
    assert_eq!(c.beta_cal(), Some(b));

    // Linear interpolation between order statistics, early freeze.
    let mut d = CalibratedBound::new(1000, 0.5).unwrap();
    assert_eq!(d.eta(1.0), None);
    for r in [1.0, 4.0, 2.0, 3.0] {
        d.observe(r, 0.0, 1.0);
    }
    d.freeze();
    assert_eq!(d.beta_cal(), Some(2.5));
    assert!(CalibratedBound::new(0, 0.95).is_err());
    assert!(CalibratedBound::new(10, 1.5).is_err());
}

/// The freeze selects order statistics instead of sorting: the same numbers as NumPy's
/// "linear" quantile of the sorted ratios, duplicates, the ends and one sample included.
#[test]
fn calibrated_bound_matches_the_sorted_quantile() {
    let ratios: Vec<f64> = (0..997u64)
        .map(|k| ((k * 7919) % 211) as f64 / 13.0)
        .collect();
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    for level in [0.01, 0.5, 0.9, 0.95, 0.999, 1.0] {
        let mut c = CalibratedBound::new(ratios.len(), level).unwrap();
        for r in &ratios {
            c.observe(*r, 0.0, 1.0);
        }
        let h = level * (sorted.len() - 1) as f64;
        let lo = h.floor() as usize;
        let hi = (lo + 1).min(sorted.len() - 1);
        let want = sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]);
        assert_eq!(c.beta_cal(), Some(want), "level {level}");
    }
    let mut one = CalibratedBound::new(1, 0.95).unwrap();
    assert!(one.observe(3.0, 1.0, 0.5));
    assert_eq!(one.beta_cal(), Some(4.0));
}

#[test]
fn lemma_one_assembles_the_pieces() {
    let (lo, hi) = ([-1.0, -2.0], [1.0, 2.0]);
    let l = LemmaOne::se(&lo, &hi, 0.01, 0.01, 1.0, 1.5, &[0.5, 2.0], 0.1).unwrap();
    let b = beta(&lo, &hi, 0.01, 0.01).unwrap();
    let lk = kernel_lipschitz_se(1.5, &[0.5, 2.0]).unwrap();
    assert_eq!(l.beta, b);
    assert_eq!(l.l_kappa, lk);
    let g = l.expert_gamma(3.0, 50);
    let w = sigma_modulus(0.01, lk, 50, 100.0, 1.5);
    assert!((g - expert_gamma(b, w, 1.0, lk, mean_lipschitz(lk, &[3.0]), 0.01)).abs() < 1e-12);
    let e = l.eta(&[2.0, 2.0], &[0.1, 0.3], &[g, g]).unwrap();
    assert!((e - (b * 0.2 + g)).abs() < 1e-12);
    assert_eq!(eta_practical(b, 0.2), 2.0 * b * 0.2);
    assert!(LemmaOne::se(&lo, &hi, 0.01, 0.01, 1.0, 1.5, &[0.5], 0.1).is_err());
    assert!(LemmaOne::se(&lo, &hi, 0.01, 0.01, 1.0, 1.5, &[0.5, 2.0], 0.0).is_err());
}
