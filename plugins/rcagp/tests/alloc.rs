//! The real-time path allocates nothing: in background mode, steady-state `predict` and
//! `update` on the calling thread make no allocation (counting global allocator that
//! counts only on the test thread, so the worker's own allocations do not count), for 1
//! and 7 outputs, while the worker keeps rebuilding and publishing snapshots.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::smooth_sample;
use gpn_gp_core::model::OnlineModel;
use gpn_rcagp::RcaGp;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

fn check(p: usize) {
    let d = 5;
    let cfg = serde_json::json!({
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![0.9; d]},
        "blocks": 16, "block_size": 4, "refit_every_blocks": 4, "refit_steps": 2,
    });
    let mut m = RcaGp::from_json(&cfg, d, p).unwrap();
    let (mut x, mut y, nv) = (vec![0.0; d], vec![0.0; p], vec![0.01; p]);
    let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
    let mut step = |m: &mut RcaGp, k: usize| {
        smooth_sample(k, &mut x, &mut y);
        m.predict(&x, &mut mu, &mut var).unwrap();
        m.update(&x, &y, k as f64 * 0.001, &nv).unwrap();
    };
    // Warm: fill the window, let snapshots circulate through the outbox.
    for k in 0..400 {
        step(&mut m, k);
        if k % 16 == 0 {
            m.wait_idle(Duration::from_secs(10));
        }
    }
    m.wait_idle(Duration::from_secs(10));
    let version0 = m.snapshot().version;
    let allocs = gpn_alloc_count::count_allocations_and_frees(|| {
        for k in 400..3400 {
            step(&mut m, k);
        }
    });
    m.wait_idle(Duration::from_secs(10));
    let mut probe_mu = vec![0.0; p];
    let mut probe_var = vec![0.0; p];
    m.predict(&x, &mut probe_mu, &mut probe_var).unwrap();
    assert!(
        m.snapshot().version > version0,
        "snapshots were published during the run"
    );
    assert_eq!(
        allocs, 0,
        "p = {p}: {allocs} allocations or frees on the control thread"
    );
}

#[test]
fn realtime_path_allocates_nothing_one_output() {
    check(1);
}

#[test]
fn realtime_path_allocates_nothing_seven_outputs() {
    check(7);
}
