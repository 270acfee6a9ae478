//! Cost of uncertainty injection (the `drift` key): predict + update per sample with drift
//! off and on, and the cost of one full refresh of every expert.
//!
//! Robot-like synthetic stream: d = 21, p = 7 outputs with distinct kernels (so 7 factors
//! per expert), recommended preset, SkyGP-Fast, Ncal = 4, stamps 10 ms apart (100 Hz).
//! Drift: quadratic, κ = 0.01 per s, σ_n = 0.05, cap 100·σ² → samples live 50 s
//! (5,000 samples), so in steady state samples expire and experts retire.
//!
//! * `drift/step/*`: `predict` then `update` on the next sample, both timed together, on
//!   a model warmed on 12,000 samples. `on_10hz` refreshes at 10 Hz (typical);
//!   `on_1000hz` keeps the refresh thread busy all the time, so every call has results to
//!   adopt (the control thread's worst case). The refresh thread shares the machine's
//!   cores with the timed thread.
//! * `drift/refresh_now`: one `drift_refresh_now` after one more sample (every expert's
//!   ages changed, so every expert is refactored): copy, one refresh cycle over all
//!   experts on the refresh thread, adoption of every result.

use criterion::{Criterion, criterion_group, criterion_main};
use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;
use std::hint::black_box;
use std::time::{Duration, Instant};

mod common;
use common::{Stream, synthetic};

/// A model and its position in the (cycled) stream; stamps keep increasing.
struct Run {
    gp: SkyGp,
    k: usize,
    y: Vec<f64>,
    mu: Vec<f64>,
    var: Vec<f64>,
    nv: Vec<f64>,
}

impl Run {
    fn new(data: &Stream, p: usize, refresh_hz: Option<f64>) -> Self {
        let mut cfg = serde_json::json!({"variant": "fast", "n_cal": 4, "hyper": data.hyper});
        if let Some(hz) = refresh_hz {
            cfg["drift"] = serde_json::json!({"model": "quadratic", "kappa_per_s": 0.01,
                                              "max_var_ratio": 100, "refresh_hz": hz});
        }
        let d = data.x[0].len();
        let mut run = Self {
            gp: SkyGp::from_json(&cfg, d, p).expect("bench config"),
            k: 0,
            y: vec![0.0; p],
            mu: vec![0.0; p],
            var: vec![0.0; p],
            nv: vec![0.0025; p],
        };
        for _ in 0..12_000 {
            run.step(data);
        }
        run
    }

    fn step(&mut self, data: &Stream) {
        let i = self.k % data.y.len();
        for (o, v) in self.y.iter_mut().enumerate() {
            *v = data.y[i] * (1.0 + 0.1 * o as f64);
        }
        self.gp
            .predict(black_box(&data.x[i]), &mut self.mu, &mut self.var)
            .expect("predict");
        self.gp
            .update(&data.x[i], &self.y, self.k as f64 * 0.01, &self.nv)
            .expect("update");
        self.k += 1;
    }
}

fn benches(c: &mut Criterion) {
    let (d, p) = (21, 7);
    let data = synthetic(d, p);
    let mut group = c.benchmark_group("drift");
    for (name, hz) in [
        ("off", None),
        ("on_10hz", Some(10.0)),
        ("on_1000hz", Some(1000.0)),
    ] {
        let mut run = Run::new(&data, p, hz);
        group.bench_function(format!("step/d{d}_p{p}/{name}"), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    run.step(&data);
                }
                t.elapsed()
            })
        });
        if let Some(s) = run.gp.drift_stats() {
            eprintln!(
                "{name}: {} experts, {} samples stored; {s:?}",
                run.gp.n_experts(),
                run.gp.stats().samples_stored
            );
        }
    }
    let mut run = Run::new(&data, p, Some(1e-3));
    run.gp.drift_refresh_now().expect("refresh");
    group.bench_function(format!("refresh_now/d{d}_p{p}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                run.step(&data);
                let t = Instant::now();
                run.gp.drift_refresh_now().expect("refresh");
                total += t.elapsed();
            }
            total
        })
    });
    eprintln!(
        "refresh_now: {} experts, {} samples stored, {:?}",
        run.gp.n_experts(),
        run.gp.stats().samples_stored,
        run.gp.drift_stats()
    );
    group.finish();
}

criterion_group! {
    name = drift;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(drift);
