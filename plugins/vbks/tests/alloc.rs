//! Steady-state `predict` and `update` allocate nothing on the calling thread (a counting
//! allocator that counts only the test thread's allocations, so the model's own
//! background thread — belief refits, refactorisations — may allocate freely), with 1 and
//! 7 outputs, with and without forgetting, in mixture and single-component mode, and with
//! each drift model (the rebuilds run on the background thread and are adopted here).
#![allow(clippy::unwrap_used)]

use gpn_gp_core::model::OnlineModel;
use gpn_test_support::AllocStream;
use gpn_vbks::{Phase, Vbks};
use serde_json::json;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

/// One predict-then-update of a fresh sample at stamp k ms.
fn step(m: &mut Vbks, s: &mut AllocStream, k: usize) {
    s.draw(2.0, 0.0);
    m.predict(&s.x, &mut s.mean, &mut s.var).unwrap();
    m.update(&s.x, &s.y, k as f64 * 0.001, &s.noise_var)
        .unwrap();
}

fn check(p: usize, extra: serde_json::Value) {
    let d = 4;
    let mut cfg = json!({
        "kernels": ["SE", "PER", "LIN+SE", "PER*SE", "RQ"], "offline_samples": 120,
        "inducing": 16, "inducing_select": 8, "checkpoints": 2, "epochs": 1,
        "init_candidates": 3, "keep": 3, "belief_steps": 50, "belief_steps_warm": 20,
        "posterior_samples": 100, "wait_for_offline": true, "belief_refit_every": 10,
    });
    for (k, v) in extra.as_object().unwrap() {
        cfg[k] = v.clone();
    }
    let mut m = Vbks::from_json(&cfg, d, p).unwrap();
    let mut s = AllocStream::new(d, p, 0.01);
    let mut step = |m: &mut Vbks, k: usize| step(m, &mut s, k);
    for k in 0..400 {
        step(&mut m, k);
    }
    assert_eq!(m.phase(), Phase::Online);
    let refreshes_before = m.drift_counters().map(|c| c.refreshes);
    gpn_alloc_count::arm(true);
    let before = gpn_alloc_count::allocations() + gpn_alloc_count::frees();
    for k in 400..1400 {
        step(&mut m, k);
    }
    // On a loaded machine the background thread may not have finished a rebuild within the
    // 1000 steps: keep stepping (still counting) and give it time, for at most 20 s.
    let mut k = 1400;
    let waited = std::time::Instant::now();
    // Likewise for the first belief refit (adopted in the counted window).
    while (m.counters().belief_refits == 0
        || (refreshes_before.is_some()
            && m.drift_counters().map(|c| c.refreshes) == refreshes_before))
        && waited.elapsed() < std::time::Duration::from_secs(20)
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
        step(&mut m, k);
        k += 1;
    }
    let allocs = (gpn_alloc_count::allocations() + gpn_alloc_count::frees()) - before;
    gpn_alloc_count::arm(false);
    assert_eq!(allocs, 0, "p = {p}, {extra}: {allocs} allocations");
    let c = m.counters();
    assert!(c.belief_refits > 0, "the background refits ran: {c:?}");
    if let (Some(b), Some(d)) = (refreshes_before, m.drift_counters()) {
        // The counted window adopted drift rebuilds (the path that swaps and replays).
        assert!(
            d.refreshes > b,
            "drift rebuilds adopted while counting: {d:?}"
        );
        eprintln!(
            "p = {p}, {extra}: {} rebuilds adopted while counting",
            d.refreshes - b
        );
    }
}

#[test]
fn predict_and_update_allocate_nothing() {
    check(1, json!({}));
    check(7, json!({}));
    check(2, json!({"forgetting": 0.99, "refactor_every": 20}));
    check(3, json!({"predict": 1}));
}

#[test]
fn predict_and_update_allocate_nothing_with_drift() {
    // The sample clock advances 1 ms per update: 1 s over the counted window, so these
    // refresh rates send ~100 rebuilds through the background thread and adopt them.
    check(
        1,
        json!({"drift": {"model": "quadratic", "kappa_per_s": 0.5, "refresh_hz": 100}}),
    );
    check(
        3,
        json!({"drift": {"model": "exponential", "tau_s": 0.2, "refresh_hz": 100}}),
    );
    check(
        2,
        json!({"drift": {"model": "linear", "q_per_s": 0.1, "refresh_hz": 50}, "forgetting": 0.99}),
    );
}

/// The warm-up model predicts, learns, is rebuilt on its own thread each time the samples
/// seen double, and is adopted, all without an allocation on the calling thread.
#[test]
fn the_warm_up_model_allocates_nothing() {
    let (d, p) = (4, 3);
    let cfg = json!({
        "kernels": ["SE", "PER"], "offline_samples": 100_000, "inducing": 16,
        "warmup_samples": 50,
    });
    let mut m = Vbks::from_json(&cfg, d, p).unwrap();
    let mut s = AllocStream::new(d, p, 0.01);
    let mut step = |m: &mut Vbks, k: usize| step(m, &mut s, k);
    let mut k = 0usize;
    while k < 60 {
        step(&mut m, k);
        k += 1;
    }
    m.wait_ready(std::time::Duration::from_secs(20)).unwrap();
    assert_eq!(
        m.warmup_builds(),
        (1, true),
        "built from the first 50 samples"
    );
    gpn_alloc_count::arm(true);
    let before = gpn_alloc_count::allocations() + gpn_alloc_count::frees();
    // Rebuilds start at 100, 200, 400 and 800 samples seen; wait (stepping, counting) for
    // their adoption, at most 20 s.
    let waited = std::time::Instant::now();
    while m.warmup_builds().0 < 5 && waited.elapsed() < std::time::Duration::from_secs(20) {
        step(&mut m, k);
        k += 1;
        if k > 1000 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let allocs = (gpn_alloc_count::allocations() + gpn_alloc_count::frees()) - before;
    gpn_alloc_count::arm(false);
    assert_eq!(
        m.warmup_builds(),
        (5, true),
        "four rebuilds adopted while counting"
    );
    assert_eq!(allocs, 0, "{allocs} allocations");
    assert_eq!(m.phase(), Phase::Collecting);
}
