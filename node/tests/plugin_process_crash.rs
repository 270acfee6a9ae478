//! `model.isolation: process` in the control loop: `gp-node sim` swaps from SkyGP (in a
//! plugin process) to a plugin that aborts its process after 300 predictions
//! (`gpn_double_slow`'s `abort_after_predicts`) and back. In a plugin process the abort ends
//! that process only: the run completes, the ticks after the crash fall back to the nominal
//! law (every call fails at once; the supervisor quarantines the model), the log says which
//! process ended and why, and the next swap brings a learned model back. In-process, the same abort ends `gp-node` itself — the
//! documented fate of a crashing plugin without isolation.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};

mod model_support;

const CRASHING: &str = r#"gpn_double_slow:{"predict_sleep_ms": 0, "abort_after_predicts": 300}"#;

fn sim_with(isolation: &str, test: &str) -> Output {
    let dir = model_support::scratch_dir(test);
    let text = gp_node::app::DEFAULT_PARAMS_YAML.replacen(
        "isolation: in_process",
        &format!("isolation: {isolation}"),
        1,
    );
    assert!(text.contains(&format!("isolation: {isolation}")));
    let params = dir.join("params.yaml");
    std::fs::write(&params, text).expect("write params");
    Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["sim", "--params"])
        .arg(&params)
        .args(["--duration", "6", "--learned-only", "--no-viz", "--json"])
        .args(["--swap-every", "2", "--swap-to", CRASHING])
        .output()
        .expect("run gp-node sim")
}

#[test]
fn a_crashing_plugin_in_a_plugin_process_ends_in_the_nominal_law_not_the_run() {
    let out = sim_with("process", "plugin_process_crash");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{log}", out.status);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert!(
        log.contains("the plugin process of libgpn_double_slow.so")
            && log.contains("SIGABRT")
            && log.contains("falls back to the nominal law"),
        "the crash is logged:\n{log}"
    );
    // Swapped to the crashing plugin at 3 s (it aborts 0.3 s later) and back to SkyGP at 5 s.
    let records = report["swaps"]["records"].as_array().expect("swap records");
    let adopted: Vec<&str> = records
        .iter()
        .filter(|s| s["outcome"] == "adopted")
        .filter_map(|s| s["label"].as_str())
        .collect();
    assert_eq!(adopted.len(), 2, "{records:?}");
    assert!(adopted[0].starts_with("gpn_double_slow"), "{adopted:?}");
    assert!(adopted[1].starts_with("skygp"), "{adopted:?}");
    // The learned law lost the ticks from the crash to the swap back (1.7 s of 6), not the
    // rest: ~1 s before the first model, then learned except in that gap.
    let learned = report["law"]["learned_tick_fraction"]
        .as_f64()
        .expect("fraction");
    assert!((0.35..0.7).contains(&learned), "{learned}");
    assert_eq!(report["ticks"], 6000, "every tick ran");
}

#[test]
fn a_crashing_plugin_in_process_ends_gp_node() {
    let out = sim_with("in_process", "plugin_in_process_crash");
    assert_eq!(
        out.status.signal(),
        Some(6),
        "gp-node ended by SIGABRT: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
