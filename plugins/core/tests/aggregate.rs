//! Aggregation rules: M = 1 identity (spec §9 check 2), BCM precision (check 3), reference
//! formulas against hand-computed values, Σ ω_i μ_i = μ̃.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use gpn_gp_core::aggregate::Aggregation;

const SF2: f64 = 1.4578;

fn run(rule: Aggregation, mu: &[f64], var: &[f64]) -> (f64, f64, Vec<f64>) {
    let mut w = vec![0.0; mu.len()];
    let (m, v) = rule.combine(mu, var, SF2, &mut w);
    (m, v, w)
}

#[test]
fn single_expert_is_returned_unchanged() {
    for rule in Aggregation::ALL {
        if rule == Aggregation::RBCM {
            continue; // w_1 = ½ ln(σ_*²/σ_1²) ≠ 1: not an identity by construction.
        }
        let (m, v, w) = run(rule, &[0.7], &[0.21]);
        assert!((m - 0.7).abs() < 1e-8, "{rule:?} mean {m}");
        assert!((v - 0.21).abs() < 1e-8 * 0.21 + 1e-15, "{rule:?} var {v}");
        assert!((w[0] - 1.0).abs() < 1e-8, "{rule:?} weight {}", w[0]);
    }
    // The reference rules agree to within their 1e-9 regularisers; reference gPoE exactly.
    assert_eq!(run(Aggregation::GPoERef, &[0.7], &[0.21]).0, 0.7);
}

#[test]
fn rbcm_single_expert_follows_its_formula() {
    let (m, v, w) = run(Aggregation::RBCM, &[0.7], &[0.21]);
    let beta = 0.5 * (SF2.ln() - 0.21f64.ln());
    let prec = beta / 0.21 + (1.0 - beta) / SF2;
    assert!((v - 1.0 / prec).abs() < 1e-14);
    assert!((m - beta / 0.21 * 0.7 / prec).abs() < 1e-14);
    assert!((w[0] - beta / 0.21 / prec).abs() < 1e-14);
}

#[test]
fn bcm_precision_at_least_prior_precision() {
    let vars = [0.01, 0.3, 1.2, SF2, SF2 * 0.999_999];
    for m in 1..=vars.len() {
        let mu = vec![0.1; m];
        for rule in [Aggregation::BCM, Aggregation::RBCM] {
            let (_, v, _) = run(rule, &mu, &vars[..m]);
            assert!(
                1.0 / v >= 1.0 / SF2 * (1.0 - 1e-14),
                "{rule:?} M={m}: {}",
                1.0 / v
            );
        }
        // Reference BCM: exact up to its 1e-9 regularisers.
        let (_, v, _) = run(Aggregation::BCMRef, &mu, &vars[..m]);
        assert!(
            1.0 / v >= 1.0 / SF2 - m as f64 * 1e-9,
            "BCMRef M={m}: {}",
            1.0 / v
        );
    }
    // All experts at the prior: BCM gives the prior exactly.
    let (_, v, _) = run(Aggregation::BCM, &[0.0; 3], &[SF2; 3]);
    assert!((v - SF2).abs() < 1e-12);
}

#[test]
fn reference_formulas_match_hand_computation() {
    let mu = [0.5, -0.2, 1.0];
    let var = [0.1, 0.4, 0.2];
    // BCMRef.
    let q: Vec<f64> = var.iter().map(|v| 1.0 / (v + 1e-9)).collect();
    let p = q.iter().sum::<f64>() - 2.0 / SF2;
    let num: f64 = q.iter().zip(&mu).map(|(a, b)| a * b).sum();
    let (m, v, w) = run(Aggregation::BCMRef, &mu, &var);
    assert!((m - num / (p + 1e-9)).abs() < 1e-14);
    assert!((v - 1.0 / (p + 1e-9)).abs() < 1e-14);
    assert!((w[1] - q[1] / (p + 1e-9)).abs() < 1e-14);
    // Numbers by hand: P = 10 + 2.5 + 5 − 2/1.4578 = 16.128069694...
    assert!((1.0 / v - 16.128_069_694).abs() < 1e-6);
    // GPoERef: β = 1 − σ²/(0.4 + 1e-9) = [0.75, 0, 0.5] (up to 1e-9).
    let (m, v, w) = run(Aggregation::GPoERef, &mu, &var);
    let p = 0.75 / 0.1 + 0.5 / 0.2; // 10
    assert!((v - 0.1).abs() < 1e-8);
    assert!((m - (0.75 / 0.1 * 0.5 + 0.5 / 0.2 * 1.0) / p).abs() < 1e-8); // 0.625
    assert!((m - 0.625).abs() < 1e-8);
    assert!(w[1].abs() < 1e-8);
    // MoERef: plain averages, variance clipped at 1e-6.
    let (m, v, _) = run(Aggregation::MoERef, &mu, &var);
    assert!((m - 1.3 / 3.0).abs() < 1e-15);
    assert!((v - 0.7 / 3.0).abs() < 1e-15);
    let (_, v, _) = run(Aggregation::MoERef, &[1.0, 2.0], &[0.0, 1e-7]);
    assert_eq!(v, 1e-6);
}

#[test]
fn reference_gpoe_guard_when_all_variances_equal() {
    let (m, v, w) = run(Aggregation::GPoERef, &[0.3, 0.5], &[SF2, SF2]);
    assert_eq!((m, v), (0.3, SF2));
    assert_eq!(w, vec![1.0, 0.0]);
}

#[test]
fn textbook_forms() {
    let mu = [0.5, -0.2];
    let var = [0.1, 0.4];
    let (m, v, _) = run(Aggregation::MoE, &mu, &var);
    assert!((m - 0.15).abs() < 1e-15);
    assert!((v - (0.5 * (0.1 + 0.25) + 0.5 * (0.4 + 0.04) - 0.0225)).abs() < 1e-15);
    let (m, v, _) = run(Aggregation::PoE, &mu, &var);
    assert!((v - 1.0 / 12.5).abs() < 1e-15);
    assert!((m - (5.0 - 0.5) / 12.5).abs() < 1e-15);
    let (m2, v2, _) = run(Aggregation::GPoE, &mu, &var);
    assert!((v2 - 2.0 / 12.5).abs() < 1e-15);
    assert!((m2 - m).abs() < 1e-15);
    let (_, v, _) = run(Aggregation::BCM, &mu, &var);
    assert!((1.0 / v - (12.5 - 1.0 / SF2)).abs() < 1e-12);
}

#[test]
fn weights_reproduce_the_mean() {
    let mu = [0.5, -0.2, 1.0, 0.05];
    let var = [0.1, 0.4, 0.2, 1.3];
    for rule in Aggregation::ALL {
        let (m, _, w) = run(rule, &mu, &var);
        let s: f64 = w.iter().zip(&mu).map(|(a, b)| a * b).sum();
        assert!((s - m).abs() < 1e-12, "{rule:?}");
        assert!(w.iter().all(|x| *x >= 0.0), "{rule:?}");
        assert_eq!(Aggregation::from_name(rule.name()), Some(rule));
    }
    let mut w = [];
    assert_eq!(Aggregation::BCM.combine(&[], &[], SF2, &mut w), (0.0, SF2));
}
