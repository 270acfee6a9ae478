//! Kernel selection on synthetic data (spec §5.7).
//!
//! * CI: with as many inducing inputs as samples the local bound is the exact evidence;
//!   on data drawn from LIN + PER plus noise (`Which::C`) the true kernel must be the
//!   arg-max belief among seven candidates in at least 3 of 5 seeds.
//! * `#[ignore]` (slow; run with `cargo test --release -p gpn_vbks --test synthetic --
//!   --ignored`): the paper's checks on datasets A and B with M = 16 and minibatch 32 —
//!   the true kernel is the arg-max belief in ≥ 4 of 5 seeds with K_12 at s_g = 1, and in
//!   the top 2 with K_144 — on targets scaled but not centred (`center_targets: false`:
//!   both true kernels are products with LIN, whose GP has zero mean). These do **not**
//!   pass with this implementation (see `docs/results/vbks-eval.md`: at M = 16 the true
//!   kernels' collapsed bounds stay below those of other kernels, also in an independent
//!   NumPy/SciPy check, which finds the true kernel in 4 of 5 seeds only with the exact
//!   evidence and its optimum reached), and are kept so the shortfall stays visible.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::AtomicBool;

use common::synthetic::{Which, generate};
use gpn_vbks::Config;
use gpn_vbks::offline::run;
use serde_json::{Value, json};

/// Rank (0 = highest weight) of the true kernel after the offline phase.
fn true_rank(which: Which, seed: u64, n: usize, cfg: Value) -> usize {
    let (x, y) = generate(which, n, seed);
    let valid = Config::from_json(&cfg).unwrap().check(1, 1).unwrap();
    let sel = run(&valid, &x, &y, &AtomicBool::new(false)).unwrap();
    let mut ks: Vec<_> = sel.report.kernels.iter().collect();
    ks.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    ks.iter()
        .position(|k| k.expr == which.true_kernel())
        .expect("the true kernel is a candidate")
}

#[test]
fn selection_finds_the_true_kernel_when_the_bound_is_exact() {
    let cfg = |seed: u64| {
        json!({
            "kernels": ["SE", "PER", "LIN", "LIN+PER", "PER*SE", "LIN+SE", "RQ"],
            "offline_samples": 60, "inducing": 60, "inducing_select": 60,
            "checkpoints": 2, "min_steps": 20, "final_steps": 100, "init_candidates": 30,
            "keep": 3, "belief_steps": 300, "posterior_samples": 500, "seed": seed,
        })
    };
    let ranks: Vec<usize> = (0..5).map(|s| true_rank(Which::C, s, 60, cfg(s))).collect();
    let wins = ranks.iter().filter(|&&r| r == 0).count();
    assert!(wins >= 3, "true kernel ranks per seed: {ranks:?}");
}

fn paper_cfg(space: &str, seed: u64) -> Value {
    json!({
        "kernels": space, "offline_samples": 1000, "inducing": 16, "batch_size": 32,
        "prior_scale": 1.0, "seed": seed, "keep": 2, "center_targets": false,
        "trajectory": space == "k12",
    })
}

#[test]
#[ignore = "slow (minutes in release); fails: see docs/results/vbks-eval.md"]
fn paper_k12_true_kernel_is_argmax_in_4_of_5_seeds() {
    for which in [Which::A, Which::B] {
        let ranks: Vec<usize> = (0..5)
            .map(|s| true_rank(which, s, 1000, paper_cfg("k12", s)))
            .collect();
        let wins = ranks.iter().filter(|&&r| r == 0).count();
        assert!(wins >= 4, "{which:?}: true kernel ranks per seed {ranks:?}");
    }
}

#[test]
#[ignore = "slow (tens of minutes in release); fails: see docs/results/vbks-eval.md"]
fn paper_k144_true_kernel_is_in_the_top_2() {
    for which in [Which::A, Which::B] {
        for s in 0..5 {
            let r = true_rank(which, s, 1000, paper_cfg("level3", s));
            assert!(r < 2, "{which:?} seed {s}: true kernel rank {}", r + 1);
        }
    }
}
