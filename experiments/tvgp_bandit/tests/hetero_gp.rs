//! The heteroscedastic GP of the tvgp harness (spec §1.3) against dense recomputation, and
//! the spec's checklist items §8 #1–#3.

use gpn_gp_core::kernel::{ArdKernel, Kernel};
use gpn_gp_core::model::ModelError;
use gpn_tvgp_bandit::TvgpError;
use gpn_tvgp_bandit::hetero_gp::{HeteroGp, merge_duplicates};
use gpn_tvgp_bandit::rng::SplitMix64;
use nalgebra::{DMatrix, DVector};

fn kernel() -> ArdKernel {
    ArdKernel::se(0.7, &[1.3, 0.8]).expect("valid SE kernel")
}

fn data(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut r = SplitMix64::new(seed);
    let x: Vec<f64> = (0..2 * n).map(|_| r.uniform_in(-3.0, 3.0)).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| (x[2 * i]).sin() + 0.3 * x[2 * i + 1])
        .collect();
    let v: Vec<f64> = (0..n).map(|_| 0.01 * (1.0 + 50.0 * r.uniform())).collect();
    (x, y, v)
}

/// Dense μ, σ² and ln det(Σ + K) − ln det Σ, straight from eq. 11–12.
fn dense(k: &ArdKernel, x: &[f64], y: &[f64], v: &[f64], q: &[f64]) -> (f64, f64, f64) {
    let n = y.len();
    let row = |i: usize| &x[2 * i..2 * i + 2];
    let kk = DMatrix::from_fn(n, n, |i, j| k.value(row(i), row(j)));
    let sigma = DMatrix::from_diagonal(&DVector::from_column_slice(v));
    let a = &kk + &sigma;
    let inv = a.clone().try_inverse().expect("dense K + Σ is invertible");
    let kq = DVector::from_fn(n, |i, _| k.value(row(i), q));
    let mean = (kq.transpose() * &inv * DVector::from_column_slice(y))[(0, 0)];
    let var = k.value(q, q) - (kq.transpose() * &inv * &kq)[(0, 0)];
    let logdet = a.determinant().ln() - v.iter().map(|x| x.ln()).sum::<f64>();
    (mean, var, logdet)
}

#[test]
fn matches_the_dense_formulas_with_per_sample_noise() {
    let k = kernel();
    let (x, y, v) = data(30, 1);
    let mut gp = HeteroGp::new(k.clone(), 4); // grows past its capacity
    gp.fit(&x, &y, &v).unwrap();
    for q in [[0.1, -0.2], [2.5, 1.0], [-5.0, 4.0]] {
        let (m, s2) = gp.predict(&q);
        let (md, s2d, ld) = dense(&k, &x, &y, &v, &q);
        assert!((m - md).abs() < 1e-9, "{m} vs {md}");
        assert!((s2 - s2d).abs() < 1e-9, "{s2} vs {s2d}");
        assert!((gp.logdet_info() - ld).abs() < 1e-8 * ld.abs().max(1.0));
    }
    assert_eq!(gp.jitter(), 0.0);
}

#[test]
fn equal_noise_gives_the_homoscedastic_gp() {
    // §8 #1: Σ = σ²I — against the textbook K + σ²I form (to 1e-10).
    let k = kernel();
    let (x, y, _) = data(25, 2);
    let v = vec![0.01; 25];
    let mut gp = HeteroGp::new(k.clone(), 32);
    gp.fit(&x, &y, &v).unwrap();
    let (md, s2d, ld) = dense(&k, &x, &y, &v, &[0.3, 0.3]);
    let (m, s2) = gp.predict(&[0.3, 0.3]);
    assert!((m - md).abs() < 1e-10 && (s2 - s2d).abs() < 1e-10);
    // §8 #3: whitened logdet = ln det(Σ + K) − ln det Σ.
    assert!((gp.logdet_info() - ld).abs() < 1e-9);
}

#[test]
fn a_huge_variance_is_the_same_as_removing_the_sample() {
    // §8 #2: v → 1e12 ≈ removal (to 1e-6).
    let k = kernel();
    let (x, mut y, mut v) = data(20, 3);
    y[7] = 50.0; // an absurd target that must not matter
    v[7] = 1e12;
    let mut with = HeteroGp::new(k.clone(), 32);
    with.fit(&x, &y, &v).unwrap();
    let keep: Vec<usize> = (0..20).filter(|&i| i != 7).collect();
    let xr: Vec<f64> = keep
        .iter()
        .flat_map(|&i| [x[2 * i], x[2 * i + 1]])
        .collect();
    let yr: Vec<f64> = keep.iter().map(|&i| y[i]).collect();
    let vr: Vec<f64> = keep.iter().map(|&i| v[i]).collect();
    let mut without = HeteroGp::new(k, 32);
    without.fit(&xr, &yr, &vr).unwrap();
    for q in [[x[14], x[15]], [0.0, 0.0], [1.0, -2.0]] {
        let (a, b) = (with.predict(&q), without.predict(&q));
        assert!(
            (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6,
            "{a:?} {b:?}"
        );
    }
    assert!((with.logdet_info() - without.logdet_info()).abs() < 1e-6);
}

#[test]
fn merging_duplicates_changes_neither_posterior_nor_logdet() {
    let k = kernel();
    let (mut x, y, v) = data(24, 4);
    // Make samples 3, 9, 17 share a location, and 5, 6 another one.
    for i in [9, 17] {
        x[2 * i] = x[6];
        x[2 * i + 1] = x[7];
    }
    x[12] = x[10];
    x[13] = x[11];
    let merged = merge_duplicates(&x, &y, &v, 2, 1e-12).unwrap();
    assert_eq!(merged.y.len(), 21);
    let mut full = HeteroGp::new(k.clone(), 32);
    full.fit(&x, &y, &v).unwrap();
    let mut small = HeteroGp::new(k, 32);
    small.fit(&merged.x, &merged.y, &merged.var).unwrap();
    for q in [[x[6], x[7]], [0.5, 0.5], [-2.0, 1.0]] {
        let (a, b) = (full.predict(&q), small.predict(&q));
        assert!(
            (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9,
            "{a:?} {b:?}"
        );
    }
    assert!((full.logdet_info() - small.logdet_info()).abs() < 1e-9);
    // The merged sample: precision-weighted target, summed precision.
    let group = [3usize, 9, 17];
    let p: f64 = group.iter().map(|&i| 1.0 / v[i]).sum();
    let yw: f64 = group.iter().map(|&i| y[i] / v[i]).sum::<f64>() / p;
    let g = (0..merged.y.len())
        .find(|&j| merged.x[2 * j] == x[6] && merged.x[2 * j + 1] == x[7])
        .unwrap();
    assert!((merged.var[g] - 1.0 / p).abs() < 1e-15 && (merged.y[g] - yw).abs() < 1e-12);
}

#[test]
fn empty_model_is_the_prior_and_bad_input_is_refused() {
    let mut gp = HeteroGp::new(kernel(), 4);
    let (m, v) = gp.predict(&[0.0, 0.0]);
    assert!(m == 0.0 && (v - 0.49).abs() < 1e-15);
    assert_eq!(gp.logdet_info(), 0.0);
    gp.fit(&[], &[], &[]).unwrap();
    assert!(gp.is_empty());
    assert!(matches!(
        gp.fit(&[0.0], &[1.0], &[1.0]),
        Err(TvgpError::Input(ModelError::Dimension { .. }))
    ));
    assert!(matches!(
        gp.fit(&[0.0, 0.0], &[1.0], &[1.0, 2.0]),
        Err(TvgpError::Input(ModelError::Dimension { .. }))
    ));
    assert!(matches!(
        gp.fit(&[0.0, f64::NAN], &[1.0], &[1.0]),
        Err(TvgpError::Input(ModelError::NonFinite { .. }))
    ));
    assert!(matches!(
        gp.fit(&[0.0, 0.0], &[1.0], &[0.0]),
        Err(TvgpError::BadVariance { index: 0, .. })
    ));
    assert!(matches!(
        gp.fit(&[0.0, 0.0], &[1.0], &[f64::INFINITY]),
        Err(TvgpError::Input(ModelError::NonFinite { .. }))
    ));
    assert!(merge_duplicates(&[0.0], &[1.0, 2.0], &[1.0, 1.0], 1, 0.0).is_err());
}
