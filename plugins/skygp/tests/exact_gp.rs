//! Spec §9 check 1: an expert built by rank-one extensions equals the batch exact GP
//! (factor, mean and variance to ~1e-10 relative).
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use common::se;
use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;
use nalgebra::{DMatrix, DVector};

#[test]
fn rank_one_expert_equals_batch_gp() {
    let (d, n) = (3, 50);
    let ell = [0.8, 1.3, 0.5];
    let (sf, sn) = (1.3, 0.05);
    let cfg = serde_json::json!({
        "variant": "fast", "n_cal": 1, "aggregation": "gpoe_ref",
        "hyper": {"sigma_f": sf, "sigma_n": sn, "lengthscales": ell}
    });
    let mut gp = SkyGp::from_json(&cfg, d, 1).unwrap();
    let xs: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let t = i as f64;
            vec![
                (0.37 * t).sin() * 0.5,
                (0.11 * t).cos() * 0.5,
                (0.23 * t).sin() * 0.3,
            ]
        })
        .collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|x| x[0] * 2.0 + x[1].sin() - x[2] * x[0])
        .collect();
    let (mut mu, mut var) = ([0.0], [0.0]);
    for (x, y) in xs.iter().zip(&ys) {
        gp.predict(x, &mut mu, &mut var).unwrap();
        gp.update(x, &[*y], 0.0, &[sn * sn]).unwrap();
    }
    assert_eq!(gp.n_experts(), 1, "all points fit one expert");
    let (sf2, sn2) = (sf * sf, sn * sn);
    let k = DMatrix::from_fn(n, n, |i, j| {
        se(&xs[i], &xs[j], sf2, &ell) + if i == j { sn2 } else { 0.0 }
    });
    let chol = nalgebra::Cholesky::new(k).unwrap();
    let l_batch = chol.l();
    let l_inc = gp.expert_factor(0, 0).unwrap().to_matrix();
    let rel = (&l_inc - &l_batch).amax() / l_batch.amax();
    assert!(rel < 1e-10, "factor relative error {rel:e}");
    let alpha = chol.solve(&DVector::from_column_slice(&ys));
    for t in 0..20 {
        let xq = [0.03 * t as f64 - 0.3, 0.2 - 0.02 * t as f64, 0.1];
        let kq = DVector::from_fn(n, |i, _| se(&xs[i], &xq, sf2, &ell));
        let mu_b = kq.dot(&alpha);
        let v = l_batch.solve_lower_triangular(&kq).unwrap();
        let var_b = sf2 - v.dot(&v);
        gp.predict(&xq, &mut mu, &mut var).unwrap();
        assert!(
            (mu[0] - mu_b).abs() <= 1e-10 * mu_b.abs().max(1e-3),
            "mean {} vs {mu_b}",
            mu[0]
        );
        assert!(
            (var[0] - var_b).abs() <= 1e-10 * var_b.abs().max(1e-6),
            "var {} vs {var_b}",
            var[0]
        );
    }
}
