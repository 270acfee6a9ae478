//! The incremental spatio-temporal GP (GP-UCB, R-GP-UCB, TV-GP-UCB baselines) against a
//! dense recomputation.

use gpn_gp_core::kernel::{ArdKernel, Kernel};
use gpn_tvgp_bandit::hetero_gp::HeteroGp;
use gpn_tvgp_bandit::rng::SplitMix64;
use gpn_tvgp_bandit::time_kernel::TimeKernelGp;
use nalgebra::{DMatrix, DVector};

/// Dense posterior at (x, τ) with k̃ = (1−ε)^{|i−j|/2} k and noise σ².
fn dense(
    k: &ArdKernel,
    eps: f64,
    s2: f64,
    (xs, ts, ys): (&[f64], &[f64], &[f64]),
    q: f64,
    tau: f64,
) -> (f64, f64, f64) {
    let n = xs.len();
    let r = (1.0 - eps).sqrt();
    let kt = |a: f64, b: f64| r.powf((a - b).abs());
    let a = DMatrix::from_fn(n, n, |i, j| {
        kt(ts[i], ts[j]) * k.value(&[xs[i]], &[xs[j]]) + if i == j { s2 } else { 0.0 }
    });
    let kq = DVector::from_fn(n, |i, _| kt(tau, ts[i]) * k.value(&[xs[i]], &[q]));
    let inv = a.clone().try_inverse().expect("dense Gram is invertible");
    let m = (kq.transpose() * &inv * DVector::from_column_slice(ys))[(0, 0)];
    let v = k.value(&[q], &[q]) - (kq.transpose() * &inv * &kq)[(0, 0)];
    (m, v, a.determinant().ln() - n as f64 * s2.ln())
}

#[test]
fn incremental_grid_posterior_matches_dense_recomputation() {
    let k = ArdKernel::se(0.6, &[2.0]).unwrap();
    let grid: Vec<f64> = (0..21).map(|i| -10.0 + i as f64).collect();
    let mut rng = SplitMix64::new(8);
    for eps in [0.0, 0.03, 0.1] {
        let mut gp = TimeKernelGp::new(k.clone(), eps, 0.01, grid.clone(), 40).unwrap();
        let (mut xs, mut ts, mut ys) = (vec![], vec![], vec![]);
        for t in 1..=30 {
            let x = rng.uniform_in(-10.0, 10.0);
            let y = (0.3 * x).sin() + 0.1 * rng.normal();
            gp.push(&[x], y, t as f64).unwrap();
            xs.push(x);
            ts.push(t as f64);
            ys.push(y);
        }
        let tau = 31.0;
        let (mut m, mut v) = (vec![0.0; 21], vec![0.0; 21]);
        gp.posterior_on_grid(tau, &mut m, &mut v);
        for g in [0, 7, 13, 20] {
            let (md, vd, ld) = dense(&k, eps, 0.01, (&xs, &ts, &ys), grid[g], tau);
            assert!((m[g] - md).abs() < 1e-8, "ε={eps} g={g}: {} vs {md}", m[g]);
            assert!((v[g] - vd).abs() < 1e-8, "ε={eps} g={g}: {} vs {vd}", v[g]);
            assert!((gp.logdet_info() - ld).abs() < 1e-7 * ld.abs().max(1.0));
        }
        // Off-grid prediction agrees too.
        let (mp, vp) = gp.predict(&[2.345], tau);
        let (md, vd, _) = dense(&k, eps, 0.01, (&xs, &ts, &ys), 2.345, tau);
        assert!((mp - md).abs() < 1e-8 && (vp - vd).abs() < 1e-8);
    }
}

#[test]
fn eps_zero_is_gp_ucb_and_reset_forgets() {
    let k = ArdKernel::se(0.6, &[2.0]).unwrap();
    let grid = vec![-1.0, 0.0, 1.0];
    let mut gp = TimeKernelGp::new(k.clone(), 0.0, 0.01, grid.clone(), 10).unwrap();
    let xs = [0.5, -0.5, 0.1];
    let ys = [0.2, -0.1, 0.05];
    for (t, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
        gp.push(&[x], y, t as f64 + 1.0).unwrap();
    }
    let mut h = HeteroGp::new(k, 4);
    h.fit(&xs, &ys, &[0.01; 3]).unwrap();
    let (mut m, mut v) = ([0.0; 3], [0.0; 3]);
    gp.posterior_on_grid(100.0, &mut m, &mut v);
    for g in 0..3 {
        let (mh, vh) = h.predict(&[grid[g]]);
        assert!((m[g] - mh).abs() < 1e-12 && (v[g] - vh).abs() < 1e-12);
    }
    assert!((gp.logdet_info() - h.logdet_info()).abs() < 1e-10);
    gp.reset(4.0);
    assert!(gp.is_empty());
    gp.posterior_on_grid(5.0, &mut m, &mut v);
    assert!(m == [0.0; 3] && v.iter().all(|x| (x - 0.36).abs() < 1e-15));
    // Bad settings and full buffers are errors, not panics.
    assert!(TimeKernelGp::new(ArdKernel::se(1.0, &[1.0]).unwrap(), 1.0, 0.01, vec![], 2).is_err());
    assert!(TimeKernelGp::new(ArdKernel::se(1.0, &[1.0]).unwrap(), 0.1, 0.0, vec![], 2).is_err());
    let mut small =
        TimeKernelGp::new(ArdKernel::se(1.0, &[1.0]).unwrap(), 0.1, 0.01, vec![0.0], 1).unwrap();
    small.push(&[0.0], 1.0, 1.0).unwrap();
    assert!(small.push(&[0.0], 1.0, 2.0).is_err());
    assert!(small.push(&[0.0, 1.0], 1.0, 2.0).is_err());
}
