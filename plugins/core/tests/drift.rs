//! The drift model of uncertainty injection (tvgp spec §1.2, §6.1) and the greedy
//! pivoted-Cholesky selection (§2.4).

use gpn_gp_core::drift::{Drift, DriftModel, greedy_pivoted_cholesky};
use serde_json::json;

#[test]
fn config_keys_parse_and_bad_ones_are_refused() {
    assert_eq!(Drift::from_config(&json!({})).unwrap(), None);
    assert_eq!(Drift::from_config(&json!({"drift": null})).unwrap(), None);
    assert_eq!(
        Drift::from_config(&json!({"drift": {"model": "none"}})).unwrap(),
        None
    );
    let d = Drift::from_config(&json!({"drift": {"kappa_per_s": 0.5}}))
        .unwrap()
        .unwrap();
    assert_eq!(d.model, DriftModel::Quadratic { kappa_per_s: 0.5 });
    assert_eq!((d.max_var_ratio, d.refresh_hz), (100.0, 10.0));
    let d = Drift::from_config(&json!({"drift": {"model": "linear", "q_per_s": 2.0, "max_var_ratio": 10, "refresh_hz": 5}}))
        .unwrap()
        .unwrap();
    assert_eq!(d.model, DriftModel::Linear { q_per_s: 2.0 });
    assert!(d.grows());
    let d = Drift::from_config(&json!({"drift": {"model": "linear", "q_per_s": 0}}))
        .unwrap()
        .unwrap();
    assert_eq!(d.model, DriftModel::Linear { q_per_s: 0.0 });
    assert!(!d.grows(), "q = 0 adds no variance");
    assert_eq!(d.var(0.01, 1e9), 0.01);
    assert!(!d.expired(0.01, 1e12), "nothing expires without growth");
    for bad in [
        json!({"drift": 3}),
        json!({"drift": {"model": "quadratic"}}),
        json!({"drift": {"model": "cubic", "kappa_per_s": 1}}),
        json!({"drift": {"kappa_per_s": -1}}),
        json!({"drift": {"kappa_per_s": 0}}),
        json!({"drift": {"model": "linear", "q_per_s": -1}}),
        json!({"drift": {"model": "linear"}}),
        json!({"drift": {"kappa_per_s": 1, "max_var_ratio": 0.5}}),
        json!({"drift": {"kappa_per_s": 1, "speed": 2}}),
    ] {
        assert!(Drift::from_config(&bad).is_err(), "{bad} should be refused");
    }
}

#[test]
fn variance_grows_as_each_model_says_and_expiry_matches_the_max_age() {
    let q = Drift::from_config(&json!({"drift": {"kappa_per_s": 0.1, "max_var_ratio": 10}}))
        .unwrap()
        .unwrap();
    assert!((q.var(0.01, 2.0) - (0.01 + 0.04)).abs() < 1e-15);
    assert_eq!(q.var(0.01, -5.0), 0.01, "negative ages count as zero");
    let l = Drift::from_config(
        &json!({"drift": {"model": "linear", "q_per_s": 0.01, "max_var_ratio": 10}}),
    )
    .unwrap()
    .unwrap();
    assert!((l.var(0.01, 3.0) - 0.04).abs() < 1e-15);
    let e = Drift::from_config(
        &json!({"drift": {"model": "exponential", "tau_s": 2.0, "max_var_ratio": 10}}),
    )
    .unwrap()
    .unwrap();
    assert!((e.var(0.01, 2.0) - 0.01 * std::f64::consts::E).abs() < 1e-15);
    for d in [q, l, e] {
        let a = d.max_age_s(0.01);
        assert!(!d.expired(0.01, a * 0.999), "{d:?} at {a}");
        assert!(d.expired(0.01, a * 1.001), "{d:?} at {a}");
    }
    // The spec's worked numbers: σ_n = 0.05, κ = 4e-4 N·m/s, v_max = 10 σ_n² → ≈ 375 s.
    let s = Drift::from_config(&json!({"drift": {"kappa_per_s": 4e-4, "max_var_ratio": 10}}))
        .unwrap()
        .unwrap();
    assert!(
        (s.max_age_s(0.0025) - 375.0).abs() < 1.0,
        "{}",
        s.max_age_s(0.0025)
    );
}

fn se(a: &[f64], b: &[f64]) -> f64 {
    (-0.5 * a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>()).exp()
}

#[test]
fn pivoted_cholesky_picks_spread_points_and_matches_the_residual_it_claims() {
    // Three tight clusters: the first three picks are one point from each.
    let mut pts = Vec::new();
    for c in [0.0, 10.0, 20.0] {
        for k in 0..5 {
            pts.push(c + 0.01 * k as f64);
        }
    }
    let chosen = greedy_pivoted_cholesky(&pts, 1, 3, 1e-9, se);
    let mut clusters: Vec<usize> = chosen.iter().map(|&i| i / 5).collect();
    clusters.sort_unstable();
    assert_eq!(clusters, vec![0, 1, 2]);
    // Early stop: once every point is explained to the tolerance.
    let all = greedy_pivoted_cholesky(&pts, 1, 15, 1e-2, se);
    assert_eq!(all.len(), 3, "{all:?}");
    // Against a direct computation: after picking S, the residual variance of point i is
    // k(i,i) − k_iS K_SS⁻¹ k_Si; the next pick maximises it.
    let pts2: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin() * 3.0).collect();
    let picks = greedy_pivoted_cholesky(&pts2, 1, 4, 0.0, se);
    for step in 1..picks.len() {
        let s = &picks[..step];
        let kss = nalgebra::DMatrix::from_fn(step, step, |a, b| se(&[pts2[s[a]]], &[pts2[s[b]]]));
        let inv = kss.try_inverse().expect("invertible");
        let resid = |i: usize| {
            let k = nalgebra::DVector::from_fn(step, |a, _| se(&[pts2[s[a]]], &[pts2[i]]));
            1.0 - (k.transpose() * &inv * &k)[(0, 0)]
        };
        let best = (0..12)
            .filter(|i| !s.contains(i))
            .max_by(|a, b| resid(*a).total_cmp(&resid(*b)))
            .unwrap();
        assert_eq!(picks[step], best, "step {step}");
    }
}
