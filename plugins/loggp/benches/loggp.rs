//! LoG-GP real-time cost at the robot's shape (d = 21, p = 7) and a benchmark's (d = 8,
//! p = 1), default leaves (N̄ = 100, 256 leaves), every sample admitted: `predict` on a
//! grown tree, and `update` — whose worst case is a split (two children factorised from
//! scratch) or, once the tree is full, an oldest-point replacement.
//!
//! Besides criterion's estimates, the setup prints per-call histograms (p50 / p99 / max,
//! each call timed alone) of 30,000 updates from an empty model (growth, splits, a full
//! tree) and of 20,000 predicts: the tail is the number that matters for a control tick.

use criterion::{Criterion, criterion_group, criterion_main};
use gpn_gp_core::model::OnlineModel;
use gpn_loggp::LogGp;
use std::hint::black_box;
use std::time::Instant;

/// A smooth trajectory-like stream of d inputs and p outputs (5 ms apart).
fn sample(k: usize, x: &mut [f64], y: &mut [f64]) {
    let d = x.len();
    let t = k as f64 * 0.005;
    for (j, v) in x.iter_mut().enumerate() {
        *v = (t * (0.21 + 0.07 * j as f64) * std::f64::consts::TAU + j as f64).sin();
    }
    for (o, v) in y.iter_mut().enumerate() {
        *v = (x[o % d] * 1.3).sin() + 0.5 * x[(o + 3) % d] * x[(o + 5) % d];
    }
}

fn model(d: usize, p: usize) -> LogGp {
    let cfg = serde_json::json!({
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": vec![1.5; d]},
        "admit_interval_s": 0.0,
    });
    LogGp::from_json(&cfg, d, p).expect("config")
}

fn summary(label: &str, mut ns: Vec<u64>) {
    ns.sort_unstable();
    let at =
        |q: f64| ns[((q * ns.len() as f64).ceil() as usize).clamp(1, ns.len()) - 1] as f64 / 1e3;
    println!(
        "{label}: µs over {} calls: p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
        ns.len(),
        at(0.5),
        at(0.99),
        at(0.999),
        ns[ns.len() - 1] as f64 / 1e3
    );
}

fn grown(d: usize, p: usize) -> LogGp {
    let mut m = model(d, p);
    let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
    let nv = vec![0.0025; p];
    let mut ns = Vec::with_capacity(30_000);
    for k in 0..30_000 {
        sample(k, &mut x, &mut y);
        let t0 = Instant::now();
        m.update(&x, &y, k as f64, &nv).expect("update");
        ns.push(t0.elapsed().as_nanos() as u64);
    }
    let c = m.counters();
    summary(
        &format!(
            "update_d{d}_p{p} ({} leaves, {} splits, {} replaced)",
            m.leaves(),
            c.splits,
            c.replaced
        ),
        ns,
    );
    m
}

fn bench(c: &mut Criterion) {
    for (d, p) in [(21usize, 7usize), (8, 1)] {
        let mut m = grown(d, p);
        let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
        let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
        let mut ns = Vec::with_capacity(20_000);
        for k in 0..20_000 {
            sample(40_000 + k, &mut x, &mut y);
            let t0 = Instant::now();
            m.predict(&x, &mut mu, &mut var).expect("predict");
            ns.push(t0.elapsed().as_nanos() as u64);
            black_box(&mu);
        }
        summary(&format!("predict_d{d}_p{p}"), ns);
        let mut k = 60_000;
        c.bench_function(&format!("predict_d{d}_p{p}"), |b| {
            b.iter(|| {
                k += 1;
                sample(k, &mut x, &mut y);
                m.predict(&x, &mut mu, &mut var).expect("predict");
                black_box(&mu);
            })
        });
        let nv = vec![0.0025; p];
        c.bench_function(&format!("update_full_tree_d{d}_p{p}"), |b| {
            b.iter(|| {
                k += 1;
                sample(k, &mut x, &mut y);
                m.update(&x, &y, k as f64, &nv).expect("update");
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
