//! RCaGP real-time cost: `predict` of 7 outputs from a full 1024-sample window (64 blocks ×
//! 16, d = 21, the robot's shape) and of 1 output (d = 8); the block rebuild of the inline
//! path (one `update` that completes a block).
//!
//! Besides criterion's estimate, the setup prints a per-call histogram of 20,000 predicts
//! (p50 / p99 / max, each call timed alone), the number the acceptance asks for.

use criterion::{Criterion, criterion_group, criterion_main};
use gpn_gp_core::model::OnlineModel;
use gpn_rcagp::RcaGp;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A smooth trajectory-like stream of d inputs and p outputs.
fn sample(k: usize, d: usize, p: usize, x: &mut [f64], y: &mut [f64]) {
    let t = k as f64 * 0.005;
    for (j, v) in x.iter_mut().enumerate() {
        *v = (t * (0.21 + 0.07 * j as f64) * std::f64::consts::TAU + j as f64).sin();
    }
    for (o, v) in y.iter_mut().enumerate() {
        *v = (x[o % d] * 1.3).sin()
            + 0.5 * x[(o + 3) % d] * x[(o + 5) % d]
            + 0.01 * (k as f64 * 7.1).sin();
    }
    let _ = p;
}

fn model(d: usize, p: usize, background: bool) -> RcaGp {
    let cfg = serde_json::json!({
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": vec![1.5; d]},
        "blocks": 64, "block_size": 16, "background": background, "refit_every_blocks": 0,
    });
    let mut m = RcaGp::from_json(&cfg, d, p).expect("config");
    let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
    let nv = vec![0.0025; p];
    // 3008 = 188 full blocks: the open block starts empty.
    for k in 0..3008 {
        sample(k, d, p, &mut x, &mut y);
        m.update(&x, &y, k as f64 * 0.001, &nv).expect("update");
    }
    m.wait_idle(Duration::from_secs(60));
    m
}

fn histogram(m: &mut RcaGp, d: usize, p: usize, label: &str) {
    let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
    let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
    let mut ns: Vec<u64> = Vec::with_capacity(20_000);
    for k in 0..20_000 {
        sample(5000 + k, d, p, &mut x, &mut y);
        let t0 = Instant::now();
        m.predict(&x, &mut mu, &mut var).expect("predict");
        ns.push(t0.elapsed().as_nanos() as u64);
        black_box(&mu);
    }
    ns.sort_unstable();
    let at =
        |q: f64| ns[((q * ns.len() as f64).ceil() as usize).clamp(1, ns.len()) - 1] as f64 / 1e3;
    println!(
        "{label}: per-call predict µs over {} calls: p50 {:.1}  p99 {:.1}  max {:.1}  (window {} points)",
        ns.len(),
        at(0.5),
        at(0.99),
        ns[ns.len() - 1] as f64 / 1e3,
        m.snapshot().n_points()
    );
}

fn bench_predict(c: &mut Criterion) {
    for (d, p) in [(21usize, 7usize), (8, 1)] {
        let mut m = model(d, p, false);
        let label = format!("predict_d{d}_p{p}_n1024");
        histogram(&mut m, d, p, &label);
        let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
        let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
        let mut k = 0usize;
        c.bench_function(&label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    k += 1;
                    sample(9000 + k % 5000, d, p, &mut x, &mut y);
                    let t0 = Instant::now();
                    m.predict(black_box(&x), &mut mu, &mut var)
                        .expect("predict");
                    total += t0.elapsed();
                }
                total
            })
        });
    }
}

fn bench_block_rebuild(c: &mut Criterion) {
    let (d, p) = (21, 7);
    let mut m = model(d, p, false);
    let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
    let nv = vec![0.0025; p];
    let mut k = 3008usize;
    c.bench_function("inline_block_commit_and_rebuild_d21_p7_n1024", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // 15 untimed admissions, then the 16th completes a block: timed.
                for _ in 0..15 {
                    sample(k, d, p, &mut x, &mut y);
                    m.update(&x, &y, 0.0, &nv).expect("update");
                    k += 1;
                }
                sample(k, d, p, &mut x, &mut y);
                k += 1;
                let t0 = Instant::now();
                m.update(&x, &y, 0.0, &nv).expect("update");
                total += t0.elapsed();
            }
            total
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4));
    targets = bench_predict, bench_block_rebuild
}
criterion_main!(benches);
