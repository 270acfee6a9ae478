//! Per-call latency histogram of `predict` and `update` in the online phase, robot-sized:
//! d = 21, p = 7, K̃ = 5 kept kernels, M inducing inputs (default 128). Each call is timed
//! alone (`Instant`), 20,000 predict-then-update steps after warm-up; prints the
//! percentiles. `cargo run --release -p gpn_vbks --example latency -- [M]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpn_gp_core::model::OnlineModel;
use gpn_vbks::Vbks;
use std::time::Instant;

fn main() {
    let m: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(128);
    let (d, p) = (21, 7);
    let cfg = serde_json::json!({
        "kernels": ["SE", "RQ", "LIN+SE", "PER*SE", "SE*SE", "LIN*RQ"],
        "offline_samples": 400, "inducing": m, "inducing_select": 16, "keep": 5,
        "checkpoints": 2, "epochs": 1, "min_steps": 5, "final_steps": 10,
        "init_candidates": 3, "starts": 1, "belief_steps": 100,
        "posterior_samples": 200, "wait_for_offline": true,
    });
    let mut model = Vbks::from_json(&cfg, d, p).unwrap();
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut t = 0.0f64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let u = (s >> 11) as f64 / (1u64 << 53) as f64;
        t += 0.01;
        let x: Vec<f64> = (0..d)
            .map(|j| (t * (0.3 + 0.07 * j as f64) + j as f64).sin() + 0.05 * u)
            .collect();
        let y: Vec<f64> = (0..p)
            .map(|o| (x[o] * 1.3).sin() + 0.4 * x[o + 7] * x[o + 14] + 0.01 * u)
            .collect();
        (x, y)
    };
    let (mut mean, mut var) = ([0.0; 7], [0.0; 7]);
    for k in 0..2000 {
        let (x, y) = next();
        model.predict(&x, &mut mean, &mut var).unwrap();
        model.update(&x, &y, k as f64 * 1e-3, &[1e-4; 7]).unwrap();
    }
    assert_eq!(model.stats().experts, 5);
    let n = 20_000;
    let (mut pred, mut upd) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for k in 0..n {
        let (x, y) = next();
        let t0 = Instant::now();
        model.predict(&x, &mut mean, &mut var).unwrap();
        pred.push(t0.elapsed().as_nanos() as u64);
        let t0 = Instant::now();
        model.update(&x, &y, k as f64 * 1e-3, &[1e-4; 7]).unwrap();
        upd.push(t0.elapsed().as_nanos() as u64);
    }
    for (name, v) in [("predict", &mut pred), ("update", &mut upd)] {
        v.sort_unstable();
        let q = |f: f64| v[((f * v.len() as f64) as usize).min(v.len() - 1)] as f64 / 1e3;
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64 / 1e3;
        println!(
            "{name:<8} M = {m}: mean {mean:.1} µs  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1} ({} calls)",
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            q(1.0),
            v.len()
        );
    }
}
