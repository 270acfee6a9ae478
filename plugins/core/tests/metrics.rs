//! Prequential SMSE/MSLL against hand computations and a naive, independent implementation
//! written straight from anchors/README.md §1.4.

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use gpn_gp_core::metrics::{MetricsConfig, MetricsError, Prequential};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f64::consts::PI;

/// Naive O(N²) reference for one target: the curves as the reference loop computes them.
fn naive(y: &[f64], mu: &[f64], var: &[f64], noise_var: f64, floor: f64) -> (Vec<f64>, Vec<f64>) {
    let n = y.len();
    let mean_all = y.iter().sum::<f64>() / n as f64;
    let var_all = y.iter().map(|v| (v - mean_all).powi(2)).sum::<f64>() / n as f64;
    let mut smse = vec![1.0; n];
    for i in 1..n {
        let prefix = &y[..=i];
        let m = prefix.iter().sum::<f64>() / (i + 1) as f64;
        let vp = prefix.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (i + 1) as f64;
        let sse: f64 = (1..=i).map(|j| (y[j] - mu[j]).powi(2)).sum();
        smse[i] = sse / (i as f64 * vp);
    }
    let nll: Vec<f64> = (0..n)
        .map(|j| {
            if j == 0 {
                0.0
            } else {
                let s2 = var[j].max(floor) + noise_var;
                0.5 * (2.0 * PI * s2).ln() + (y[j] - mu[j]).powi(2) / (2.0 * s2)
            }
        })
        .collect();
    let nll0: Vec<f64> = y
        .iter()
        .map(|yj| 0.5 * (2.0 * PI * var_all).ln() + (yj - mean_all).powi(2) / (2.0 * var_all))
        .collect();
    let msll = (0..n)
        .map(|i| (0..=i).map(|j| nll[j] - nll0[j]).sum::<f64>() / (i + 1) as f64)
        .collect();
    (smse, msll)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn hand_computed_three_steps() {
    // y = [1, 2, 0], μ_1 = 1.5, μ_2 = 1.0, var = [0.2, 0.0005], σ_n² = 0.01, floor 1e-3.
    let mut m = Prequential::new(MetricsConfig::new(vec![0.01]));
    m.push(&[1.0], None).unwrap();
    m.push(&[2.0], Some((&[1.5], &[0.2]))).unwrap();
    m.push(&[0.0], Some((&[1.0], &[0.0005]))).unwrap();
    let r = m.finish().unwrap();
    let t = r.targets[0];
    // SMSE_1 = 0.25 / (1 · var_pop(1, 2) = 0.25) = 1; SMSE_2 = (0.25 + 1) / (2 · 2/3) = 0.9375.
    assert!(close(t.smse_final, 0.9375, 1e-14));
    assert!(close(t.smse_curve_mean, (1.0 + 1.0 + 0.9375) / 3.0, 1e-14));
    // MSLL: m = 1, v = 2/3.
    let v = 2.0 / 3.0;
    let b = |y: f64| 0.5 * (2.0 * PI * v).ln() + (y - 1.0).powi(2) / (2.0 * v);
    let s1 = 0.2 + 0.01;
    let s2 = 1e-3 + 0.01; // floored
    let nll1 = 0.5 * (2.0 * PI * s1).ln() + 0.25 / (2.0 * s1);
    let nll2 = 0.5 * (2.0 * PI * s2).ln() + 1.0 / (2.0 * s2);
    let msll0 = -b(1.0);
    let msll1 = (-b(1.0) + nll1 - b(2.0)) / 2.0;
    let msll2 = (-b(1.0) + nll1 - b(2.0) + nll2 - b(0.0)) / 3.0;
    assert!(close(t.msll_final, msll2, 1e-13));
    assert!(close(
        t.msll_curve_mean,
        (msll0 + msll1 + msll2) / 3.0,
        1e-13
    ));
    assert!(close(t.target_mean, 1.0, 1e-15));
    assert!(close(t.target_var, v, 1e-15));
}

#[test]
fn matches_naive_reference_multi_target() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let n = 400;
    let p = 3;
    let noise = [0.01, 0.3, 2.0];
    // Large offsets on target 2 exercise the cancellation guard.
    let offsets = [0.0, -3.0, 1.0e4];
    let scales = [1.0, 0.1, 5.0];
    let mut ys = vec![vec![0.0; n]; p];
    let mut mus = vec![vec![0.0; n]; p];
    let mut vars = vec![vec![0.0; n]; p];
    for i in 0..n {
        for t in 0..p {
            let f = (i as f64 * 0.05 + t as f64).sin() * scales[t];
            ys[t][i] = offsets[t] + f + rng.random_range(-0.5..0.5) * scales[t];
            mus[t][i] = offsets[t] + f + rng.random_range(-0.2..0.2) * scales[t];
            vars[t][i] = rng.random_range(0.0..0.01) * scales[t];
        }
    }
    let mut acc = Prequential::with_curves(MetricsConfig::new(noise.to_vec()), n);
    for i in 0..n {
        let y: Vec<f64> = (0..p).map(|t| ys[t][i]).collect();
        let mu: Vec<f64> = (0..p).map(|t| mus[t][i]).collect();
        let var: Vec<f64> = (0..p).map(|t| vars[t][i]).collect();
        let pred = if i == 0 {
            None
        } else {
            Some((&mu[..], &var[..]))
        };
        acc.push(&y, pred).unwrap();
    }
    let r = acc.finish().unwrap();
    let curves = r.curves.as_ref().unwrap();
    for t in 0..p {
        let (smse, msll) = naive(&ys[t], &mus[t], &vars[t], noise[t], 1e-3);
        let got = r.targets[t];
        assert!(close(got.smse_final, smse[n - 1], 1e-10), "t{t} smse final");
        assert!(
            close(got.smse_curve_mean, mean(&smse), 1e-10),
            "t{t} smse mean"
        );
        assert!(
            close(got.msll_final, msll[n - 1], 1e-9),
            "t{t}: {} vs {}",
            got.msll_final,
            msll[n - 1]
        );
        assert!(
            close(got.msll_curve_mean, mean(&msll), 1e-9),
            "t{t} msll mean"
        );
        for i in [0, 1, 2, 57, n - 1] {
            assert!(close(curves.smse_at(i, t).unwrap(), smse[i], 1e-10));
            assert!(close(curves.msll_at(i, t).unwrap(), msll[i], 1e-9));
        }
    }
}

#[test]
fn floor_and_noise_are_configurable() {
    let run = |floor: f64| {
        let mut m = Prequential::new(MetricsConfig::new(vec![0.0]).with_var_floor(floor));
        m.push(&[0.0], None).unwrap();
        m.push(&[1.0], Some((&[0.9], &[1e-6]))).unwrap();
        m.push(&[-1.0], Some((&[-0.8], &[1e-6]))).unwrap();
        m.finish().unwrap().targets[0]
    };
    let (ys, mus, vars) = ([0.0, 1.0, -1.0], [0.0, 0.9, -0.8], [0.0, 1e-6, 1e-6]);
    for floor in [1e-3, 1e-8] {
        let (_, msll) = naive(&ys, &mus, &vars, 0.0, floor);
        assert!(close(run(floor).msll_final, msll[2], 1e-12));
    }
    assert!(run(1e-3).msll_final != run(1e-8).msll_final);
}

#[test]
fn single_sample_and_errors() {
    let mut m = Prequential::new(MetricsConfig::new(vec![0.1, 0.1]));
    assert_eq!(m.finish(), Err(MetricsError::Empty));
    assert!(matches!(
        m.push(&[1.0], None),
        Err(MetricsError::Dimension { .. })
    ));
    m.push(&[1.0, 2.0], None).unwrap();
    let r = m.finish().unwrap();
    assert_eq!(r.targets[0].smse_final, 1.0);
    assert_eq!(r.targets[0].smse_curve_mean, 1.0);
    assert!(r.targets[0].msll_final.is_nan(), "v = 0 gives NaN MSLL");
    assert_eq!(
        m.push(&[1.0, 2.0], None),
        Err(MetricsError::MissingPrediction { step: 1 })
    );
    assert!(matches!(
        m.push(&[1.0, f64::NAN], Some((&[0.0, 0.0], &[1.0, 1.0]))),
        Err(MetricsError::NonFinite {
            what: "target",
            step: 1,
            target: 1
        })
    ));
    assert!(matches!(
        m.push(&[1.0, 2.0], Some((&[0.0, 0.0], &[1.0, f64::INFINITY]))),
        Err(MetricsError::NonFinite {
            what: "predicted variance",
            ..
        })
    ));
    // Constant targets so far: SMSE_i defined as 1.
    m.push(&[1.0, 2.0], Some((&[0.5, 2.0], &[1.0, 1.0])))
        .unwrap();
    assert_eq!(m.smse_current(0), Some(1.0));
    let bad = Prequential::new(MetricsConfig::new(vec![-1.0]));
    assert!(matches!(bad.check(), Err(MetricsError::Config(_))));
}
