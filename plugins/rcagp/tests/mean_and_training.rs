//! The expert-guided robust prior mean (spec A7) against a value computed independently
//! (plain Python arithmetic of the formulas in spec §1.6 with the fixes of §5 item 17), and
//! batch training (spec A5): Adam on −ELBO raises the objective step by step.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use gpn_rcagp::kernel::KernelKind;
use gpn_rcagp::mean::{ExpertInput, expert_mean};
use gpn_rcagp::train::{TrainOptions, train};
use gpn_rcagp::weights::Beta;

#[test]
fn expert_mean_matches_an_independent_computation() {
    // One flagged outlier (index 3, y = 5.0) with correction 1.05, σ²_corr = 1. Its three
    // nearest inliers are x = 2, 4 and 1 (the tie between 1 and 5 goes to the lower index).
    let x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
    let y = [1.0, 1.2, 0.9, 5.0, 1.1, 1.3, 0.8, 1.0];
    let mut input = ExpertInput {
        x: &x,
        d: 1,
        y: &y,
        flagged: &[3],
        corrections: &[1.05],
        correction_var: 1.0,
        standardize: (0.0, 1.0),
    };
    // python3: ed·emu with ed = (α+1)/(α+0.01+1), emu = (τμ + 1.05)/(τ + 1), τ = 1/(var+1e-6).
    let raw = expert_mean(&input).unwrap();
    assert!((raw - 1.063_212_896_667_843_1).abs() < 1e-12, "{raw}");
    input.standardize = (0.5, 2.0);
    let std = expert_mean(&input).unwrap();
    assert!((std - 0.281_606_448_333_921_57).abs() < 1e-12, "{std}");
    // Bad input is an error, not a panic.
    input.flagged = &[];
    assert!(expert_mean(&input).is_err());
    input.flagged = &[30];
    input.corrections = &[1.0];
    assert!(expert_mean(&input).is_err());
}

#[test]
fn training_raises_the_elbo() {
    // Start from a lengthscale 3× too long; learn the kernel (noise and actions fixed, the
    // spec's v0 slow path) and then everything.
    let (x, y) = data(60, 2, 41);
    for (what, learn_noise, learn_actions) in [("kernel", false, false), ("all", true, true)] {
        let mut p = problem(
            KernelKind::Matern52,
            &x,
            2,
            &y,
            &[3.0, 3.0],
            params(1.0, 0.5, Beta::Fixed(1.0)),
            random_blocks(60, 10, 42),
        );
        let opts = TrainOptions {
            steps: 100,
            lr: 0.02,
            learn_noise,
            learn_actions,
            ..TrainOptions::default()
        };
        let report = train(&mut p, &opts).unwrap();
        let f = &report.objective;
        let (first, last) = (f[0], *f.last().unwrap());
        assert!(last > first + 1.0, "{what}: ELBO {first} → {last}");
        // Adam with a small step: the objective rises (almost) every step.
        let falls = f
            .windows(2)
            .filter(|w| w[1] < w[0] - 1e-6 * w[0].abs())
            .count();
        assert!(
            falls <= f.len() / 10,
            "{what}: {falls} of {} steps lowered the ELBO",
            f.len()
        );
        assert!(
            p.lengthscales.iter().all(|&l| (l - 3.0).abs() > 0.1),
            "{what}: lengthscales moved: {:?}",
            p.lengthscales
        );
    }
}
