//! With drift on, the real-time path still allocates nothing in steady state: background
//! `predict`/`update` on the control thread (7 outputs) while the worker refreshes the aged
//! noise, expires blocks and rebuilds; and in inline mode the whole block path — refresh,
//! expiry (the ring rotation), full rebuilds and publication — makes no allocation either
//! (refits off: they allocate by design). Counting allocator on the test thread only.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::smooth_sample;
use gpn_gp_core::model::OnlineModel;
use gpn_rcagp::RcaGp;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

const D: usize = 5;
const P: usize = 7;

/// Runs samples `range` at `dt` seconds apart (a slow stretch every 500 samples so that
/// blocks expire), counting allocations on this thread when `count`.
fn run(m: &mut RcaGp, range: std::ops::Range<usize>, count: bool) -> usize {
    let (mut x, mut y, nv) = ([0.0; D], [0.0; P], [0.01; P]);
    let (mut mu, mut var) = ([0.0; P], [0.0; P]);
    gpn_alloc_count::reset();
    gpn_alloc_count::arm(count);
    for k in range {
        smooth_sample(k, &mut x, &mut y);
        // 1 kHz, except every 500th stretch of 50 samples at 10 Hz: ages pass the cap.
        let t = k as f64 * 0.001 + (k / 500) as f64 * 5.0;
        m.predict(&x, &mut mu, &mut var).unwrap();
        m.update(&x, &y, t, &nv).unwrap();
    }
    gpn_alloc_count::arm(false);
    gpn_alloc_count::allocations() + gpn_alloc_count::frees()
}

fn config(background: bool) -> serde_json::Value {
    serde_json::json!({
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![0.9; D]},
        "blocks": 16, "block_size": 4, "refit_every_blocks": if background { 4 } else { 0 },
        "refit_steps": 2, "background": background,
        "drift": {"model": "quadratic", "kappa_per_s": 0.2, "max_var_ratio": 20, "refresh_hz": 50},
    })
}

#[test]
fn background_control_thread_allocates_nothing_with_drift() {
    let mut m = RcaGp::from_json(&config(true), D, P).unwrap();
    for chunk in 0..25 {
        run(&mut m, chunk * 16..(chunk + 1) * 16, false);
        m.wait_idle(Duration::from_secs(10));
    }
    let version0 = m.snapshot().version;
    let allocs = run(&mut m, 400..3400, true);
    m.wait_idle(Duration::from_secs(10));
    assert!(m.snapshot().version > version0, "snapshots were published");
    let (expired, refreshes) = m.drift_counters().unwrap();
    assert!(
        expired > 0 && refreshes > 10,
        "expired {expired}, refreshes {refreshes}"
    );
    assert_eq!(
        allocs, 0,
        "{allocs} allocations or frees on the control thread"
    );
    // The worker's rebuilds and the refits (every 4 blocks, on the aged noise) succeeded.
    assert_eq!(m.worker_error(), None);
    assert!(m.refits_applied() > 0, "refits ran under drift");
}

#[test]
fn inline_block_path_allocates_nothing_with_drift() {
    let mut m = RcaGp::from_json(&config(false), D, P).unwrap();
    run(&mut m, 0..400, false);
    let (expired0, refreshes0) = m.drift_counters().unwrap();
    let allocs = run(&mut m, 400..3400, true);
    let (expired, refreshes) = m.drift_counters().unwrap();
    assert!(
        expired > expired0 && refreshes > refreshes0 + 10,
        "expired {expired0} -> {expired}, refreshes {refreshes0} -> {refreshes}"
    );
    assert_eq!(
        allocs, 0,
        "{allocs} allocations or frees in inline update/predict"
    );
}
