//! Shared helpers of the RCaGP tests: a seeded generator and small problems.
#![allow(dead_code)]

use gpn_rcagp::actions::{Actions, BlockLayout, init_random};
use gpn_rcagp::kernel::KernelKind;
use gpn_rcagp::posterior::{OutputParams, Problem};
use gpn_rcagp::weights::{Beta, WeightProfile, soft_threshold};
use nalgebra::DMatrix;

/// xorshift64*, uniform in [0, 1) and standard normal (Box–Muller).
pub use gpn_test_support::XorshiftStar as Rng;

/// Sample `k` of the allocation tests' smooth stream, written into `x` and `y` without
/// allocating: x_j = sin(0.01·k·(1 + j)), y_o = sin((o + 1)·x_0) + x_1.
pub fn smooth_sample(k: usize, x: &mut [f64], y: &mut [f64]) {
    for (j, v) in x.iter_mut().enumerate() {
        *v = (k as f64 * 0.01 * (1.0 + j as f64)).sin();
    }
    for (o, v) in y.iter_mut().enumerate() {
        *v = (x[0] * (o + 1) as f64).sin() + x[1];
    }
}

/// n inputs in [0, 5]^d and targets sin(x_0) + 0.5 cos(1.3 x_1) + noise.
pub fn data(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng(seed);
    let x: Vec<f64> = (0..n * d).map(|_| 5.0 * rng.uniform()).collect();
    let y = (0..n)
        .map(|j| {
            let xj = &x[j * d..(j + 1) * d];
            xj[0].sin() + 0.5 * (1.3 * xj[d.min(2) - 1]).cos() + 0.1 * rng.normal()
        })
        .collect();
    (x, y)
}

/// The paper's c = Q_0.8(|y − m|).
pub fn paper_c(y: &[f64], m: f64) -> f64 {
    let mut r: Vec<f64> = y.iter().map(|v| (v - m).abs()).collect();
    soft_threshold(&mut r, 0.2, 1e-3)
}

/// Test inputs in [−0.5, 5.5]^d.
pub fn test_inputs(count: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| (0..d).map(|_| 6.0 * rng.uniform() - 0.5).collect())
        .collect()
}

/// Random block actions (the paper's init) with i blocks covering all n points.
pub fn random_blocks(n: usize, i: usize, seed: u64) -> Actions {
    let layout = BlockLayout::balanced(n, i).unwrap();
    let s = init_random(&layout, seed);
    Actions::Block { layout, s }
}

/// Identity actions as blocks of size 1 with s = 1.
pub fn identity_blocks(n: usize) -> Actions {
    Actions::Block {
        layout: BlockLayout::uniform(n, n).unwrap(),
        s: vec![1.0; n],
    }
}

/// A dense n×i matrix of standard normals.
pub fn dense_random(n: usize, i: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = Rng(seed);
    DMatrix::from_fn(n, i, |_, _| rng.normal())
}

/// A single-output problem in the paper's setting (m = mean(y), c = Q_0.8).
pub fn problem(
    kind: KernelKind,
    x: &[f64],
    d: usize,
    y: &[f64],
    lengthscales: &[f64],
    params: OutputParams,
    actions: Actions,
) -> Problem {
    let m = y.iter().sum::<f64>() / y.len() as f64;
    Problem::single(
        kind,
        x,
        d,
        y,
        lengthscales,
        params,
        m,
        paper_c(y, m),
        actions,
    )
}

pub fn params(sf2: f64, sigma2: f64, beta: Beta) -> OutputParams {
    OutputParams {
        outputscale: sf2,
        sigma2,
        beta,
        profile: WeightProfile::Imq,
    }
}

pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}
