//! The real-time path allocates nothing: `predict` and `update` — growth, splits and, once
//! the tree is full, oldest-point replacements — make no allocation after `create`.
#![allow(clippy::unwrap_used)]

use gpn_gp_core::model::OnlineModel;
use gpn_loggp::LogGp;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

#[test]
fn update_and_predict_do_not_allocate() {
    let (d, p) = (5, 3);
    let cfg = serde_json::json!({
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![0.9; d]},
        "leaf_capacity": 20, "max_leaves": 16, "split_value": "median",
    });
    let mut m = LogGp::from_json(&cfg, d, p).unwrap();
    let (mut x, mut y, nv) = (vec![0.0; d], vec![0.0; p], vec![0.01; p]);
    let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
    let allocs = gpn_alloc_count::count_allocations_and_frees(|| {
        for k in 0..3000 {
            for (j, v) in x.iter_mut().enumerate() {
                *v = (k as f64 * 0.013 * (1.0 + j as f64)).sin();
            }
            for (o, v) in y.iter_mut().enumerate() {
                *v = (x[0] * (o + 1) as f64).sin() + x[1];
            }
            m.predict(&x, &mut mu, &mut var).unwrap();
            m.update(&x, &y, k as f64 * 0.01, &nv).unwrap();
        }
    });
    let c = m.counters();
    assert!(
        c.splits == 15 && c.replaced > 0,
        "the run split and replaced: {c:?}"
    );
    assert_eq!(allocs, 0, "{allocs} allocations or frees in predict/update");
}
