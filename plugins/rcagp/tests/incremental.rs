//! Spec §7 test 10: the streaming block path (block-FIFO window, incremental G rows,
//! weight-aware actions, threshold updates, refits) equals a from-scratch batch RCaGP of
//! the same window to 1e−9, after every block, through many replacements.
#![allow(clippy::unwrap_used)]

mod common;

use common::Rng;
use gpn_gp_core::model::OnlineModel;
use gpn_rcagp::RcaGp;
use serde_json::json;

fn stream(seed: u64, k: usize, d: usize, p: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = Rng(seed);
    let t = k as f64 * 0.01;
    let x: Vec<f64> = (0..d)
        .map(|j| (t * (0.7 + 0.3 * j as f64) + j as f64).sin() * 2.0 + 0.05 * rng.normal())
        .collect();
    let y: Vec<f64> = (0..p)
        .map(|o| {
            let clean = (x[0] * (1.0 + o as f64 * 0.3)).sin() + 0.3 * x[d - 1];
            // Occasional large glitch on one output.
            if rng.uniform() < 0.02 {
                clean + 8.0
            } else {
                clean + 0.05 * rng.normal()
            }
        })
        .collect();
    let noise: Vec<f64> = (0..p)
        .map(|o| 0.0025 * (1.0 + 0.5 * o as f64) * (1.0 + rng.uniform()))
        .collect();
    (x, y, noise)
}

fn check_against_batch(config: serde_json::Value, d: usize, p: usize, steps: usize) -> RcaGp {
    let mut model = RcaGp::from_json(&config, d, p).unwrap();
    let mut rng = Rng(99);
    let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
    let mut compared = 0;
    let mut last_version = 0;
    for k in 0..steps {
        let (x, y, noise) = stream(k as u64 + 1, k, d, p);
        model.predict(&x, &mut mu, &mut var).unwrap();
        model.update(&x, &y, k as f64 * 0.001, &noise).unwrap();
        let version = model.snapshot().version;
        if version == last_version {
            continue;
        }
        last_version = version;
        let problem = model.window_problem().unwrap().unwrap();
        let fitted = problem.fit().unwrap();
        for _ in 0..5 {
            let xq: Vec<f64> = (0..d).map(|_| 4.0 * rng.uniform() - 2.0).collect();
            model.predict(&xq, &mut mu, &mut var).unwrap();
            for o in 0..p {
                let (m_ref, v_ref) =
                    fitted.predict(&problem, o, &xq, problem.outputs[o].0.prior_mean[0]);
                let tol = 1e-9;
                assert!(
                    (mu[o] - m_ref).abs() <= tol * m_ref.abs().max(1.0),
                    "step {k} output {o}: mean {} vs batch {m_ref}",
                    mu[o]
                );
                assert!(
                    (var[o] - v_ref).abs() <= tol * v_ref.abs().max(1.0),
                    "step {k} output {o}: var {} vs batch {v_ref}",
                    var[o]
                );
            }
        }
        compared += 1;
    }
    assert!(compared >= 20, "compared after {compared} blocks");
    assert_eq!(
        model.snapshot().n_blocks(),
        config["blocks"].as_u64().unwrap() as usize,
        "the window is full"
    );
    model
}

/// With thresholds refreshed every `every` blocks, `steps` samples: the blocks between
/// refreshes went in by one-row updates (appended, then replacing the oldest) and every
/// state still equals the batch RCaGP with the thresholds in use.
fn check_row_commits(mut cfg: serde_json::Value, every: u64, p: usize, steps: usize) {
    cfg["threshold_refresh_blocks"] = json!(every);
    cfg["admit_interval_s"] = json!(0.0);
    let model = check_against_batch(cfg, 3, p, steps);
    let (rows, all) = model.commits().unwrap();
    let block_size = 5;
    assert_eq!(all, (steps / block_size) as u64);
    // Every block but the refreshes (and a refit's or a failed update's rebuild).
    assert!(
        rows > all * (every - 1) / every * 3 / 4 && rows < all,
        "{rows} of {all}"
    );
}

fn base(center: &str, actions: &str, refit_every: usize) -> serde_json::Value {
    json!({
        "hyper": {"sigma_f": 1.2, "sigma_n": 0.05, "lengthscales": [1.1, 0.8, 1.5]},
        "blocks": 6, "block_size": 5, "background": false,
        "weight_center": center, "actions": actions, "refit_every_blocks": refit_every, "refit_steps": 3,
    })
}

#[test]
fn block_path_equals_batch_predictive_center_weight_aware() {
    check_against_batch(base("predictive", "weight_aware", 0), 3, 2, 400);
}

#[test]
fn block_path_equals_batch_prior_center_random_actions() {
    check_against_batch(base("prior", "random", 0), 3, 1, 300);
}

#[test]
fn block_path_equals_batch_with_refits() {
    let mut cfg = base("predictive", "weight_aware", 4);
    cfg["kernel"] = json!("matern52");
    let model_refits = {
        let mut m = RcaGp::from_json(&cfg, 3, 2).unwrap();
        for k in 0..400 {
            let (x, y, noise) = stream(k as u64 + 1, k, 3, 2);
            m.update(&x, &y, 0.0, &noise).unwrap();
        }
        m.refits_applied()
    };
    assert!(model_refits > 3, "refits happened ({model_refits})");
    check_against_batch(cfg, 3, 2, 400);
}

#[test]
fn row_commits_between_threshold_refreshes_equal_batch() {
    check_row_commits(base("predictive", "weight_aware", 0), 4, 2, 400);
    check_row_commits(base("prior", "random", 0), 7, 1, 300);
}

#[test]
fn row_commits_with_refits_equal_batch() {
    check_row_commits(base("predictive", "weight_aware", 5), 3, 2, 400);
}

#[test]
fn every_block_is_a_full_rebuild_by_default() {
    let mut cfg = base("predictive", "weight_aware", 0);
    cfg["admit_interval_s"] = json!(0.0);
    let model = check_against_batch(cfg, 3, 2, 200);
    assert_eq!(model.commits().unwrap(), (0, 40));
}

#[test]
fn refits_of_the_newest_blocks_equal_batch() {
    // Refits see 2 of the 6 blocks; installing one recomputes G_C for the other 4.
    let mut cfg = base("predictive", "weight_aware", 3);
    cfg["refit_blocks"] = json!(2);
    cfg["admit_interval_s"] = json!(0.0);
    let model = check_against_batch(cfg, 3, 2, 300);
    assert!(
        model.refits_applied() > 5,
        "{} refits",
        model.refits_applied()
    );
}
