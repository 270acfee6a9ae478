//! The expert pool grows with what the model holds: a new model holds one chunk of
//! experts, not `max_experts`; the grower thread prepares the next chunks while the caller
//! (at a control rate) allocates nothing; and the results do not depend on whether the
//! grower kept up.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use common::{alloc_hyper, feed};
use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;
use gpn_test_support::AllocStream;
use std::time::Duration;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

const D: usize = 6;
const P: usize = 7;

fn model(max_experts: usize, n_bar: usize) -> SkyGp {
    let cfg = serde_json::json!({
        "variant": "dense", "n_bar": n_bar, "max_experts": max_experts,
        "hyper": alloc_hyper(D, P, true),
    });
    SkyGp::from_json(&cfg, D, P).unwrap()
}

#[test]
fn memory_follows_the_experts_held() {
    // The default pool size, the node's expert size (N̄ 50, 7 outputs).
    let gp = model(1024, 50);
    let per = gp.bytes_per_expert();
    let fresh = gp.stats().memory_bytes as usize;
    assert_eq!(gp.experts_made(), 32, "one chunk at creation");
    // The first chunk, the next one in preparation and fixed buffers: far below the 1024
    // experts of the old pool.
    assert!(
        fresh < 70 * per,
        "a fresh model holds {fresh} bytes, {per} per expert"
    );
    // Small experts fill fast, so new ones are needed often.
    let mut gp = model(1024, 5);
    let per = gp.bytes_per_expert();
    let mut s = AllocStream::new(D, P, 0.01);
    for k in 0..3000 {
        s.draw(2.0, 0.0);
        feed(&mut gp, &mut s, k as f64 * 0.001, true);
    }
    let made = gp.experts_made();
    let used = gp.stats().memory_bytes as usize;
    assert!(made > 100, "the pool grew to {made} experts");
    // The experts made, and the next chunk if one is in preparation, plus fixed buffers
    // (the reserved list of 1024 entries among them).
    let fixed = model(1024, 5).stats().memory_bytes as usize - 64 * per;
    let chunk = used - fixed - made * per;
    assert!(
        chunk == 0 || chunk == 32 * per,
        "{used} bytes for {made} experts of {per} bytes"
    );
    assert!(gp.stats().experts as usize <= made);
}

#[test]
fn growing_at_a_control_rate_allocates_nothing_on_the_caller() {
    let mut gp = model(400, 5);
    let mut s = AllocStream::new(D, P, 0.01);
    for k in 0..50 {
        s.draw(2.0, 0.0);
        feed(&mut gp, &mut s, k as f64 * 0.001, true);
    }
    let before = gp.experts_made();
    // 1 kHz, like the control tick: the grower has milliseconds per expert needed.
    let n = gpn_alloc_count::count_allocations(|| {
        for k in 50..1500 {
            s.draw(2.0, 0.0);
            feed(&mut gp, &mut s, k as f64 * 0.001, k % 7 != 0);
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let after = gp.experts_made();
    assert!(
        after >= before + 2 * 32,
        "the pool grew from {before} to {after} experts"
    );
    assert_eq!(gp.grown_late(), 0, "the grower fell behind");
    assert_eq!(n, 0, "{n} allocations on the caller while the pool grew");
}

#[test]
fn results_do_not_depend_on_whether_the_grower_kept_up() {
    let run = |pause: bool| {
        let mut gp = model(100, 5);
        let mut s = AllocStream::new(D, P, 0.01);
        let mut bits = Vec::new();
        for k in 0..1200 {
            s.draw(2.0, 0.0);
            feed(&mut gp, &mut s, k as f64 * 0.001, true);
            bits.extend(s.mean.iter().chain(&s.var).map(|v| v.to_bits()));
            if pause {
                std::thread::sleep(Duration::from_micros(300));
            }
        }
        assert_eq!(gp.experts_made(), 100, "the pool grew to max_experts");
        (bits, gp.grown_late(), gp.evictions(), gp.stats().experts)
    };
    let (calm, _, ev_calm, ex_calm) = run(true);
    let (rushed, late, ev_rushed, ex_rushed) = run(false);
    assert!(ev_calm > 0, "the pool filled and recycled");
    assert_eq!((ev_calm, ex_calm), (ev_rushed, ex_rushed));
    println!("without pauses the grower was late {late} times");
    assert!(
        calm == rushed,
        "predictions differ (grower late {late} times)"
    );
}
