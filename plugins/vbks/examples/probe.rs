//! Debug probe: one kernel on a synthetic set — bound at the true θ, the candidates, and
//! the SGD path. `cargo run --release -p gpn_vbks --example probe -- A 0 "(PER+RQ)*LIN"`
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/synthetic.rs"]
mod synthetic;

use gpn_vbks::expr::Expr;
use gpn_vbks::init::{self, DataSummary};
use gpn_vbks::kernel::KernelSpec;
use gpn_vbks::local::{Batch, LocalFit, LocalSettings};
use gpn_vbks::offline::collapsed_bound;
use gpn_vbks::rng::Rng;
use gpn_vbks::scaler::Scaler;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = match args[1].as_str() {
        "B" => synthetic::Which::B,
        "C" => synthetic::Which::C,
        _ => synthetic::Which::A,
    };
    let seed: u64 = args[2].parse().unwrap();
    let text = &args[3];
    let lr: f64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0.01);
    let steps: usize = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let (x, y) = synthetic::generate(which, 1000, seed);
    let sc = Scaler::fit(&x, &y, 1, 1, true);
    let xs: Vec<f64> = x
        .iter()
        .map(|v| (v - sc.x_mean[0]) / sc.x_scale[0])
        .collect();
    let ys: Vec<f64> = y
        .iter()
        .map(|v| (v - sc.y_mean[0]) / sc.y_scale[0])
        .collect();
    let mut rng = Rng::new(seed);
    let mm: usize = std::env::var("M")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let z = gpn_vbks::kmeans::kmeans(&xs, 1, mm, 25, &mut rng);
    let spec = KernelSpec::compile(&Expr::parse(text).unwrap(), 1, &|_| None).unwrap();
    println!(
        "{} params: {:?}",
        spec.expr(),
        spec.params().iter().map(|p| p.name()).collect::<Vec<_>>()
    );
    if text == "LIN+PER" {
        let (sx, sy) = (sc.x_scale[0], sc.y_scale[0]);
        let psi_true = vec![
            (10.0 * sy / sx).ln(),
            (1.0 / (sy * sy)).ln(),
            1.0f64.ln(),
            (4.0 / sx).ln(),
            (0.0025 / (sy * sy)).ln(),
        ];
        println!(
            "sx {sx} sy {sy} bound at truth {}",
            collapsed_bound(&spec, &psi_true, &z, &xs, &ys, 1, 1e-6)
        );
    }
    let summary = DataSummary::of(&xs, 1, &mut rng);
    for c in init::candidates(&spec, &summary, 90) {
        let b = collapsed_bound(&spec, &c, &z, &xs, &ys, 1, 1e-6);
        println!(
            "cand {:>10.2} {:?}",
            b,
            c.iter()
                .map(|v| format!("{:.3}", v.exp()))
                .collect::<Vec<_>>()
        );
    }
    let cands = init::candidates(&spec, &summary, 90);
    let mut best = (f64::NEG_INFINITY, cands[0].clone());
    for c in cands {
        let b = collapsed_bound(&spec, &c, &z, &xs[..512], &ys[..512], 1, 1e-6);
        if b > best.0 {
            best = (b, c);
        }
    }
    let mut fit = LocalFit::new(spec.clone(), best.1.clone(), mm, 1, lr);
    let ng: f64 = std::env::var("NG")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.1);
    let settings = LocalSettings {
        natgrad_step: ng,
        prior_sd: 1.0,
        min_noise_var: 1e-6,
        max_log_change: 8.0,
        jitter_rel: 1e-6,
    };
    let bs: usize = std::env::var("BS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(32);
    let mut bx = vec![0.0; bs];
    let mut by = vec![0.0; bs];
    for s in 0..steps {
        for j in 0..bs {
            let i = if bs == 1000 { j } else { rng.below(1000) };
            bx[j] = xs[i];
            by[j] = ys[i];
        }
        let jitter = fit.jitter(&z, 1, 1e-6);
        let batch = Batch {
            z: &z,
            x: &bx,
            y: &by,
            d: 1,
            p: 1,
            scale: 1000.0 / bs as f64,
            jitter,
        };
        fit.step(&batch, &settings);
        if s % (steps / 10) == 0 || s + 1 == steps {
            let b = collapsed_bound(&spec, &fit.psi, &z, &xs, &ys, 1, 1e-6);
            println!(
                "step {s:>5} mb {:>12.2} collapsed {:>10.2} {:?}",
                fit.last_bound,
                b,
                fit.psi
                    .iter()
                    .map(|v| format!("{:.3}", v.exp()))
                    .collect::<Vec<_>>()
            );
        }
    }
}
