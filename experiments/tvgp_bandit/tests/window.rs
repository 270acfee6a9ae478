//! Uncertainty injection and the discard rule (spec §1.2, §1.4, §7 #2–#3, §8 #4).

use gpn_gp_core::drift::DriftModel;
use gpn_tvgp_bandit::window::{Injection, Threshold};

#[test]
fn the_paper_variance_is_sigma2_times_age2_plus_one() {
    let inj = Injection::paper(0.01);
    for (t, i) in [(1, 1), (10, 7), (500, 1)] {
        let a = (t - i) as f64;
        let v = 0.01 * (a * a + 1.0);
        assert!((inj.var(0.01, t, i) - v).abs() <= 1e-14 * v, "t={t} i={i}");
    }
    // c_drift is general (§7 #2): Δ²/3 with Δ = 1.
    let d = Injection::quadratic(1.0 / 3.0, Threshold::Never);
    assert!((d.var(0.01, 4, 1) - (0.01 + 3.0)).abs() < 1e-12);
    // Lookahead 1 (§7 #14): the newest sample already carries σ² + c_drift.
    let mut la = Injection::paper(0.01);
    la.lookahead = 1;
    assert!((la.var(0.01, 5, 5) - 0.02).abs() < 1e-15);
}

#[test]
fn the_window_table_of_section_1_4_is_reproduced() {
    // σ² cancels: the table holds for any σ².
    for sigma2 in [0.01, 1.0] {
        let inj = Injection::paper(sigma2);
        let cases: [(usize, &[usize]); 9] = [
            (1, &[0]),
            (2, &[0]), // ln 2 < 1: g = σ², only the newest (kept by the rule)
            (3, &[0]),
            (7, &[0]),
            (8, &[0, 1]),
            (148, &[0, 1]),
            (149, &[0, 1, 2]),
            (22026, &[0, 1, 2]),
            (22027, &[0, 1, 2, 3]),
        ];
        for (t, ages) in cases {
            assert_eq!(
                inj.kept_ages(sigma2, t),
                ages.to_vec(),
                "t = {t}, σ² = {sigma2}"
            );
        }
        // At most 3 recent points in the T = 500 experiment.
        assert!((1..=500).all(|t| inj.kept_ages(sigma2, t).len() <= 3));
    }
}

#[test]
fn discard_edge_cases_of_decision_3() {
    // Non-strict: v = g is kept. σ² = 1, c = 1, g ≡ 2: age 1 gives v = 2 exactly.
    let inj = Injection::quadratic(1.0, Threshold::Constant(2.0));
    assert_eq!(inj.var(1.0, 5, 4), 2.0);
    assert!(inj.keep(1.0, 5, 4, false));
    assert!(!inj.keep(1.0, 5, 3, false)); // v = 5
    // Just above the threshold leaves.
    let tight = Injection::quadratic(1.0, Threshold::Constant(2.0 - 1e-12));
    assert!(!tight.keep(1.0, 5, 4, false));
    // The newest always stays, even when g(t) < σ² (t = 1, 2 under the paper's g) or the
    // threshold is absurd.
    let paper = Injection::paper(0.01);
    assert_eq!(paper.g(1), Some(0.01));
    assert_eq!(paper.g(2), Some(0.01));
    assert!(paper.keep(0.01, 1, 1, true));
    assert!(!paper.keep(0.01, 2, 1, false));
    let zero = Injection::quadratic(1.0, Threshold::Constant(0.0));
    assert!(zero.keep(1.0, 3, 3, true));
    assert!(!zero.keep(1.0, 3, 3, false));
    // Without a window nothing leaves.
    let never = Injection::quadratic(1.0, Threshold::Never);
    assert!(never.keep(1.0, 10_000, 1, false));
    assert_eq!(never.kept_ages(1.0, 50).len(), 50);
}

#[test]
fn the_ratio_threshold_is_the_plugins_cap() {
    let mut inj = Injection::with_model(DriftModel::Linear { q_per_s: 0.5 }, Threshold::Ratio);
    inj.drift.max_var_ratio = 10.0;
    // v = 1 + 0.5 a ≤ 10 ⇔ a ≤ 18.
    assert!(inj.keep(1.0, 20, 2, false));
    assert!(!inj.keep(1.0, 20, 1, false));
    assert_eq!(inj.drift.max_age_s(1.0), 18.0);
    // Exponential injection = W-GP-UCB weights: v = σ² γ^{−age}.
    let gamma: f64 = 0.9;
    let w = Injection::with_model(
        DriftModel::Exponential {
            tau_s: -1.0 / gamma.ln(),
        },
        Threshold::Never,
    );
    assert!((w.var(0.01, 13, 3) - 0.01 * gamma.powi(-10)).abs() < 1e-12);
}
