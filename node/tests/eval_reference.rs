//! `gp-node eval` with SkyGP's reference preset on the three shared regression streams
//! (rBCM = `bcm_ref`, Ncal 4, N̄ 50, hyperparams.json, whole-file centring), Fast and Dense,
//! against the public reference implementation's numbers (anchors/README.md §2): final and
//! curve-mean SMSE and MSLL within 5 % (MSLL relative to |value|).

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use std::path::PathBuf;
use std::process::Command;

fn shared() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared"))
}

/// anchors/README.md §2: (dataset, hyper key, variant, SMSE final, SMSE curve-mean,
/// MSLL final, MSLL curve-mean, experts at end).
type Anchor = (
    &'static str,
    &'static str,
    &'static str,
    f64,
    f64,
    f64,
    f64,
    u64,
);

const ANCHORS: &[Anchor] = &[
    (
        "kin40k.csv",
        "kin40k",
        "fast",
        0.2731,
        0.3538,
        -0.690,
        -0.589,
        303,
    ),
    (
        "kin40k.csv",
        "kin40k",
        "dense",
        0.2561,
        0.3775,
        -0.774,
        -0.611,
        86,
    ),
    (
        "pumadyn32nm.csv",
        "pumadyn32nm",
        "fast",
        0.0616,
        0.0888,
        -1.443,
        -1.393,
        203,
    ),
    (
        "pumadyn32nm.csv",
        "pumadyn32nm",
        "dense",
        0.0586,
        0.0874,
        -1.462,
        -1.403,
        97,
    ),
    (
        "electric.csv",
        "electric",
        "fast",
        0.0733,
        0.0767,
        -3.395,
        -3.328,
        577,
    ),
    (
        "electric.csv",
        "electric",
        "dense",
        0.0711,
        0.0683,
        -3.394,
        -3.362,
        331,
    ),
];

fn run(file: &str, key: &str, variant: &str) -> serde_json::Value {
    let data = shared().join("data");
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args([
            "eval",
            "--plugin",
            "skygp",
            "--json",
            "--center",
            "whole-file",
        ])
        .arg("--data")
        .arg(data.join(file))
        .arg("--hyper")
        .arg(data.join("hyperparams.json"))
        .args(["--hyper-key", key])
        .args([
            "--set",
            "preset=reference",
            "--set",
            "aggregation=bcm_ref",
            "--set",
            "n_cal=4",
            "--set",
            "n_bar=50",
        ])
        .args(["--set", &format!("variant={variant}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{file} {variant}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn skygp_reference_preset_matches_anchors() {
    // In CI a missing ../shared fails the test.
    if gpn_test_support::shared("skygp_reference_preset_matches_anchors").is_none() {
        return;
    }
    let mut failures = Vec::new();
    for &(file, key, variant, smse_f, smse_m, msll_f, msll_m, experts) in ANCHORS {
        let j = run(file, key, variant);
        let got = |k: &str| j[k][0].as_f64().unwrap();
        eprintln!(
            "{key:12} {variant:5}: SMSE {:.4} / {:.4}  MSLL {:.3} / {:.3}  experts {}  predict {:.1} µs  update {:.1} µs",
            got("smse_final"),
            got("smse_curve_mean"),
            got("msll_final"),
            got("msll_curve_mean"),
            j["experts"],
            j["predict_us_mean"].as_f64().unwrap(),
            j["update_us_mean"].as_f64().unwrap(),
        );
        for (name, want) in [
            ("smse_final", smse_f),
            ("smse_curve_mean", smse_m),
            ("msll_final", msll_f),
            ("msll_curve_mean", msll_m),
        ] {
            let v = got(name);
            if (v - want).abs() > 0.05 * want.abs() {
                failures.push(format!("{key} {variant} {name}: {v} vs anchor {want}"));
            }
        }
        if j["experts"].as_u64() != Some(experts) {
            eprintln!(
                "  note: {} experts vs {experts} in the anchors",
                j["experts"]
            );
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
