//! A full pool recycles experts: the cap holds, memory stays constant, predictions stay
//! finite and sensible.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;

#[test]
fn eviction_keeps_memory_bounded() {
    let data = common::kin40k();
    for (variant, eviction) in [("fast", "lru"), ("dense", "lru"), ("fast", "fifo")] {
        let cfg = serde_json::json!({"variant": variant, "eviction": eviction, "max_experts": 8, "hyper": data.hyper});
        let mut gp = SkyGp::from_json(&cfg, 8, 1).unwrap();
        let mem0 = gp.stats().memory_bytes;
        let (mut mu, mut var) = ([0.0], [0.0]);
        let mut se = 0.0;
        for i in 0..3000 {
            if i >= 1 {
                gp.predict(&data.x[i], &mut mu, &mut var).unwrap();
                assert!(mu[0].is_finite() && var[0].is_finite() && var[0] > 0.0);
                if i >= 2000 {
                    se += (mu[0] - data.y[i]).powi(2);
                }
            }
            gp.update(&data.x[i], &[data.y[i]], i as f64 * 0.01, &[0.0])
                .unwrap();
            assert!(gp.n_experts() <= 8);
        }
        let s = gp.stats();
        assert_eq!(s.memory_bytes, mem0, "memory must not grow");
        assert!(
            gp.evictions() > 0,
            "{variant}/{eviction}: no eviction happened"
        );
        assert!(s.samples_stored <= 8 * 50);
        assert_eq!(s.samples_seen, 3000);
        let vy = data.y.iter().map(|v| v * v).sum::<f64>() / data.y.len() as f64;
        let smse = se / 1000.0 / vy;
        println!(
            "{variant}/{eviction}: {} evictions, SMSE over the last 1000 = {smse:.3}",
            gp.evictions()
        );
        assert!(
            smse < 1.0,
            "{variant}/{eviction}: still learns (SMSE {smse})"
        );
    }
}
