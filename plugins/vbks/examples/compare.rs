//! Stream a CSV through one VBKS model and score, on the same stream and with the protocol
//! of `gp-node eval` (whole-file centring, step 0 not predicted, predict-then-update,
//! prequential SMSE/MSLL from `gpn_gp_core::metrics` with σ_n² from the hyperparameters and
//! a 1e-3 variance floor), the mixture *and* every kept kernel alone — one offline phase
//! for all. Used for `docs/results/vbks-eval.md`:
//!
//! `cargo run --release -p gpn_vbks --example compare -- DATA.csv INPUTS TARGETS HYPER.json KEY|- [key=value ...]`
//! with INPUTS/TARGETS as `x1..x8` / `y` or `x_0..x_20` / `y_0..y_6` (names first..last).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpn_gp_core::metrics::{MetricsConfig, Prequential};
use gpn_gp_core::model::OnlineModel;
use gpn_vbks::Vbks;
use gpn_vbks::config::PredictWith;

fn range(spec: &str, header: &[String]) -> Vec<usize> {
    let (a, b) = spec.split_once("..").unwrap_or((spec, spec));
    let ia = header.iter().position(|h| h == a).expect("column");
    let ib = header.iter().position(|h| h == b).expect("column");
    (ia..=ib).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let (ix, iy) = (range(&args[2], &header), range(&args[3], &header));
    let (d, p) = (ix.len(), iy.len());
    let mut x = Vec::new();
    let mut y = Vec::new();
    for line in lines {
        let cells: Vec<f64> = line
            .split(',')
            .map(|c| c.trim().parse().unwrap_or(f64::NAN))
            .collect();
        let row_x: Vec<f64> = ix.iter().map(|&i| cells[i]).collect();
        let row_y: Vec<f64> = iy.iter().map(|&i| cells[i]).collect();
        if row_x.iter().chain(&row_y).all(|v| v.is_finite()) {
            x.extend(row_x);
            y.extend(row_y);
        }
    }
    let n = x.len() / d;
    for j in 0..d {
        let m = (0..n).map(|i| x[i * d + j]).sum::<f64>() / n as f64;
        (0..n).for_each(|i| x[i * d + j] -= m);
    }
    for o in 0..p {
        let m = (0..n).map(|i| y[i * p + o]).sum::<f64>() / n as f64;
        (0..n).for_each(|i| y[i * p + o] -= m);
    }
    let mut cfg = serde_json::json!({"wait_for_offline": true});
    let noise_var: Vec<f64>;
    if args[4] != "-" {
        let h: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&args[4]).unwrap()).unwrap();
        let h = if args[5] == "-" {
            h
        } else {
            h["datasets"][&args[5]].clone()
        };
        let entries: Vec<serde_json::Value> = match h.as_array() {
            Some(list) => list.clone(),
            None => vec![h.clone(); p],
        };
        noise_var = entries
            .iter()
            .map(|e| e["sigma_n"].as_f64().unwrap().powi(2))
            .collect();
        cfg["hyper"] = serde_json::Value::Array(
            entries
                .iter()
                .map(|e| {
                    serde_json::json!({"sigma_f": e["sigma_f"], "sigma_n": e["sigma_n"],
                        "lengthscales": e["lengthscales"]})
                })
                .collect(),
        );
    } else {
        panic!("pass a hyperparameter file (as gp-node eval uses for the MSLL's noise)");
    }
    for kv in &args[6.min(args.len())..] {
        let (k, v) = kv.split_once('=').unwrap();
        cfg[k] = serde_json::from_str(v).unwrap_or(serde_json::Value::String(v.into()));
    }
    let mut model = Vbks::from_json(&cfg, d, p).unwrap();
    let keep = model.config().keep;
    let mk = || Prequential::new(MetricsConfig::new(noise_var.clone()));
    let mut mix = mk();
    let mut single: Vec<Prequential> = (0..keep).map(|_| mk()).collect();
    let (mut mean, mut var) = (vec![0.0; p], vec![0.0; p]);
    let mut predict_ns = Vec::with_capacity(n);
    let t0 = std::time::Instant::now();
    for i in 0..n {
        let (xi, yi) = (&x[i * d..(i + 1) * d], &y[i * p..(i + 1) * p]);
        if i == 0 {
            mix.push(yi, None).unwrap();
            single.iter_mut().for_each(|s| s.push(yi, None).unwrap());
        } else {
            for (k, s) in single.iter_mut().enumerate() {
                model
                    .predict_with(
                        xi,
                        PredictWith::Component(k.min(model.stats().experts.max(1) as usize - 1)),
                        &mut mean,
                        &mut var,
                    )
                    .unwrap();
                s.push(yi, Some((&mean, &var))).unwrap();
            }
            let t = std::time::Instant::now();
            model.predict(xi, &mut mean, &mut var).unwrap();
            predict_ns.push(t.elapsed().as_nanos() as u64);
            mix.push(yi, Some((&mean, &var))).unwrap();
        }
        model.update(xi, yi, i as f64, &noise_var).unwrap();
    }
    let wall = t0.elapsed().as_secs_f64();
    predict_ns.sort_unstable();
    let q = |f: f64| {
        predict_ns[((f * predict_ns.len() as f64) as usize).min(predict_ns.len() - 1)] as f64 / 1e3
    };
    let info = model.describe_json();
    let names: Vec<String> = info["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kernel"].as_str().unwrap().to_string())
        .collect();
    let report = |name: &str, pq: &Prequential| {
        let r = pq.finish().unwrap();
        let smse: Vec<String> = r
            .targets
            .iter()
            .map(|t| format!("{:.4}", t.smse_final))
            .collect();
        let msll: Vec<String> = r
            .targets
            .iter()
            .map(|t| format!("{:.3}", t.msll_final))
            .collect();
        let mean_msll =
            r.targets.iter().map(|t| t.msll_final).sum::<f64>() / r.targets.len() as f64;
        println!(
            "{name:<28} SMSE {}  MSLL {}  (mean MSLL {mean_msll:.4})",
            smse.join(" "),
            msll.join(" ")
        );
        mean_msll
    };
    println!(
        "{} rows, d = {d}, p = {p}, wall {wall:.1} s, predict µs p50 {:.1} p99 {:.1}",
        n,
        q(0.5),
        q(0.99)
    );
    let m = report("mixture", &mix);
    let best = single
        .iter()
        .zip(&names)
        .map(|(s, name)| report(name, s))
        .fold(f64::INFINITY, f64::min);
    println!(
        "mixture − best single kept kernel: {:+.4} nats (criterion ≤ +0.05)",
        m - best
    );
    println!("{}", serde_json::to_string(&info["kept"]).unwrap());
}
