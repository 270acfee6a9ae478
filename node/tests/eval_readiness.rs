//! Issue 24, part 2: `gp-node eval --plugin X` with no other configuration works for every
//! shipped plugin, waits for a background plugin to take in every sample before it
//! predicts again, and reports per target the fraction of predictions made from the prior:
//! 0 after the model was first ready. With `--rate HZ` it streams as a robot would and says
//! when the model never caught up.

use std::path::{Path, PathBuf};
use std::process::Command;

const PLUGINS: [&str; 4] = ["skygp", "rcagp", "vbks", "loggp"];
/// Rows of the stream: past VBKS's default offline phase (1000 samples).
const ROWS: usize = 1300;

/// Two smooth targets of two inputs with noise (a fixed LCG, so the file is the same on
/// every machine), written under cargo's test scratch directory as `name`.
fn write_stream(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("eval-readiness-{name}-{}.csv", std::process::id()));
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut uniform = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut csv = String::from("x1,x2,y1,y2\n");
    for _ in 0..ROWS {
        let (a, b) = (4.0 * uniform() - 2.0, 4.0 * uniform() - 2.0);
        let noise = 0.05 * (uniform() - 0.5);
        let y1 = (2.0 * a).sin() + 0.5 * b + noise;
        let y2 = (a * b).cos() - noise;
        csv.push_str(&format!("{a},{b},{y1},{y2}\n"));
    }
    std::fs::write(&path, csv).expect("write the stream");
    path
}

fn eval(data: &Path, plugin: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["eval", "--plugin", plugin, "--targets", "y1,y2"])
        .arg("--data")
        .arg(data)
        // Eval's own settings (not the model's): keep the hyperparameter fit short, and one
        // refit (after 600 samples) checks that a refitted model that learns in the
        // background takes over caught up, not answering from its prior.
        .args(["--fit-samples", "300", "--max-refits", "1"])
        .args(extra)
        .output()
        .expect("gp-node eval");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "eval --plugin {plugin}: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if extra.contains(&"--json") {
        (serde_json::from_str(&stdout).expect("JSON report"), stderr)
    } else {
        (serde_json::Value::String(stdout), stderr)
    }
}

fn numbers(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("a number: {x}")))
        .collect()
}

#[test]
fn every_shipped_plugin_evaluates_with_its_defaults_and_no_prior_after_ready() {
    let data = write_stream("defaults");
    for plugin in PLUGINS {
        let (r, _) = eval(&data, plugin, &["--json"]);
        assert_eq!(r["pacing"]["mode"], "wait", "{plugin}");
        let after = numbers(&r["prior_fraction_after_ready"]);
        assert_eq!(after, vec![0.0, 0.0], "{plugin}: prior after ready: {r}");
        let ready: Vec<u64> = r["ready_at_step"]
            .as_array()
            .expect("per target")
            .iter()
            .map(|s| {
                s.as_u64()
                    .unwrap_or_else(|| panic!("{plugin} never ready: {r}"))
            })
            .collect();
        let prior = numbers(&r["prior_fraction"]);
        for (t, (&at, &fraction)) in ready.iter().zip(&prior).enumerate() {
            // Every prediction before the ready step, and none after, came from the prior.
            let expected = (at - 1) as f64 / (ROWS - 1) as f64;
            assert!(
                (fraction - expected).abs() < 1e-12,
                "{plugin} target {t}: prior fraction {fraction}, ready at {at}"
            );
        }
        assert_eq!(
            r["max_samples_behind"], 0,
            "{plugin}: waited until caught up"
        );
        // Scored on what it learned: clearly better than the prior at the end.
        for smse in numbers(&r["smse_final"]) {
            assert!(smse < 0.9, "{plugin}: SMSE {smse} at the end: {r}");
        }
    }
    let _ = std::fs::remove_file(data);
}

#[test]
fn at_a_robots_rate_a_model_that_never_caught_up_is_reported() {
    let data = write_stream("rate");
    // 1300 samples at 5 kHz last 0.26 s; VBKS's offline phase on 1000 samples takes
    // seconds, so without its warm-up model every prediction comes from its prior.
    let no_warmup = ["--set", "warmup_samples=0"];
    let (r, _) = eval(
        &data,
        "vbks",
        &[&["--json", "--rate", "5000"][..], &no_warmup[..]].concat(),
    );
    assert_eq!(r["pacing"]["mode"], "rate");
    assert_eq!(r["pacing"]["hz"], 5000.0);
    assert_eq!(numbers(&r["prior_fraction"]), vec![1.0, 1.0], "{r}");
    assert_eq!(r["ready_at_step"], serde_json::json!([null, null]));
    assert_eq!(
        r["prior_fraction_after_ready"],
        serde_json::json!([null, null])
    );
    assert!(
        r["max_samples_behind"].as_u64().expect("count") >= 1000,
        "{r}"
    );
    let (table, _) = eval(
        &data,
        "vbks",
        &[&["--rate", "5000"][..], &no_warmup[..]].concat(),
    );
    let table = table.as_str().expect("text");
    assert!(table.contains("never ready"), "{table}");
    assert!(table.contains("WARNING"), "{table}");
    // With its warm-up model (the default) VBKS predicts from data soon after its 200th
    // sample although the offline phase is still far behind.
    let (r, _) = eval(&data, "vbks", &["--json", "--rate", "5000"]);
    let ready = r["ready_at_step"][0].as_u64().unwrap_or(u64::MAX);
    assert!((200..600).contains(&ready), "ready at {ready}: {r}");
    assert!(
        r["max_samples_behind"].as_u64().expect("count") >= 1000,
        "{r}"
    );
    assert_eq!(r["model_info"]["warmup"]["state"], "predicting", "{r}");
    let _ = std::fs::remove_file(data);
}

#[test]
fn a_non_positive_rate_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["eval", "--data", "none.csv", "--rate", "0"])
        .output()
        .expect("gp-node eval");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("positive number of samples per second"));
}
