//! Issue 24, parts 3 and 4: hyperparameters per output. On a 7-output robot stream (the
//! xArm7 of `testing/robots`, simulated and recorded by `gp-node sim --record`), one set of
//! hyperparameters given for every torque (`--hyper` with one object) scores MSLL > 0 on
//! the torque whose scale is far from that set's; the per-output fit gives each torque its
//! own set, and the MSLL of every torque that was positive improves. The JSON prints the
//! effective configuration, the hyperparameters per target and the fit.

use std::path::{Path, PathBuf};
use std::process::Command;

fn gp_node() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gp-node"))
}

/// A file of this process's own, `name` keeping its extension (`gp-node sim --record` writes
/// CSV to a `.csv` path and a rosbag2 folder to any other).
fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("eval-per-output-{}-{name}", std::process::id()))
}

/// `gp-node eval --json` on the recorded stream with `extra` arguments.
fn eval(data: &Path, extra: &[&str]) -> serde_json::Value {
    let out = gp_node()
        .args(["eval", "--plugin", "skygp", "--json"])
        .arg("--data")
        .arg(data)
        .args(["--inputs", "x_0..x_20", "--targets", "y_0..y_6"])
        // Torques in N·m: a floor relative to each torque's variance, so that the MSLL
        // measures the model rather than an absolute floor.
        .args(["--var-floor", "rel:1e-3"])
        .args(extra)
        .output()
        .expect("gp-node eval");
    assert!(
        out.status.success(),
        "eval {extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

fn numbers(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array: {v}"))
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

#[test]
fn per_output_hyperparameters_differ_and_mend_the_positive_mslls_of_one_shared_set() {
    let urdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testing/robots/xarm7.urdf");
    let data = scratch("stream.csv");
    let sim = gp_node()
        .args(["sim", "--duration", "5", "--no-viz"])
        .arg("--urdf")
        .arg(&urdf)
        .arg("--record")
        .arg(&data)
        .output()
        .expect("gp-node sim");
    assert!(
        sim.status.code().is_some_and(|c| c == 0 || c == 3),
        "sim: {}",
        String::from_utf8_lossy(&sim.stderr)
    );

    // One fit, no refits: the report's hyperparameters are those every prediction used.
    let per = eval(
        &data,
        &[
            "--fit-mode",
            "per-output",
            "--fit-samples",
            "300",
            "--max-refits",
            "0",
        ],
    );
    // Part 4: what the model ran with.
    assert_eq!(per["config"]["hyper"], per["hyper"], "{}", per["config"]);
    assert!(
        per["config"].get("n_bar").is_some(),
        "plugin defaults: {}",
        per["config"]
    );
    assert_eq!(
        per["var_floor"],
        serde_json::json!({"value": 1e-3, "relative": true})
    );
    assert_eq!(per["fit"]["mode"], "per_output");
    assert_eq!(per["fit"]["samples"], 300);
    assert!(per["fit"]["seconds"].as_f64().expect("seconds") > 0.0);
    let hyper = per["hyper"].as_array().expect("one set per target");
    assert_eq!(hyper.len(), 7);
    // The sets differ: every target its own noise level and lengthscales.
    for (a, ha) in hyper.iter().enumerate() {
        for hb in &hyper[a + 1..] {
            assert_ne!(ha["sigma_n"], hb["sigma_n"]);
            assert_ne!(ha["lengthscales"], hb["lengthscales"]);
        }
    }

    // The same stream with the first target's set given for all of them.
    let one = scratch("one.json");
    std::fs::write(&one, serde_json::json!({ "hyper": hyper[0] }).to_string())
        .expect("write the hyper file");
    let shared = eval(&data, &["--hyper", one.to_str().expect("UTF-8 path")]);
    assert_eq!(shared["hyper"].as_array().expect("per target").len(), 7);
    assert!(shared.get("fit").is_none(), "given, not fitted");
    let msll_one = numbers(&shared["msll_curve_mean"]);
    let msll_per = numbers(&per["msll_curve_mean"]);
    let positive: Vec<usize> = (0..7).filter(|&t| msll_one[t] > 0.0).collect();
    assert!(
        !positive.is_empty(),
        "one shared set should fail some torque: {msll_one:?}"
    );
    for t in positive {
        assert!(
            msll_per[t] < 0.0 && msll_per[t] < msll_one[t],
            "target {t}: MSLL {} with its own set, {} with the shared one",
            msll_per[t],
            msll_one[t]
        );
    }

    // The per-target file `--json` printed is itself a hyperparameter file.
    let all = scratch("all.json");
    std::fs::write(&all, per.to_string()).expect("write the report");
    let again = eval(&data, &["--hyper", all.to_str().expect("UTF-8 path")]);
    assert_eq!(again["hyper"].as_array().map(Vec::len), Some(7));
    // The same model up to the last bit of a JSON round trip of the numbers.
    for (a, b) in numbers(&again["msll_curve_mean"]).iter().zip(&msll_per) {
        assert!((a - b).abs() <= 1e-9 * b.abs(), "{a} vs {b}");
    }
    for f in [data, one, all] {
        let _ = std::fs::remove_file(f);
    }
}
