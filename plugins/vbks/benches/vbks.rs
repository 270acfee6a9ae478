//! VBKS ensemble predict and update cost per sample in the online phase, robot-sized:
//! d = 21 inputs, p = 7 outputs, K̃ = 5 kept kernels, M ∈ {64, 128} inducing inputs. The
//! model is built in setup (a short offline phase on a smooth synthetic stream, then 500
//! online samples); the timed routine measures only `predict` (mixture) or only `update`
//! (`iter_custom`), keeping the predict-then-update protocol with the other call untimed.
//! Numbers go in `docs/results/vbks-eval.md`, never in asserts.

use criterion::{Criterion, criterion_group, criterion_main};
use gpn_gp_core::model::OnlineModel;
use gpn_vbks::Vbks;
use std::hint::black_box;
use std::time::{Duration, Instant};

struct Stream {
    s: u64,
    t: f64,
}

impl Stream {
    fn next(&mut self, d: usize, p: usize) -> (Vec<f64>, Vec<f64>) {
        self.s ^= self.s << 13;
        self.s ^= self.s >> 7;
        self.s ^= self.s << 17;
        let u = (self.s >> 11) as f64 / (1u64 << 53) as f64;
        self.t += 0.01;
        let x: Vec<f64> = (0..d)
            .map(|j| (self.t * (0.3 + 0.07 * j as f64) + j as f64).sin() + 0.05 * u)
            .collect();
        let y: Vec<f64> = (0..p)
            .map(|o| (x[o] * 1.3).sin() + 0.4 * x[o + 7] * x[o + 14] + 0.01 * u)
            .collect();
        (x, y)
    }
}

fn model(m: usize) -> (Vbks, Stream) {
    let (d, p) = (21, 7);
    let cfg = serde_json::json!({
        "kernels": ["SE", "RQ", "LIN+SE", "PER*SE", "SE*SE", "LIN*RQ"],
        "offline_samples": 400, "inducing": m, "inducing_select": 16, "keep": 5,
        "checkpoints": 2, "epochs": 1, "min_steps": 5, "final_steps": 10,
        "init_candidates": 3, "starts": 1, "belief_steps": 100,
        "posterior_samples": 200, "wait_for_offline": true,
    });
    let mut model = Vbks::from_json(&cfg, d, p).expect("config");
    let mut s = Stream {
        s: 0x2545_f491_4f6c_dd1d,
        t: 0.0,
    };
    for k in 0..900 {
        let (x, y) = s.next(d, p);
        model
            .update(&x, &y, k as f64 * 1e-3, &[1e-4; 7])
            .expect("update");
    }
    assert_eq!(model.stats().experts, 5);
    (model, s)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("vbks_d21_p7_k5");
    group.measurement_time(Duration::from_secs(5));
    for m in [64usize, 128] {
        let (mut mdl, mut s) = model(m);
        let (mut mean, mut var) = ([0.0; 7], [0.0; 7]);
        group.bench_function(format!("predict_m{m}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for k in 0..iters {
                    let (x, y) = s.next(21, 7);
                    let t = Instant::now();
                    mdl.predict(black_box(&x), &mut mean, &mut var)
                        .expect("predict");
                    total += t.elapsed();
                    mdl.update(&x, &y, k as f64, &[1e-4; 7]).expect("update");
                }
                total
            })
        });
        group.bench_function(format!("update_m{m}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for k in 0..iters {
                    let (x, y) = s.next(21, 7);
                    mdl.predict(&x, &mut mean, &mut var).expect("predict");
                    let t = Instant::now();
                    mdl.update(black_box(&x), &y, k as f64, &[1e-4; 7])
                        .expect("update");
                    total += t.elapsed();
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
