//! Multi-output: one shared structure; outputs sharing a kernel equal independent
//! single-output runs; per-output kernels use their own factorisation.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;
use nalgebra::{DMatrix, DVector};

const N: usize = 1500;

fn targets(y: f64, x: &[f64], p: usize) -> Vec<f64> {
    (0..p)
        .map(|o| {
            if o == 0 {
                y
            } else {
                y * (o as f64 + 1.0) + x[o % x.len()].sin()
            }
        })
        .collect()
}

/// The (means, vars) of each predicted step of a run.
type Run = Vec<(Vec<f64>, Vec<f64>)>;

/// Runs a model over the first N KIN40K samples.
fn run(gp: &mut SkyGp, data: &common::Stream, p: usize, out: Option<usize>) -> Run {
    let mut res = Vec::new();
    let (mut mu, mut var) = (vec![0.0; gp.output_dim()], vec![0.0; gp.output_dim()]);
    for i in 0..N {
        let ys = targets(data.y[i], &data.x[i], p);
        let y = match out {
            Some(o) => vec![ys[o]],
            None => ys,
        };
        if i >= 1 {
            gp.predict(&data.x[i], &mut mu, &mut var).unwrap();
            res.push((mu.clone(), var.clone()));
        }
        let nv = vec![0.0; y.len()];
        gp.update(&data.x[i], &y, i as f64 * 0.01, &nv).unwrap();
    }
    res
}

fn cfg(variant: &str, preset: &str, hyper: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"variant": variant, "preset": preset, "hyper": hyper})
}

fn with_sigma(h: &serde_json::Value, sf: f64, sn: f64) -> serde_json::Value {
    let mut h = h.clone();
    h["sigma_f"] = sf.into();
    h["sigma_n"] = sn.into();
    h
}

/// Runs a two-output model with hyperparameters `h0` and `h1`, and a single-output model
/// of `h1` on the second output's targets; returns the two-output model's factor groups and
/// both runs.
fn pair_and_second_alone(
    variant: &str,
    preset: &str,
    h0: &serde_json::Value,
    h1: &serde_json::Value,
    data: &common::Stream,
) -> (usize, Run, Run) {
    let pair = serde_json::json!([h0, h1]);
    let mut multi = SkyGp::from_json(&cfg(variant, preset, pair), 8, 2).unwrap();
    let groups = multi.n_factor_groups();
    let m = run(&mut multi, data, 2, None);
    let mut single = SkyGp::from_json(&cfg(variant, preset, h1.clone()), 8, 1).unwrap();
    (groups, m, run(&mut single, data, 2, Some(1)))
}

#[test]
fn identical_outputs_equal_single_output_runs() {
    let data = common::kin40k();
    let p = 3;
    for variant in ["fast", "dense"] {
        for preset in ["reference", "recommended"] {
            let mut multi =
                SkyGp::from_json(&cfg(variant, preset, data.hyper.clone()), 8, p).unwrap();
            assert_eq!(multi.n_factor_groups(), 1);
            let m = run(&mut multi, &data, p, None);
            for o in 0..p {
                let mut single =
                    SkyGp::from_json(&cfg(variant, preset, data.hyper.clone()), 8, 1).unwrap();
                let s = run(&mut single, &data, p, Some(o));
                for (a, b) in m.iter().zip(&s) {
                    assert_eq!(a.0[o], b.0[0], "{variant}/{preset} output {o} mean");
                    assert_eq!(a.1[o], b.1[0], "{variant}/{preset} output {o} var");
                }
            }
        }
    }
}

#[test]
fn scaled_outputs_share_one_factorisation() {
    // Output 1 has 3× the signal and noise std: same lengthscales and σ_n²/σ_f².
    let data = common::kin40k();
    let h0 = data.hyper.clone();
    let (sf, sn) = (
        h0["sigma_f"].as_f64().unwrap(),
        h0["sigma_n"].as_f64().unwrap(),
    );
    let h1 = with_sigma(&h0, 3.0 * sf, 3.0 * sn);
    let (groups, m, s) = pair_and_second_alone("fast", "recommended", &h0, &h1, &data);
    assert_eq!(groups, 1);
    for (a, b) in m.iter().zip(&s) {
        assert!(
            (a.0[1] - b.0[0]).abs() <= 1e-9 * b.0[0].abs().max(1e-3),
            "mean {} vs {}",
            a.0[1],
            b.0[0]
        );
        assert!(
            (a.1[1] - b.1[0]).abs() <= 1e-9 * b.1[0].abs(),
            "var {} vs {}",
            a.1[1],
            b.1[0]
        );
    }
}

#[test]
fn per_output_noise_gets_its_own_factorisation() {
    // Same lengthscales, another noise ratio: own factor per expert; the structure
    // (ranking by lengthscale-scaled distance) is the same as a single-output run.
    let data = common::kin40k();
    let h0 = data.hyper.clone();
    let sf = h0["sigma_f"].as_f64().unwrap();
    let h1 = with_sigma(&h0, 0.7 * sf, 0.3);
    for variant in ["fast", "dense"] {
        let (groups, m, s) = pair_and_second_alone(variant, "reference", &h0, &h1, &data);
        assert_eq!(groups, 2);
        for (a, b) in m.iter().zip(&s) {
            assert_eq!(a.0[1], b.0[0], "{variant} mean");
            assert_eq!(a.1[1], b.1[0], "{variant} var");
        }
    }
}

#[test]
fn per_output_kernels_match_batch_gp_per_expert() {
    // Output 1: other lengthscales and the Matérn 5/2 formula. Each selected expert's
    // prediction for it must equal an exact GP on that expert's data.
    let data = common::kin40k();
    let h0 = data.hyper.clone();
    let ell1: Vec<f64> = (0..8).map(|j| 1.0 + 0.2 * j as f64).collect();
    let h1 = serde_json::json!({"sigma_f": 0.9, "sigma_n": 0.1, "lengthscales": ell1, "kernel": "matern52"});
    let mut gp = SkyGp::from_json(
        &cfg("fast", "recommended", serde_json::json!([h0, h1])),
        8,
        2,
    )
    .unwrap();
    assert_eq!(gp.n_factor_groups(), 2);
    run(&mut gp, &data, 2, None);
    let kern = gpn_gp_core::kernel::ArdKernel::matern52(0.9, &ell1).unwrap();
    use gpn_gp_core::kernel::Kernel;
    let (mut mu, mut var) = ([0.0; 2], [0.0; 2]);
    for q in N..N + 20 {
        let xq = &data.x[q];
        gp.predict(xq, &mut mu, &mut var).unwrap();
        let sel = gp.last_selected().to_vec();
        assert!(!sel.is_empty());
        for (j, &pos) in sel.iter().enumerate() {
            let (xs, ys, _) = gp.expert_data(pos, 1).unwrap();
            let n = ys.len();
            let row = |s: usize| &xs[s * 8..(s + 1) * 8];
            let k = DMatrix::from_fn(n, n, |a, b| {
                kern.value(row(a), row(b)) + if a == b { 0.01 } else { 0.0 }
            });
            let chol = nalgebra::Cholesky::new(k).unwrap();
            let kq = DVector::from_fn(n, |a, _| kern.value(row(a), xq));
            let mu_b = kq.dot(&chol.solve(&DVector::from_column_slice(ys)));
            let v = chol.l().solve_lower_triangular(&kq).unwrap();
            let var_b = 0.81 - v.dot(&v);
            assert!((gp.last_expert_means(1)[j] - mu_b).abs() < 1e-9 * mu_b.abs().max(1e-3));
            assert!(
                (gp.last_expert_vars(1)[j] - var_b.max(1e-12)).abs() < 1e-9 * var_b.abs().max(1e-6)
            );
        }
        // The aggregated output combines exactly these with its weights.
        let w = gp.last_weights(1);
        let s: f64 = w
            .iter()
            .zip(gp.last_expert_means(1))
            .map(|(a, b)| a * b)
            .sum();
        assert!((s - mu[1]).abs() < 1e-12 * mu[1].abs().max(1.0));
    }
}
