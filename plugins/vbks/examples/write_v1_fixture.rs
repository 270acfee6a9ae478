//! Writes the format-1 state fixture `tests/fixtures/vbks_v1_state.{bin,json}` (run from the
//! workspace root). It was run on the commit before the `drift` key existed (f61ab43); the
//! test `tests/drift.rs` checks that a model without `drift` still reproduces it bit for bit.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use gpn_gp_core::model::OnlineModel;
use gpn_plugin_api::Plugin;
use gpn_vbks::Vbks;
use gpn_vbks::rng::Rng;
use serde_json::json;

fn f(x: &[f64], o: usize) -> f64 {
    (1.5 * x[0]).sin() * (1.0 + 0.3 * o as f64) + 0.5 * x[1] * x[1] - 0.2 * o as f64
}

fn main() {
    let cfg = json!({
        "kernels": ["SE", "PER", "LIN", "SE+LIN", "PER*SE"],
        "offline_samples": 150, "inducing": 20, "inducing_select": 12,
        "checkpoints": 3, "epochs": 3, "init_candidates": 6, "keep": 3,
        "belief_steps": 300, "posterior_samples": 500, "seed": 3,
        "wait_for_offline": true, "belief_refit_every": 0,
    });
    let mut rng = Rng::new(29);
    let data: Vec<([f64; 2], [f64; 2])> = (0..240)
        .map(|_| {
            let x = [rng.uniform() * 4.0 - 2.0, rng.uniform() * 2.0 - 1.0];
            (
                x,
                [
                    f(&x, 0) + 0.05 * rng.normal(),
                    f(&x, 1) + 0.05 * rng.normal(),
                ],
            )
        })
        .collect();
    let mut m = Vbks::from_json(&cfg, 2, 2).unwrap();
    for (k, (x, y)) in data.iter().enumerate().take(200) {
        m.update(x, y, k as f64 * 0.01, &[0.01; 2]).unwrap();
    }
    let state = m.save_state().unwrap();
    let mut out = Vec::new();
    for (k, (x, y)) in data.iter().enumerate().skip(200) {
        let (mut mu, mut var) = ([0.0; 2], [0.0; 2]);
        m.predict(x, &mut mu, &mut var).unwrap();
        out.push(json!({"x": x, "mean_bits": mu.map(f64::to_bits), "var_bits": var.map(f64::to_bits), "y": y, "t": k as f64 * 0.01}));
        m.update(x, y, k as f64 * 0.01, &[0.01; 2]).unwrap();
    }
    std::fs::write("plugins/vbks/tests/fixtures/vbks_v1_state.bin", &state).unwrap();
    let doc = json!({"config": cfg, "steps": out});
    std::fs::write(
        "plugins/vbks/tests/fixtures/vbks_v1_state.json",
        serde_json::to_string_pretty(&doc).unwrap(),
    )
    .unwrap();
    println!("{} bytes", state.len());
}
