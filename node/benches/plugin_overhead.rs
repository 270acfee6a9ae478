//! Criterion benches of the plugin ABI's cost: one predict + update cycle of the same
//! SkyGP model driven in-process (`gpn_skygp` linked as a crate) and through the plugin
//! host (`libgpn_skygp.so`, checked slices, status codes, NaN screening), on a 21-input
//! (7-joint q, q̇, q̈), 7-output stream like the control tick's. Both models are warmed on
//! the same 2,000 samples outside the timing; each iteration then predicts and learns the
//! next sample of a fixed cycle. Nothing is written to disk. A third variant runs the plugin
//! in a process of its own (`model.isolation: process`: shared memory and a futex per
//! call); `plugin_process_paced` measures it at 1 kHz, also on a busy machine.
//!
//! Run: `cargo bench -p gp_node --bench plugin_overhead -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gp_node::plugin_host::{Plugin, SearchPath};
use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;

const D: usize = 21;
const P: usize = 7;

fn sample(k: usize) -> ([f64; D], [f64; P]) {
    let t = k as f64 * 0.002;
    let mut x = [0.0; D];
    for (i, xi) in x.iter_mut().enumerate() {
        let w = 0.5 + 0.13 * i as f64;
        *xi = (w * t * 50.0 + i as f64).sin();
    }
    let mut y = [0.0; P];
    for (j, yj) in y.iter_mut().enumerate() {
        *yj = 0.3 * x[j].sin() * x[j + P] + 0.1 * x[j + 2 * P];
    }
    (x, y)
}

fn config() -> serde_json::Value {
    serde_json::json!({
        "variant": "fast",
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": vec![1.5; D]}
    })
}

fn cycle(model: &mut dyn OnlineModel, k: usize, mean: &mut [f64; P], var: &mut [f64; P]) {
    let (x, y) = sample(k);
    model.predict(black_box(&x), mean, var).expect("predict");
    model
        .update(black_box(&x), black_box(&y), k as f64 * 0.002, &[0.0025; P])
        .expect("update");
}

fn overhead(c: &mut Criterion) {
    let plugin = Plugin::find("skygp", &SearchPath::standard(Vec::<&str>::new()))
        .expect("libgpn_skygp.so next to the bench binary (cargo builds it with gp_node)");
    let mut in_process: Box<dyn OnlineModel> =
        Box::new(SkyGp::from_json(&config(), D, P).expect("skygp config"));
    let mut through_abi: Box<dyn OnlineModel> =
        Box::new(plugin.create_json(&config(), D, P).expect("plugin create"));
    let mut in_a_process: Box<dyn OnlineModel> = Box::new(
        gp_node::plugin_host::process::ProcessModel::spawn(
            &gp_node::plugin_host::process::ProcessOptions {
                server: env!("CARGO_BIN_EXE_gp-node").into(),
                call_timeout: std::time::Duration::from_secs(1),
                create_timeout: std::time::Duration::from_secs(30),
                priority: None,
            },
            &plugin.info().path,
            &config().to_string(),
            D,
            P,
        )
        .expect("plugin process"),
    );
    let (mut mean, mut var) = ([0.0; P], [0.0; P]);
    for k in 0..2000 {
        cycle(in_process.as_mut(), k, &mut mean, &mut var);
        cycle(through_abi.as_mut(), k, &mut mean, &mut var);
        cycle(in_a_process.as_mut(), k, &mut mean, &mut var);
    }

    bench_each(
        c,
        "skygp_fast_21x7_predict_update",
        [
            ("in_process", &mut in_process),
            ("plugin_abi", &mut through_abi),
            ("plugin_process", &mut in_a_process),
        ],
        |model, k| cycle(model, k, &mut mean, &mut var),
    );
    // Predict alone (the control tick's query), same stretch of inputs.
    bench_each(
        c,
        "skygp_fast_21x7_predict",
        [
            ("in_process", &mut in_process),
            ("plugin_abi", &mut through_abi),
            ("plugin_process", &mut in_a_process),
        ],
        |model, k| {
            let (x, _) = sample(k);
            model
                .predict(black_box(&x), &mut mean, &mut var)
                .expect("predict");
        },
    );
}

/// Benchmarks `step` on each named model in group `group`, revisiting one stretch of the
/// stream (samples 2000..2500) so that all of them see the same inputs.
fn bench_each<const N: usize>(
    c: &mut Criterion,
    group: &str,
    models: [(&str, &mut Box<dyn OnlineModel>); N],
    mut step: impl FnMut(&mut dyn OnlineModel, usize),
) {
    let mut group = c.benchmark_group(group);
    for (name, model) in models {
        let mut k = 2000;
        group.bench_function(name, |b| {
            b.iter(|| {
                step(model.as_mut(), k);
                k = 2000 + (k + 1 - 2000) % 500;
            })
        });
    }
    group.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
