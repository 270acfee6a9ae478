//! The ABI's optional `describe` through the host (`PluginModel::describe`): a Rust plugin
//! that reports diagnostics (SkyGP's pool), one that has none (`UNSUPPORTED` → `None`), a table as first
//! published in version 1 that ends before the field (loads; `describe` unavailable even
//! though the static table behind it has one), the C example plugin, the VBKS plugin's
//! kernel belief, and `gp-node eval --json` carrying it as `model_info`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is the failure report.

mod model_support;

use gp_node::plugin_host::{Plugin, SearchPath};
use gpn_gp_core::model::OnlineModel;
use gpn_plugin_api::{PluginTable, TABLE_SIZE, TABLE_SIZE_MIN};
use model_support::{c_example, double};

#[test]
fn skygp_describes_its_pool() {
    let plugin = Plugin::find("skygp", &SearchPath::standard(Vec::<&str>::new())).unwrap();
    let mut m = plugin
        .create(
            r#"{"hyper": {"sigma_f": 1, "sigma_n": 0.1, "lengthscales": [1]}, "max_experts": 100}"#,
            1,
            1,
        )
        .unwrap();
    m.update(&[0.3], &[1.0], 0.0, &[0.01]).unwrap();
    let j = m.describe().unwrap().expect("skygp reports its pool");
    assert_eq!(j["model"], "skygp");
    assert_eq!(j["experts"], 1);
    // One chunk made at creation; the next may have been taken over by the update.
    let made = j["experts_made"].as_u64().unwrap();
    assert!(made == 32 || made == 64, "{j}");
    assert_eq!(j["max_experts"], 100);
    assert!(j["bytes_per_expert"].as_u64().unwrap() > 0, "{j}");
}

#[test]
fn a_model_without_diagnostics_gives_none() {
    // The `slow` double does not override `Plugin::describe`: the shim answers
    // UNSUPPORTED, which the host turns into `None`.
    let plugin = Plugin::open(double("gpn_double_slow", "describe-slow")).unwrap();
    let m = plugin.create("{predict_sleep_ms: 0}", 2, 3).unwrap();
    assert!(m.describe().unwrap().is_none());
}

#[test]
fn a_first_published_v1_table_loads_without_describe() {
    const { assert!(TABLE_SIZE_MIN < TABLE_SIZE) };
    let path = double("gpn_double_v1_0_table", "describe-v1_0");
    // The static table behind the entry point is a complete one with a `describe`…
    // SAFETY: test-only: the double exports `gpn_plugin_entry` with the ABI's signature and
    // its table is a complete static `PluginTable` (only `struct_size` is short).
    let (declared, has_describe) = unsafe {
        let lib = libloading::Library::new(&path).unwrap();
        let entry = lib
            .get::<unsafe extern "C" fn() -> *const PluginTable>(b"gpn_plugin_entry\0")
            .unwrap();
        let table = &*entry();
        (table.struct_size, table.describe.is_some())
    };
    assert_eq!(declared, TABLE_SIZE_MIN);
    assert!(has_describe);
    // …but the host reads only the declared bytes.
    let plugin = Plugin::open(&path).unwrap();
    assert_eq!(plugin.info().name, "v1_0_table");
    let mut m = plugin.create("", 1, 1).unwrap();
    m.update(&[0.5], &[2.0], 0.0, &[0.1]).unwrap();
    let (mut mean, mut var) = ([0.0], [0.0]);
    m.predict(&[0.5], &mut mean, &mut var).unwrap();
    assert_eq!(mean, [2.0]);
    assert!(m.describe().unwrap().is_none());
}

#[test]
fn the_c_example_describes_its_posterior() {
    let plugin = Plugin::open(c_example("describe-c")).unwrap();
    let mut m = plugin.create(r#"{"prior_var": 2.0}"#, 2, 1).unwrap();
    for k in 0..20 {
        let x = [k as f64 * 0.1, 1.0 - k as f64 * 0.05];
        m.update(&x, &[1.0 + 2.0 * x[0] - x[1]], 0.0, &[0.01])
            .unwrap();
    }
    let info = m.describe().unwrap().expect("blr_c has describe");
    assert_eq!(info["model"], "blr_c");
    assert_eq!(info["samples_seen"], 20);
    assert_eq!(info["prior_var"], 2.0);
    let w = info["weights_0"].as_array().unwrap();
    assert_eq!(w.len(), 3); // bias + 2 inputs
    assert!(w.iter().all(|v| v.as_f64().is_some_and(f64::is_finite)));
}

fn vbks_config() -> serde_json::Value {
    serde_json::json!({
        "kernels": ["SE", "PER", "LIN", "SE+LIN"], "offline_samples": 80, "inducing": 10,
        "checkpoints": 2, "epochs": 2, "init_candidates": 4, "keep": 2,
        "belief_steps": 200, "posterior_samples": 300, "wait_for_offline": true,
    })
}

#[test]
fn vbks_reports_its_kernel_belief_through_the_host() {
    let plugin = Plugin::find("vbks", &SearchPath::standard(Vec::<&str>::new())).unwrap();
    let mut m = plugin.create_json(&vbks_config(), 1, 1).unwrap();
    let before = m.describe().unwrap().unwrap();
    assert_eq!(before["phase"], "collecting");
    assert!(before.get("kept").is_none());
    for k in 0..120 {
        let x = [k as f64 * 0.05 - 3.0];
        m.update(&x, &[(2.0 * x[0]).sin() + 0.3 * x[0]], 0.0, &[0.01])
            .unwrap();
    }
    let info = m.describe().unwrap().unwrap();
    assert_eq!(info["phase"], "online");
    let kept = info["kept"].as_array().unwrap();
    assert_eq!(kept.len(), 2);
    let total: f64 = kept.iter().map(|k| k["weight"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-9);
    assert!(kept[0]["kernel"].is_string() && kept[0]["hyper"].is_object());
    assert_eq!(m.stats().experts, 2);
}

#[test]
fn gp_node_eval_prints_the_vbks_belief() {
    let mut csv = String::from("x,y\n");
    for k in 0..150 {
        let x = k as f64 * 0.04 - 3.0;
        csv += &format!("{x},{}\n", (2.0 * x).sin() + 0.01 * (k as f64 * 7.1).sin());
    }
    let dir = model_support::scratch_dir("describe-eval");
    let data = dir.join("data.csv");
    std::fs::write(&data, csv).unwrap();
    let config = dir.join("vbks.json");
    std::fs::write(&config, vbks_config().to_string()).unwrap();
    let run = |json: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gp-node"));
        cmd.args(["eval", "--plugin", "vbks", "--data"])
            .arg(&data)
            .arg("--config")
            .arg(&config)
            .args(["--set", "hyper.sigma_f=1", "--set", "hyper.sigma_n=0.1"])
            .args(["--set", "hyper.lengthscales=[1.0]"]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let out = run(true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["model_info"]["model"], "vbks");
    assert_eq!(j["model_info"]["kept"].as_array().unwrap().len(), 2);
    assert!(j["smse_final"][0].as_f64().unwrap() < 1.0);
    let out = run(false);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("kernel belief (2 kept of 4 candidates"),
        "{text}"
    );
}
