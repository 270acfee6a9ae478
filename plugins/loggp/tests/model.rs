//! LoG-GP against independent references and its own invariants (spec §6): one leaf is the
//! dense GP; the mixture is continuous across overlaps; splits keep every point; a full tree
//! replaces or drops as configured; saved states predict and learn bit for bit; bad input
//! is refused without harm.
#![allow(clippy::unwrap_used)]

use gpn_gp_core::model::{ModelError, OnlineModel};
use gpn_loggp::LogGp;
use gpn_test_support::XorshiftStar as Rng;
use nalgebra::{DMatrix, DVector};
use serde_json::{Value, json};

fn hyper(d: usize) -> Value {
    json!([
        {"sigma_f": 1.2, "sigma_n": 0.1, "lengthscales": vec![0.7; d]},
        {"sigma_f": 0.8, "sigma_n": 0.05, "lengthscales": (0..d).map(|j| 0.5 + 0.3 * j as f64).collect::<Vec<_>>()},
    ])
}

fn model(d: usize, extra: Value) -> LogGp {
    let mut cfg = json!({"hyper": hyper(d), "admit_interval_s": 0.0});
    cfg.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    LogGp::from_json(&cfg, d, 2).unwrap()
}

fn target(x: &[f64]) -> [f64; 2] {
    [x[0].sin() + 0.5 * x[1], (1.3 * x[1]).cos() * x[0]]
}

/// n samples on [0, 3]^d with noise 0.05, learned with noise variance 0.0025.
fn learn(m: &mut LogGp, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let d = m.input_dim();
    let mut rng = Rng(seed);
    let mut xs = vec![];
    for k in 0..n {
        let x: Vec<f64> = (0..d).map(|_| 3.0 * rng.uniform()).collect();
        let y = target(&x).map(|v| v + 0.05 * rng.normal());
        m.update(&x, &y, k as f64, &[0.0025; 2]).unwrap();
        xs.push(x);
    }
    xs
}

fn predict(m: &mut LogGp, x: &[f64]) -> ([f64; 2], [f64; 2]) {
    let (mut mu, mut var) = ([0.0; 2], [0.0; 2]);
    m.predict(x, &mut mu, &mut var).unwrap();
    (mu, var)
}

#[test]
fn one_leaf_is_the_dense_gp() {
    let d = 3;
    let mut m = model(d, json!({"leaf_capacity": 200}));
    let mut rng = Rng(5);
    let (mut xs, mut ys) = (vec![], vec![]);
    for k in 0..120 {
        let x: Vec<f64> = (0..d).map(|_| 3.0 * rng.uniform()).collect();
        let y = target(&x);
        m.update(&x, &y, k as f64, &[0.0025, 0.0016]).unwrap();
        xs.push(x);
        ys.push(y);
    }
    assert_eq!((m.leaves(), m.counters().stored), (1, 120));
    let h = hyper(d);
    for o in 0..2 {
        let sf2 = h[o]["sigma_f"].as_f64().unwrap().powi(2);
        let ell: Vec<f64> = serde_json::from_value(h[o]["lengthscales"].clone()).unwrap();
        let k = |a: &[f64], b: &[f64]| {
            let r2: f64 = (0..d).map(|j| ((a[j] - b[j]) / ell[j]).powi(2)).sum();
            sf2 * (-0.5 * r2).exp()
        };
        let noise = [0.0025, 0.0016][o];
        let kmat = DMatrix::from_fn(120, 120, |i, j| {
            k(&xs[i], &xs[j]) + if i == j { noise } else { 0.0 }
        });
        let chol = kmat.cholesky().unwrap();
        let y = DVector::from_fn(120, |i, _| ys[i][o]);
        let alpha = chol.solve(&y);
        for probe in [[0.3, 1.1, 2.0], [2.9, 0.1, 1.5], [1.5, 1.5, 1.5]] {
            let ks = DVector::from_fn(120, |i, _| k(&xs[i], &probe));
            let mean = ks.dot(&alpha);
            let var = sf2 - ks.dot(&chol.solve(&ks));
            let (mu, v) = predict(&mut m, &probe);
            assert!(
                (mu[o] - mean).abs() < 1e-9,
                "output {o}: μ {} vs {mean}",
                mu[o]
            );
            assert!(
                (v[o] - var).abs() < 1e-9,
                "output {o}: σ² {} vs {var}",
                v[o]
            );
        }
    }
}

#[test]
fn splits_keep_every_point_and_the_combination_is_continuous() {
    for combine in ["gpoe", "moe"] {
        splits_keep_every_point_and_combine_continuously(combine);
    }
}

fn splits_keep_every_point_and_combine_continuously(combine: &str) {
    let d = 2;
    let mut m = model(
        d,
        json!({"leaf_capacity": 30, "max_leaves": 64, "combine": combine}),
    );
    learn(&mut m, 600, 1);
    let c = m.counters();
    assert!(m.leaves() > 10, "{} leaves", m.leaves());
    assert_eq!(c.splits as usize, m.leaves() - 1);
    assert_eq!((c.stored, c.replaced, c.dropped), (600, 0, 0));
    assert_eq!(m.leaf_sizes().iter().sum::<usize>(), 600);
    assert!(m.leaf_sizes().iter().all(|&n| (1..=30).contains(&n)));
    // Accurate where it learned, and continuous on a fine line through the splits.
    let mut rng = Rng(9);
    let mut se = 0.0;
    for _ in 0..200 {
        let x = [0.2 + 2.6 * rng.uniform(), 0.2 + 2.6 * rng.uniform()];
        let (mu, var) = predict(&mut m, &x);
        let t = target(&x);
        se += (mu[0] - t[0]).powi(2) + (mu[1] - t[1]).powi(2);
        assert!(var.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
    let rmse = (se / 400.0).sqrt();
    assert!(rmse < 0.08, "{combine}: RMSE {rmse} at noise 0.05");
    let mut last = predict(&mut m, &[0.0, 1.3]).0;
    let steps = 30_000;
    let mut largest: f64 = 0.0;
    for i in 1..=steps {
        let x = [3.0 * i as f64 / steps as f64, 1.3];
        let mu = predict(&mut m, &x).0;
        largest = largest.max((mu[0] - last[0]).abs().max((mu[1] - last[1]).abs()));
        last = mu;
    }
    // Steps of 1e-4: a smooth mean moves ~1e-4; a hard switch between leaves would jump by
    // their disagreement (≥ 1e-2 here).
    assert!(
        largest < 3e-3,
        "{combine}: largest jump {largest} on steps of 1e-4"
    );
}

#[test]
fn a_full_tree_replaces_the_oldest_or_drops_as_configured() {
    let d = 2;
    let mut m = model(d, json!({"leaf_capacity": 10, "max_leaves": 4}));
    learn(&mut m, 400, 2);
    let c = m.counters();
    assert_eq!(m.leaves(), 4);
    assert!(c.replaced > 300, "{c:?}");
    assert_eq!(c.stored + c.replaced, 400);
    assert_eq!(m.leaf_sizes().iter().sum::<usize>() as u64, c.stored);
    let mut drop = model(
        d,
        json!({"leaf_capacity": 10, "max_leaves": 4, "when_full": "drop"}),
    );
    learn(&mut drop, 400, 2);
    let c = drop.counters();
    assert_eq!((c.replaced, c.stored + c.dropped), (0, 400));
    assert!(c.dropped > 300);
}

#[test]
fn identical_inputs_fill_a_leaf_that_does_not_split() {
    let mut m = model(2, json!({"leaf_capacity": 10}));
    for k in 0..50 {
        m.update(&[1.0, 1.0], &[0.5, -0.5], k as f64, &[0.0; 2])
            .unwrap();
    }
    let c = m.counters();
    assert_eq!((m.leaves(), c.stored, c.replaced), (1, 10, 40));
    assert!(c.unsplittable >= 40);
    let (mu, var) = predict(&mut m, &[1.0, 1.0]);
    assert!(
        (mu[0] - 0.5).abs() < 1e-3 && (mu[1] + 0.5).abs() < 1e-3,
        "{mu:?}"
    );
    assert!(var.iter().all(|v| v.is_finite() && *v >= 0.0));
}

#[test]
fn admits_by_time_stamp() {
    let mut m = LogGp::from_json(&json!({"hyper": hyper(2)}), 2, 2).unwrap();
    let mut rng = Rng(3);
    for k in 0..1000 {
        let x = [rng.uniform(), rng.uniform()];
        m.update(&x, &target(&x), k as f64 * 0.001, &[0.01; 2])
            .unwrap();
    }
    assert_eq!(
        (m.counters().samples_seen, m.counters().admitted),
        (1000, 200)
    );
    // A clock that does not advance admits every sample.
    for _ in 0..10 {
        m.update(&[0.5, 0.5], &[0.0, 0.0], 0.0, &[0.01; 2]).unwrap();
    }
    assert_eq!(m.counters().admitted, 210);
}

#[test]
fn a_saved_state_predicts_and_learns_bit_for_bit() {
    let d = 2;
    let extra = json!({"leaf_capacity": 12, "max_leaves": 8});
    let mut a = model(d, extra.clone());
    learn(&mut a, 300, 4);
    assert!(a.counters().replaced > 0 && a.counters().splits > 0);
    let bytes = a.state_bytes().unwrap();
    let mut b = model(d, extra.clone());
    b.restore_state_bytes(&bytes).unwrap();
    assert_eq!(b.counters(), a.counters());
    let xs = learn(&mut a, 100, 7);
    learn(&mut b, 100, 7);
    for x in xs.iter().take(30) {
        let (pa, pb) = (predict(&mut a, x), predict(&mut b, x));
        assert_eq!(format!("{pa:?}"), format!("{pb:?}"));
        assert_eq!(pa.0.map(f64::to_bits), pb.0.map(f64::to_bits));
        assert_eq!(pa.1.map(f64::to_bits), pb.1.map(f64::to_bits));
    }
    // Corrupt, truncated or foreign bytes are refused and leave the model as it was.
    let before = predict(&mut b, &xs[0]);
    let mut fresh = model(d, extra);
    for bad in [&bytes[..bytes.len() - 3], &bytes[..40], b"GPNRCAGP...."] {
        assert!(fresh.restore_state_bytes(bad).is_err());
    }
    let mut flipped = bytes.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0xff;
    let _ = fresh.restore_state_bytes(&flipped);
    assert!(predict(&mut fresh, &xs[0]).0.iter().all(|v| v.is_finite()));
    let mut other = model(d, json!({"leaf_capacity": 13, "max_leaves": 8}));
    let err = other.restore_state_bytes(&bytes).unwrap_err();
    assert!(err.to_string().contains("different configuration"), "{err}");
    assert_eq!(predict(&mut b, &xs[0]).0, before.0);
}

#[test]
fn bad_input_is_refused_and_the_model_keeps_working() {
    let mut m = model(2, json!({}));
    learn(&mut m, 50, 1);
    let seen = m.counters().samples_seen;
    let err = m.update(&[f64::NAN, 0.0], &[0.0; 2], 100.0, &[0.01; 2]);
    assert!(matches!(err, Err(ModelError::NonFinite { what: "x", .. })));
    let err = m.update(&[0.0; 3], &[0.0; 2], 100.0, &[0.01; 2]);
    assert!(matches!(err, Err(ModelError::Dimension { what: "x", .. })));
    assert!(
        m.update(&[0.0; 2], &[f64::INFINITY, 0.0], 100.0, &[0.01; 2])
            .is_err()
    );
    assert!(
        m.update(&[0.0; 2], &[0.0; 2], 100.0, &[-1.0, 0.01])
            .is_err()
    );
    assert!(
        m.predict(&[f64::NAN, 0.0], &mut [0.0; 2], &mut [0.0; 2])
            .is_err()
    );
    assert_eq!(m.counters().samples_seen, seen);
    let (mu, var) = predict(&mut m, &[1.0, 1.0]);
    assert!(mu.iter().chain(&var).all(|v| v.is_finite()));
}

#[test]
fn an_empty_model_answers_from_the_prior() {
    let mut m = model(2, json!({}));
    let mut from_prior = [false; 2];
    assert_eq!(
        m.readiness(&mut from_prior).map(|r| r.samples_behind),
        Some(0)
    );
    assert_eq!(from_prior, [true; 2]);
    let (mu, var) = predict(&mut m, &[0.3, 0.3]);
    assert_eq!(mu, [0.0; 2]);
    assert!((var[0] - 1.44).abs() < 1e-12 && (var[1] - 0.64).abs() < 1e-12);
    learn(&mut m, 1, 1);
    m.readiness(&mut from_prior);
    assert_eq!(from_prior, [false; 2]);
}
