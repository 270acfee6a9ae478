//! Cost of uncertainty injection (`drift` key) at the robot's shape: d = 21, p = 7, a full
//! 1024-sample window (64 blocks × 16), samples stamped 1 ms apart, drift quadratic with a
//! 10 Hz refresh (one full rebuild of every output's factor per 100 samples; nothing expires
//! at this rate). Drift off vs on for: `predict` (inline model), one inline `update` (the
//! block path on the calling thread, refreshes included), and one background `update` (the
//! control thread's enqueue). The setup prints per-call histograms (p50 / p99 / max) of
//! inline updates, where the refresh's rebuild shows in the tail.

use criterion::{Criterion, criterion_group, criterion_main};
use gpn_gp_core::model::OnlineModel;
use gpn_rcagp::RcaGp;
use std::hint::black_box;
use std::time::{Duration, Instant};

const D: usize = 21;
const P: usize = 7;

fn sample(k: usize, x: &mut [f64], y: &mut [f64]) {
    let t = k as f64 * 0.005;
    for (j, v) in x.iter_mut().enumerate() {
        *v = (t * (0.21 + 0.07 * j as f64) * std::f64::consts::TAU + j as f64).sin();
    }
    for (o, v) in y.iter_mut().enumerate() {
        *v = (x[o % D] * 1.3).sin() + 0.5 * x[(o + 3) % D] * x[(o + 5) % D];
    }
}

fn model(drift: bool, background: bool) -> RcaGp {
    let mut cfg = serde_json::json!({
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": vec![1.5; D]},
        "blocks": 64, "block_size": 16, "background": background, "refit_every_blocks": 0,
    });
    if drift {
        cfg["drift"] = serde_json::json!({"model": "quadratic", "kappa_per_s": 0.05,
                                          "max_var_ratio": 100, "refresh_hz": 10});
    }
    let mut m = RcaGp::from_json(&cfg, D, P).expect("config");
    let (mut x, mut y) = ([0.0; D], [0.0; P]);
    for k in 0..3008 {
        sample(k, &mut x, &mut y);
        m.update(&x, &y, k as f64 * 0.001, &[0.0025; P])
            .expect("update");
    }
    m.wait_idle(Duration::from_secs(60));
    m
}

fn label(drift: bool) -> &'static str {
    if drift { "on" } else { "off" }
}

fn update_histogram(m: &mut RcaGp, drift: bool) {
    let (mut x, mut y) = ([0.0; D], [0.0; P]);
    // Calls classified by what they did: a drift refresh (counter moved; read outside the
    // timed call), a block commit (every 16th admission), or neither.
    let mut classes: [(&str, Vec<u64>); 3] = [
        ("refresh", Vec::new()),
        ("commit", Vec::new()),
        ("other", Vec::new()),
    ];
    let mut all: Vec<u64> = Vec::with_capacity(5000);
    let mut refreshes = m.drift_counters().expect("counters").1;
    for k in 3008..8008 {
        sample(k, &mut x, &mut y);
        let t0 = Instant::now();
        m.update(&x, &y, k as f64 * 0.001, &[0.0025; P])
            .expect("update");
        let ns = t0.elapsed().as_nanos() as u64;
        all.push(ns);
        let now = m.drift_counters().expect("counters").1;
        let class = if now != refreshes {
            0
        } else if (k - 3008) % 16 == 15 {
            1
        } else {
            2
        };
        refreshes = now;
        classes[class].1.push(ns);
    }
    let stats = |v: &mut Vec<u64>| -> String {
        if v.is_empty() {
            return "none".into();
        }
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64 / 1e3;
        v.sort_unstable();
        let at = |q: f64| v[((q * v.len() as f64) as usize).min(v.len() - 1)] as f64 / 1e3;
        format!(
            "{} calls: mean {mean:.1}  p50 {:.1}  p99 {:.1}  max {:.1}",
            v.len(),
            at(0.5),
            at(0.99),
            v[v.len() - 1] as f64 / 1e3
        )
    };
    println!(
        "inline update µs, drift {}: all {}",
        label(drift),
        stats(&mut all)
    );
    for (name, v) in classes.iter_mut() {
        println!(
            "inline update µs, drift {}: {name} {}",
            label(drift),
            stats(v)
        );
    }
}

fn bench(c: &mut Criterion) {
    for drift in [false, true] {
        let mut m = model(drift, false);
        update_histogram(&mut m, drift);
        let (mut x, mut y) = ([0.0; D], [0.0; P]);
        let (mut mu, mut var) = ([0.0; P], [0.0; P]);
        let mut k = 0usize;
        c.bench_function(
            &format!("predict_d21_p7_n1024_drift_{}", label(drift)),
            |b| {
                b.iter(|| {
                    k += 1;
                    sample(9000 + k % 5000, &mut x, &mut y);
                    m.predict(black_box(&x), &mut mu, &mut var)
                        .expect("predict");
                    black_box(&mu);
                })
            },
        );
        let mut k = 8008usize;
        c.bench_function(
            &format!("inline_update_d21_p7_n1024_drift_{}", label(drift)),
            |b| {
                b.iter(|| {
                    sample(k, &mut x, &mut y);
                    m.update(&x, &y, k as f64 * 0.001, &[0.0025; P])
                        .expect("update");
                    k += 1;
                })
            },
        );
        let mut bg = model(drift, true);
        let mut k = 3008usize;
        c.bench_function(
            &format!("background_update_d21_p7_n1024_drift_{}", label(drift)),
            |b| {
                b.iter(|| {
                    sample(k, &mut x, &mut y);
                    bg.update(&x, &y, k as f64 * 0.001, &[0.0025; P])
                        .expect("update");
                    k += 1;
                })
            },
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
