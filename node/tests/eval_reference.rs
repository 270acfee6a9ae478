//! `gp-node eval` with SkyGP's reference preset on the three shared regression streams
//! (rBCM = `bcm_ref`, Ncal 4, N̄ 50, hyperparams.json, whole-file centring), Fast and Dense,
//! against the public reference implementation's numbers (anchors/README.md §2): final and
//! curve-mean SMSE and MSLL within 5 % (MSLL relative to |value|).

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use std::path::Path;
use std::process::Command;

/// One row of anchors/README.md §2: the run and the reference's numbers.
struct Anchor {
    /// Dataset: `data/<key>.csv`, hyperparameters `<key>` of hyperparams.json.
    key: &'static str,
    variant: &'static str,
    smse_final: f64,
    smse_curve_mean: f64,
    msll_final: f64,
    msll_curve_mean: f64,
    /// Experts at the end (a note, not a check: the count follows rounding).
    experts: u64,
}

const fn anchor(
    key: &'static str,
    variant: &'static str,
    smse: [f64; 2],
    msll: [f64; 2],
    experts: u64,
) -> Anchor {
    Anchor {
        key,
        variant,
        smse_final: smse[0],
        smse_curve_mean: smse[1],
        msll_final: msll[0],
        msll_curve_mean: msll[1],
        experts,
    }
}

/// anchors/README.md §2: SMSE and MSLL as [final, curve-mean].
#[rustfmt::skip] // a table, one run per line
const ANCHORS: [Anchor; 6] = [
    anchor("kin40k",      "fast",  [0.2731, 0.3538], [-0.690, -0.589], 303),
    anchor("kin40k",      "dense", [0.2561, 0.3775], [-0.774, -0.611], 86),
    anchor("pumadyn32nm", "fast",  [0.0616, 0.0888], [-1.443, -1.393], 203),
    anchor("pumadyn32nm", "dense", [0.0586, 0.0874], [-1.462, -1.403], 97),
    anchor("electric",    "fast",  [0.0733, 0.0767], [-3.395, -3.328], 577),
    anchor("electric",    "dense", [0.0711, 0.0683], [-3.394, -3.362], 331),
];

fn run(shared: &Path, a: &Anchor) -> serde_json::Value {
    let data = shared.join("data");
    let mut eval = Command::new(env!("CARGO_BIN_EXE_gp-node"));
    eval.args(["eval", "--plugin", "skygp", "--json"])
        .args(["--center", "whole-file"])
        .arg("--data")
        .arg(data.join(format!("{}.csv", a.key)))
        .arg("--hyper")
        .arg(data.join("hyperparams.json"))
        .args(["--hyper-key", a.key]);
    for setting in [
        "preset=reference",
        "aggregation=bcm_ref",
        "n_cal=4",
        "n_bar=50",
        &format!("variant={}", a.variant),
    ] {
        eval.args(["--set", setting]);
    }
    gpn_test_support::json_stdout(
        &mut eval,
        &format!("gp-node eval on {} {}", a.key, a.variant),
    )
}

#[test]
fn skygp_reference_preset_matches_anchors() {
    // In CI a missing ../shared fails the test.
    let Some(shared) = gpn_test_support::shared("skygp_reference_preset_matches_anchors") else {
        return;
    };
    let mut failures = Vec::new();
    for a in &ANCHORS {
        let (key, variant) = (a.key, a.variant);
        let j = run(&shared, a);
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
            ("smse_final", a.smse_final),
            ("smse_curve_mean", a.smse_curve_mean),
            ("msll_final", a.msll_final),
            ("msll_curve_mean", a.msll_curve_mean),
        ] {
            let v = got(name);
            if (v - want).abs() > 0.05 * want.abs() {
                failures.push(format!("{key} {variant} {name}: {v} vs anchor {want}"));
            }
        }
        if j["experts"].as_u64() != Some(a.experts) {
            eprintln!(
                "  note: {} experts vs {} in the anchors",
                j["experts"], a.experts
            );
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
