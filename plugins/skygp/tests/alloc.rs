//! Steady-state `predict` and `update` allocate nothing (counting global allocator),
//! for Fast and Dense, 1 and 7 outputs, both presets.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use common::{alloc_hyper, feed};
use gpn_skygp::SkyGp;
use gpn_test_support::AllocStream;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

fn check(variant: &str, preset: &str, p: usize, distinct_kernels: bool) {
    let d = 6;
    let hyper = alloc_hyper(d, p, distinct_kernels);
    // A small pool so that eviction is exercised too.
    let cfg = serde_json::json!({"variant": variant, "preset": preset, "n_bar": 20, "max_experts": 30, "hyper": hyper});
    let mut gp = SkyGp::from_json(&cfg, d, p).unwrap();
    let mut s = AllocStream::new(d, p, 0.01);
    let mut step = |gp: &mut SkyGp, k: usize, with_predict: bool| {
        s.draw(2.0, 0.0);
        feed(gp, &mut s, k as f64 * 0.002, with_predict);
    };
    for k in 0..3000 {
        step(&mut gp, k, true);
    }
    let n = gpn_alloc_count::count_all_allocations(|| {
        for k in 3000..5000 {
            step(&mut gp, k, k % 7 != 0); // some updates without a preceding predict
        }
    });
    assert_eq!(
        n, 0,
        "{variant}/{preset}, p = {p}, distinct = {distinct_kernels}: {n} allocations"
    );
    assert!(gp.evictions() > 0, "eviction path not exercised");
}

#[test]
fn steady_state_allocates_nothing() {
    for variant in ["fast", "dense"] {
        for preset in ["recommended", "reference"] {
            check(variant, preset, 1, false);
            check(variant, preset, 7, false);
            check(variant, preset, 7, true);
        }
    }
}
