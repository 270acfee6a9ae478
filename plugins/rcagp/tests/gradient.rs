//! Spec §7 test 5: the analytic ELBO gradient (R1–R12 and the softplus chain) against
//! central differences of F, for the action entries, every ARD lengthscale, s_f² and σ²;
//! one and two outputs, per-point noise, per-point thresholds and centres, all kernels.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use gpn_rcagp::kernel::KernelKind;
use gpn_rcagp::posterior::{OutputData, Problem};
use gpn_rcagp::train::{TrainOptions, raw_params, raw_value_and_gradient};
use gpn_rcagp::weights::Beta;

const N: usize = 24;
const D: usize = 3;

fn check(problem: &mut Problem, opts: &TrainOptions, what: &str) {
    let raw = raw_params(problem, opts);
    let (_, g) = raw_value_and_gradient(problem, &raw, opts).unwrap();
    assert_eq!(g.len(), raw.len());
    let scale = g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let mut worst = 0.0f64;
    for k in 0..raw.len() {
        let h = 1e-5 * raw[k].abs().max(1.0);
        let mut plus = raw.clone();
        plus[k] += h;
        let mut minus = raw.clone();
        minus[k] -= h;
        let fp = raw_value_and_gradient(problem, &plus, opts).unwrap().0;
        let fm = raw_value_and_gradient(problem, &minus, opts).unwrap().0;
        let fd = (fp - fm) / (2.0 * h);
        // Relative error, with a floor far below the gradient's scale for near-zero entries.
        let rel = (fd - g[k]).abs() / g[k].abs().max(1e-3 * scale);
        worst = worst.max(rel);
        assert!(
            rel < 1e-6,
            "{what}: component {k}: analytic {} vs central {fd} (rel {rel:.2e})",
            g[k]
        );
    }
    assert!(worst < 1e-6);
    raw_value_and_gradient(problem, &raw, opts).unwrap();
}

fn all() -> TrainOptions {
    TrainOptions {
        ard: true,
        learn_actions: true,
        ..TrainOptions::default()
    }
}

#[test]
fn gradient_single_output_all_kernels() {
    for (kind, seed) in [
        (KernelKind::Rbf, 1),
        (KernelKind::Matern52, 2),
        (KernelKind::Matern32, 3),
        (KernelKind::Matern12, 4),
    ] {
        let (x, mut y) = data(N, D, seed);
        y[5] += 3.0;
        let mut p = problem(
            kind,
            &x,
            D,
            &y,
            &[0.8, 1.3, 2.0],
            params(1.2, 0.2, Beta::Fixed(1.0)),
            random_blocks(N, 4, seed),
        );
        check(&mut p, &all(), &format!("{kind:?}"));
    }
}

#[test]
fn gradient_isotropic_lengthscale() {
    let (x, y) = data(N, D, 8);
    let mut p = problem(
        KernelKind::Matern52,
        &x,
        D,
        &y,
        &[1.1; 3],
        params(0.9, 0.4, Beta::Fixed(1.0)),
        random_blocks(N, 6, 8),
    );
    let opts = TrainOptions {
        ard: false,
        ..all()
    };
    check(&mut p, &opts, "isotropic");
}

#[test]
fn gradient_two_outputs_per_point_noise_and_centres() {
    let (x, y0) = data(N, D, 9);
    let mut rng = Rng(10);
    let y1: Vec<f64> = y0.iter().map(|v| 0.5 * v + rng.normal() * 0.3).collect();
    let out = |y: &[f64], rng: &mut Rng| OutputData {
        y: y.to_vec(),
        noise: (0..N).map(|_| 0.5 + rng.uniform()).collect(),
        prior_mean: (0..N).map(|_| 0.1 * rng.normal()).collect(),
        center: (0..N).map(|_| 0.3 * rng.normal()).collect(),
        c2: (0..N).map(|_| 0.5 + rng.uniform()).collect(),
    };
    let mut p = Problem {
        kind: KernelKind::Matern52,
        d: D,
        x,
        lengthscales: vec![0.9, 1.2, 1.7],
        actions: random_blocks(N, 4, 11),
        outputs: vec![
            (out(&y0, &mut rng), params(1.1, 0.3, Beta::Fixed(1.0))),
            (out(&y1, &mut rng), params(0.6, 0.15, Beta::Fixed(0.7))),
        ],
    };
    check(&mut p, &all(), "two outputs");
}

#[test]
fn gradient_normalized_beta_without_noise_learning() {
    // β² = σ²/2 is a stop-gradient constant: with σ² fixed it is an ordinary constant, so
    // every other component must still match.
    let (x, mut y) = data(N, D, 12);
    y[2] -= 5.0;
    let mut p = problem(
        KernelKind::Rbf,
        &x,
        D,
        &y,
        &[1.0, 1.0, 1.5],
        params(1.0, 0.05, Beta::Normalized),
        random_blocks(N, 3, 12),
    );
    let opts = TrainOptions {
        learn_noise: false,
        ..all()
    };
    check(&mut p, &opts, "normalized β");
}
