//! Steady-state `predict` and `update` allocate nothing (counting global allocator),
//! for Fast and Dense, 1 and 7 outputs, both presets.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use common::Rng;
use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

fn check(variant: &str, preset: &str, p: usize, distinct_kernels: bool) {
    let d = 6;
    let hyper = if distinct_kernels {
        serde_json::Value::Array(
            (0..p)
                .map(|o| serde_json::json!({"sigma_f": 1.0 + o as f64 * 0.1, "sigma_n": 0.1, "lengthscales": vec![0.6 + 0.05 * o as f64; d]}))
                .collect(),
        )
    } else {
        serde_json::json!({"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![0.6; d]})
    };
    // A small pool so that eviction is exercised too.
    let cfg = serde_json::json!({"variant": variant, "preset": preset, "n_bar": 20, "max_experts": 30, "hyper": hyper});
    let mut gp = SkyGp::from_json(&cfg, d, p).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut x, mut y, nv) = (vec![0.0; d], vec![0.0; p], vec![0.01; p]);
    let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
    let mut step = |gp: &mut SkyGp, k: usize, with_predict: bool| {
        for v in x.iter_mut() {
            *v = rng.next() * 2.0;
        }
        for (o, v) in y.iter_mut().enumerate() {
            *v = (x[0] * (o + 1) as f64).sin() + x[1] * x[2];
        }
        if with_predict {
            gp.predict(&x, &mut mu, &mut var).unwrap();
        }
        gp.update(&x, &y, k as f64 * 0.002, &nv).unwrap();
    };
    for k in 0..3000 {
        step(&mut gp, k, true);
    }
    gpn_alloc_count::reset();
    gpn_alloc_count::arm_all(true);
    for k in 3000..5000 {
        step(&mut gp, k, k % 7 != 0); // some updates without a preceding predict
    }
    gpn_alloc_count::arm_all(false);
    let n = gpn_alloc_count::allocations();
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
