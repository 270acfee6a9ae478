//! With drift on, steady-state `predict` and `update` allocate nothing, and neither does
//! the refresh thread: the counting allocator counts every thread of the process while
//! refreshes are adopted, samples expire and experts retire.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use common::{alloc_hyper, feed};
use gpn_skygp::SkyGp;
use gpn_test_support::AllocStream;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

fn check(variant: &str, p: usize, distinct_kernels: bool) {
    let d = 6;
    let hyper = alloc_hyper(d, p, distinct_kernels);
    // Samples live sqrt(9·0.01)/0.3 = 1 s of stamp time (stamps advance 2 ms per sample);
    // the input wanders so that whole experts expire; a small pool also evicts.
    let cfg = serde_json::json!({"variant": variant, "n_bar": 20, "max_experts": 60, "hyper": hyper,
        "drift": {"model": "quadratic", "kappa_per_s": 0.3, "max_var_ratio": 10, "refresh_hz": 500}});
    let mut gp = SkyGp::from_json(&cfg, d, p).unwrap();
    let mut s = AllocStream::new(d, p, 0.005);
    let mut step = |gp: &mut SkyGp, k: usize, with_predict: bool| {
        s.draw(1.0, (k as f64 * 0.003).sin() * 3.0);
        feed(gp, &mut s, k as f64 * 0.002, with_predict);
    };
    for k in 0..3000 {
        step(&mut gp, k, true);
        if k % 50 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let before = gp.drift_stats().unwrap();
    let n = gpn_alloc_count::count_all_allocations(|| {
        for k in 3000..6000 {
            step(&mut gp, k, k % 7 != 0); // some updates without a preceding predict
            if k % 50 == 0 {
                // Let the refresh thread work while counting (sleeping allocates nothing).
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    });
    let after = gp.drift_stats().unwrap();
    println!("{variant}, p = {p}, distinct = {distinct_kernels}: {after:?}");
    assert_eq!(
        n, 0,
        "{variant}, p = {p}, distinct = {distinct_kernels}: {n} allocations"
    );
    // The window exercised the whole machinery.
    assert!(after.refresh_cycles > before.refresh_cycles);
    assert!(after.results_adopted > before.results_adopted);
    assert!(after.samples_expired > before.samples_expired);
    assert!(after.experts_retired > before.experts_retired);
}

#[test]
fn steady_state_with_drift_allocates_nothing() {
    for variant in ["fast", "dense"] {
        check(variant, 1, false);
        check(variant, 7, false);
        check(variant, 7, true);
    }
}
