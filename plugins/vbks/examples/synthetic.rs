//! Run the offline phase on the paper's synthetic datasets and print the kernel ranking:
//! `cargo run --release -p gpn_vbks --example synthetic -- A 0 k12 [key=value ...]`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/synthetic.rs"]
mod synthetic;

use std::sync::atomic::AtomicBool;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = match args.get(1).map(String::as_str) {
        Some("B") => synthetic::Which::B,
        Some("C") => synthetic::Which::C,
        _ => synthetic::Which::A,
    };
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let space = args.get(3).cloned().unwrap_or_else(|| "k12".into());
    let mut cfg = serde_json::json!({
        "kernels": serde_json::from_str::<serde_json::Value>(&space)
            .unwrap_or(serde_json::Value::String(space.clone())),
        "offline_samples": 1000, "inducing": 16, "batch_size": 32,
        "seed": seed, "keep": 3,
    });
    for kv in &args[4.min(args.len())..] {
        let (k, v) = kv.split_once('=').expect("key=value");
        let v: serde_json::Value =
            serde_json::from_str(v).unwrap_or(serde_json::Value::String(v.into()));
        cfg[k] = v;
    }
    let n: usize = cfg["offline_samples"].as_u64().unwrap_or(1000) as usize;
    // `target_noise_sd=S`: noisy D₁ targets (the spec leaves the noise level open, gap #16).
    let (x, y) = match cfg
        .as_object_mut()
        .and_then(|o| o.remove("target_noise_sd"))
    {
        Some(sd) => synthetic::generate_noisy(which, n, seed, sd.as_f64().expect("a number")),
        None => synthetic::generate(which, n, seed),
    };
    let valid = gpn_vbks::Config::from_json(&cfg)
        .unwrap()
        .check(1, 1)
        .unwrap();
    let t = std::time::Instant::now();
    let sel = gpn_vbks::offline::run(&valid, &x, &y, &AtomicBool::new(false)).unwrap();
    let mut ks: Vec<_> = sel.report.kernels.iter().collect();
    ks.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    println!(
        "{which:?} seed {seed}: true {} ({:.1} s)",
        which.true_kernel(),
        t.elapsed().as_secs_f64()
    );
    for k in ks.iter().take(6) {
        let mark = if k.expr == which.true_kernel() {
            " <== true"
        } else {
            ""
        };
        println!("  {:>8.4}  {:>12.2}  {}{}", k.weight, k.bound, k.expr, mark);
    }
    let rank = ks
        .iter()
        .position(|k| k.expr == which.true_kernel())
        .unwrap();
    println!(
        "  true kernel rank {} bound {:.2} failed steps {} theta {:?}",
        rank + 1,
        ks[rank].bound,
        ks[rank].failed_steps,
        ks[rank]
            .psi
            .iter()
            .map(|v| format!("{:.3}", v.exp()))
            .collect::<Vec<_>>()
    );
}
