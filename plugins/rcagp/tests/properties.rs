//! Spec §7 tests 6–8: conservative variance for any actions, monotone variance for nested
//! actions, and bounded influence of one growing outlier (with CaGP's unbounded as the
//! contrast, and the block-poisoning behaviour of §1.3).
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use gpn_rcagp::actions::{Actions, BlockLayout, fill_weight_aware};
use gpn_rcagp::baselines::DensePosterior;
use gpn_rcagp::kernel::{KernelKind, KernelParams};
use gpn_rcagp::posterior::{Problem, output_weights};
use gpn_rcagp::weights::Beta;

const N: usize = 40;
const D: usize = 2;
const ELL: [f64; 2] = [1.0, 1.3];

#[test]
fn variance_is_conservative_for_any_actions() {
    let (x, mut y) = data(N, D, 31);
    y[9] += 5.0;
    let kernel = KernelParams {
        kind: KernelKind::Matern52,
        lengthscales: ELL.to_vec(),
        outputscale: 1.0,
    };
    let par = params(1.5, 0.2, Beta::Fixed(1.0));
    let tests = test_inputs(10, D, 5);
    for trial in 0..100u64 {
        let actions = if trial % 2 == 0 {
            random_blocks(N, 2 + (trial as usize % 9), trial)
        } else {
            Actions::Dense(dense_random(N, 1 + (trial as usize % 12), trial))
        };
        let p = problem(KernelKind::Matern52, &x, D, &y, &ELL, par, actions);
        let fitted = p.fit().unwrap();
        let m = p.outputs[0].0.prior_mean[0];
        let rcgp = DensePosterior::exact_rcgp(&kernel, &x, D, &p.outputs[0].0, &par, m).unwrap();
        for xq in &tests {
            let (_, v) = fitted.predict(&p, 0, xq, m);
            let (_, v_ref) = rcgp.predict(xq);
            assert!(
                v >= v_ref - 1e-10,
                "trial {trial}: RCaGP var {v} < RCGP var {v_ref}"
            );
        }
    }
}

#[test]
fn nested_actions_reduce_the_variance_monotonically() {
    let (x, y) = data(N, D, 33);
    let par = params(1.0, 0.1, Beta::Fixed(1.0));
    let full = dense_random(N, N, 34);
    let tests = test_inputs(30, D, 6);
    let mut prev = f64::INFINITY;
    for j in 1..=N {
        let s = full.columns(0, j).into_owned();
        let p = problem(KernelKind::Rbf, &x, D, &y, &ELL, par, Actions::Dense(s));
        let fitted = p.fit().unwrap();
        let m = p.outputs[0].0.prior_mean[0];
        let mean_var = tests
            .iter()
            .map(|xq| fitted.predict(&p, 0, xq, m).1)
            .sum::<f64>()
            / tests.len() as f64;
        assert!(
            mean_var <= prev + 1e-10,
            "j = {j}: mean variance {mean_var} > {prev}"
        );
        prev = mean_var;
    }
}

/// max over a grid of |μ̂(x) − m| for the problem.
fn max_abs_mean(p: &Problem) -> f64 {
    let fitted = p.fit().unwrap();
    let m = p.outputs[0].0.prior_mean[0];
    let mut worst = 0.0f64;
    for a in 0..15 {
        for b in 0..15 {
            let xq = [a as f64 * 5.0 / 14.0, b as f64 * 5.0 / 14.0];
            worst = worst.max((fitted.predict(p, 0, &xq, m).0 - m).abs());
        }
    }
    worst
}

#[test]
fn one_growing_outlier_has_bounded_influence() {
    let (x, y_clean) = data(N, D, 35);
    let m = 0.0;
    let c = paper_c(&y_clean, m);
    let sigma2 = 0.2;
    let actions = random_blocks(N, 5, 36);
    let Actions::Block { layout, .. } = &actions else {
        unreachable!()
    };
    let a5 = (0..layout.i())
        .find(|&a| layout.block(a).contains(&5))
        .unwrap();
    let (mut rc, mut ca, mut vbar) = (Vec::new(), Vec::new(), Vec::new());
    for k in 1..=8 {
        let mut y = y_clean.clone();
        y[5] = 10f64.powi(k);
        let robust = Problem::single(
            KernelKind::Matern52,
            &x,
            D,
            &y,
            &ELL,
            params(1.0, sigma2, Beta::Fixed(1.0)),
            m,
            c,
            actions.clone(),
        );
        let cagp = Problem::single(
            KernelKind::Matern52,
            &x,
            D,
            &y,
            &ELL,
            params(1.0, sigma2, Beta::Fixed((sigma2 / 2.0).sqrt())),
            m,
            1e12,
            actions.clone(),
        );
        rc.push(max_abs_mean(&robust));
        ca.push(max_abs_mean(&cagp));
        vbar.push(robust.fit().unwrap().outputs[0].vbar[a5]);
    }
    // RCaGP: bounded and converging.
    let clean_scale = y_clean.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(
        rc.iter().all(|&v| v < 10.0 * clean_scale),
        "RCaGP means {rc:?}"
    );
    assert!(
        (rc[7] - rc[6]).abs() < 1e-3 * rc[7].max(1.0),
        "RCaGP converges: {rc:?}"
    );
    // CaGP: grows linearly in 10^k.
    for k in 3..8 {
        let ratio = ca[k] / ca[k - 1];
        assert!(
            (ratio - 10.0).abs() < 0.5,
            "CaGP ratio {ratio} at k = {}: {ca:?}",
            k + 1
        );
    }
    // Block poisoning with random actions: the outlier's block weight goes to 0.
    assert!(
        vbar[7].abs() < 1e-6 * vbar[0].abs().max(1e-3),
        "v̄ of the block: {vbar:?}"
    );
}

#[test]
fn weight_aware_actions_keep_the_outliers_block() {
    let (x, y_clean) = data(N, D, 37);
    let m = 0.0;
    let c = paper_c(&y_clean, m);
    let layout = BlockLayout::uniform(N, 5).unwrap();
    let a5 = 0; // point 5 is in block 0 (k_b = 8)
    let mut vbar = Vec::new();
    let mut rc = Vec::new();
    for k in 1..=8 {
        let mut y = y_clean.clone();
        y[5] = 10f64.powi(k);
        let par = params(1.0, 0.2, Beta::Fixed(1.0));
        let mut p = Problem::single(
            KernelKind::Matern52,
            &x,
            D,
            &y,
            &ELL,
            par,
            m,
            c,
            Actions::Block {
                layout: layout.clone(),
                s: vec![0.0; N],
            },
        );
        let (w, _) = output_weights(&p.outputs[0].0, &par);
        let prec: Vec<f64> = w.iter().map(|w| w.lam).collect();
        if let Actions::Block { s, .. } = &mut p.actions {
            fill_weight_aware(&layout, &prec, s);
        }
        vbar.push(p.fit().unwrap().outputs[0].vbar[a5]);
        rc.push(max_abs_mean(&p));
    }
    assert!(
        vbar[7].abs() > 1e-3,
        "the block keeps a finite weight: {vbar:?}"
    );
    assert!(
        (vbar[7] - vbar[6]).abs() < 1e-4 * vbar[7].abs(),
        "and it settles: {vbar:?}"
    );
    assert!(
        (rc[7] - rc[6]).abs() < 1e-3 * rc[7].max(1.0),
        "mean bounded: {rc:?}"
    );
}
