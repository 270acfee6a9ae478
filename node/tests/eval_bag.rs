//! `gp-node eval --bag`: a plugin scored on a rosbag2 recording with the metrics of a CSV
//! stream. The recording of a seeded `gp-node sim --record DIR` run replays (through the
//! node's reader and learner, nothing fitted) into exactly the learning samples that the
//! same run's CSV recording holds: the scores of both are the same to the last digits. A
//! recording without the joint-state topic is a clear error.

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use std::path::Path;
use std::process::{Command, Output};

use gpn_test_support::repo_root;
use serde_json::Value;

fn gp_node(args: &[&str], paths: &[&Path]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gp-node"));
    command.args(args);
    for p in paths {
        command.arg(p);
    }
    command.output().unwrap()
}

fn ok(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn close(a: &Value, b: &Value, key: &str) {
    let (a, b) = (a[key].as_array().unwrap(), b[key].as_array().unwrap());
    assert_eq!(a.len(), b.len(), "{key}");
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
        assert!((x - y).abs() <= 1e-9 * (1.0 + y.abs()), "{key}: {x} vs {y}");
    }
}

#[test]
fn a_recording_scores_as_the_csv_of_the_same_run() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("eval_bag");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, bag) = (dir.join("run.csv"), dir.join("run"));
    let sim = [
        "sim",
        "--learned-only",
        "--no-viz",
        "--seed",
        "4",
        "--duration",
        "2",
    ];
    for path in [&csv, &bag] {
        ok(&gp_node(&[&sim[..], &["--record"]].concat(), &[path]));
    }
    let hyper = repo_root().join("testing/measure/robot_stream_hyper.json");
    let eval = [
        "eval",
        "--plugin",
        "skygp",
        "--var-floor",
        "rel:1e-3",
        "--json",
    ];
    let from_bag = ok(&gp_node(
        &[&eval[..], &["--bag"]].concat(),
        &[&bag, Path::new("--hyper"), &hyper],
    ));
    // The CSV's learning-sample columns, at the recording's 1 kHz.
    let csv_columns = [
        "--inputs",
        "x_0..x_20",
        "--targets",
        "y_0..y_6",
        "--dt-secs",
        "0.001",
    ];
    let from_csv = ok(&gp_node(
        &[&eval[..], &csv_columns, &["--data"]].concat(),
        &[&csv, Path::new("--hyper"), &hyper],
    ));
    assert_eq!(from_bag["n_samples"], from_csv["n_samples"]);
    assert!(from_bag["n_samples"].as_u64().unwrap() > 1900, "{from_bag}");
    for key in [
        "smse_final",
        "msll_final",
        "smse_curve_mean",
        "msll_curve_mean",
    ] {
        close(&from_bag, &from_csv, key);
    }

    // A recording without the joint states asked for.
    let out = gp_node(
        &["eval", "--joint-states-topic", "/elsewhere", "--bag"],
        &[&bag],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("no sensor_msgs/msg/JointState on /elsewhere")
            && err.contains("/joint_states"),
        "{err}"
    );
}
