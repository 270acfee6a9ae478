//! SkyGP predict and update cost per sample in steady state.
//!
//! * KIN40K (d = 8, the reference's stream and hyperparameters): Fast and Dense,
//!   Ncal ∈ {1, 2, 4}, p ∈ {1, 7} (7 outputs sharing one factorisation).
//! * Synthetic d = 21 (robot-like, 7 outputs with distinct kernels) and d = 32: Ncal = 4.
//!
//! Each model is warmed on 5,000 samples in setup. The timed routine measures only
//! `predict` or only `update` (`iter_custom`); the other call runs untimed so the stream
//! keeps the predict-then-update protocol and the update reuses the prediction's cache.

use criterion::{Criterion, criterion_group, criterion_main};
use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;
use std::hint::black_box;
use std::time::{Duration, Instant};

mod common;
use common::{Stream, synthetic};

fn kin40k() -> Stream {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/kin40k.csv"
    );
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').filter_map(|v| v.parse().ok()).collect())
        .filter(|r: &Vec<f64>| r.len() == 9)
        .collect();
    let n = rows.len().max(1) as f64;
    let mean: Vec<f64> = (0..9)
        .map(|j| rows.iter().map(|r| r[j]).sum::<f64>() / n)
        .collect();
    let ell = [
        2.8057, 2.9993, 1.5037, 1.6650, 1.6147, 1.2950, 1.3316, 1.9434,
    ];
    Stream {
        x: rows
            .iter()
            .map(|r| (0..8).map(|j| r[j] - mean[j]).collect())
            .collect(),
        y: rows.iter().map(|r| r[8] - mean[8]).collect(),
        hyper: serde_json::json!({"sigma_f": 1.2074, "sigma_n": 0.082864, "lengthscales": ell}),
    }
}

fn targets(y: f64, p: usize, out: &mut [f64]) {
    for (o, v) in out.iter_mut().enumerate().take(p) {
        *v = y * (1.0 + 0.1 * o as f64);
    }
}

fn bench_case(c: &mut Criterion, name: &str, data: &Stream, variant: &str, n_cal: usize, p: usize) {
    if data.y.len() < 6000 {
        return; // Data file missing.
    }
    let d = data.x[0].len();
    let cfg = serde_json::json!({"preset": "reference", "variant": variant, "n_cal": n_cal, "hyper": data.hyper});
    let mut gp = SkyGp::from_json(&cfg, d, p).expect("bench config");
    let (mut mu, mut var, mut y, nv) = (vec![0.0; p], vec![0.0; p], vec![0.0; p], vec![0.0; p]);
    for i in 0..5000 {
        targets(data.y[i], p, &mut y);
        gp.predict(&data.x[i], &mut mu, &mut var).expect("predict");
        gp.update(&data.x[i], &y, i as f64, &nv).expect("update");
    }
    let n = data.y.len();
    let mut i = 5000;
    let id = format!("{name}/{variant}/ncal{n_cal}/p{p}");
    let mut group = c.benchmark_group("skygp");
    group.bench_function(format!("predict/{id}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                i = if i + 1 >= n { 5000 } else { i + 1 };
                targets(data.y[i], p, &mut y);
                let t = Instant::now();
                gp.predict(black_box(&data.x[i]), &mut mu, &mut var)
                    .expect("predict");
                total += t.elapsed();
                gp.update(&data.x[i], &y, i as f64, &nv).expect("update");
            }
            total
        })
    });
    group.bench_function(format!("update/{id}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                i = if i + 1 >= n { 5000 } else { i + 1 };
                targets(data.y[i], p, &mut y);
                gp.predict(&data.x[i], &mut mu, &mut var).expect("predict");
                let t = Instant::now();
                gp.update(black_box(&data.x[i]), &y, i as f64, &nv)
                    .expect("update");
                total += t.elapsed();
            }
            total
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let kin = kin40k();
    for variant in ["fast", "dense"] {
        for n_cal in [1, 2, 4] {
            for p in [1, 7] {
                bench_case(c, "kin40k_d8", &kin, variant, n_cal, p);
            }
        }
    }
    let robot = synthetic(21, 7);
    let wide = synthetic(32, 1);
    for variant in ["fast", "dense"] {
        bench_case(c, "synthetic_d21_distinct", &robot, variant, 4, 7);
        bench_case(c, "synthetic_d32", &wide, variant, 4, 1);
    }
}

criterion_group! {
    name = skygp;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_millis(600));
    targets = benches
}
criterion_main!(skygp);
