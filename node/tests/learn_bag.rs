//! `gp-node learn --bag`: rosbag2 recordings written by PyPI `rosbags` (and `mcap` for an
//! lz4-chunked file) from one simulated robot stream, in every storage (MCAP, SQLite 3),
//! compression (MCAP chunks zstd/lz4, rosbag2 file and message zstd) and torque form
//! (measured effort, or only the effort command on another clock), learn the same model; a
//! damaged or foreign recording gets a clear error or a counted skip.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod bag_support;

use std::path::Path;
use std::process::{Command, Output};

use bag_support::{learn_model, recordings};
use gp_node::plugin_host::ModelFile;
use gpn_test_support::{json_output, repo_root};
use serde_json::Value;

fn learn(bag: &Path, extra: &[&str]) -> Output {
    let model = bag.with_extension("gpn");
    Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .arg("learn")
        .arg("--bag")
        .arg(bag)
        .arg("--out")
        .arg(&model)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap()
}

fn written(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("written.json")).unwrap()).unwrap()
}

fn smse(report: &Value) -> Vec<f64> {
    report["held_out"]["smse"]
        .as_array()
        .expect("held-out scores")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn every_storage_compression_and_torque_form_learns_the_same_model() {
    let Some(dir) = recordings("learn_bag") else {
        return;
    };
    let expected = written(dir);
    let states = expected["joint_states"].as_u64().unwrap();
    let urdf = repo_root().join("urdf/panda.urdf");
    let urdf = urdf.to_str().unwrap();
    let cases: [(&str, &[&str]); 7] = [
        ("mcap_effort", &[]),
        ("sqlite_commands", &[]),
        ("sqlite_commands/sqlite_commands.db3", &[]),
        ("sqlite_message_zstd", &[]),
        ("mcap_file_zstd", &[]),
        ("mcap_chunk_zstd", &[]),
        // The robot from --urdf instead of the recording's description.
        (
            "chunks_lz4.mcap",
            &["--urdf", urdf, "--robot-description-topic", "/none"],
        ),
    ];
    let fit_samples = gp_node::app::NodeParams::from_yaml(gp_node::app::DEFAULT_PARAMS_YAML)
        .unwrap()
        .learn
        .fit_samples as u64;
    let mut first: Option<(String, Vec<f64>, u64)> = None;
    for (case, extra) in cases {
        let bag = dir.join(case);
        let report = json_output(&learn(&bag, extra), case);
        assert_eq!(report["joint_states"], states, "{case}: {report}");
        let with_commands = report["with_effort"] == 0;
        if with_commands {
            assert_eq!(report["commands"], expected["commands"], "{case}");
            assert_eq!(report["commands_superseded"], 0, "{case}");
        } else {
            assert_eq!(report["with_effort"], states, "{case}");
        }
        // The stamps are 1000 s + 1 ms (± 0.2 ms) behind the recorder's clock.
        let offset = report["clock_offset"]["median_ms"].as_f64().unwrap();
        assert!(
            (offset - 1_000_001.0).abs() < 0.05,
            "{case}: offset {offset} ms"
        );
        assert_eq!(
            report["refused"],
            Value::Array(Vec::new()),
            "{case}: {report}"
        );
        // Every state before the held-out tail (10 %) is learned, but the first fit's.
        let learned = report["samples_learned"].as_u64().unwrap();
        assert!(
            learned + fit_samples + states / 10 + 2 >= states,
            "{case}: {learned} of {states} learned"
        );
        let model = ModelFile::read(&bag.with_extension("gpn")).expect("the model file reads");
        assert_eq!(model.header.plugin, "skygp");
        assert!(model.header.samples_seen > 0);
        // Better than the learned samples' Gaussian on most joints of the tail.
        let msll: Vec<f64> = report["held_out"]["msll"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert!(
            msll.iter().filter(|m| **m < 0.0).count() * 2 > msll.len(),
            "{case}: MSLL {msll:?}"
        );
        // The effort command aligned by log time is the torque the states measured: the
        // same samples, the same model, the same scores, to the bit.
        let scores = smse(&report);
        match &first {
            None => first = Some((case.into(), scores, model.header.samples_seen)),
            Some((name, s, seen)) => {
                assert_eq!(&scores, s, "{case} against {name}");
                assert_eq!(model.header.samples_seen, *seen, "{case} against {name}");
            }
        }
    }
}

fn failure(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_damaged_or_foreign_recording_gets_a_clear_error_or_a_counted_skip() {
    let Some(dir) = recordings("learn_bag") else {
        return;
    };
    let states = written(dir)["joint_states"].as_u64().unwrap();

    // Cut at 60 %: what came before is learned, and the report says the file ends early.
    let report = json_output(&learn(&dir.join("truncated.mcap"), &[]), "truncated");
    let read = report["joint_states"].as_u64().unwrap();
    assert!(
        read > states / 3 && read < states * 2 / 3,
        "{read} of {states}"
    );
    let why = report["ended_early"].as_str().unwrap_or_default();
    assert!(why.contains("truncated"), "{report}");

    // Every 50th stamp 5 ms back: refused as out of order, counted, the rest learned.
    let report = json_output(&learn(&dir.join("shuffled_stamps"), &[]), "shuffled");
    let refused = &report["refused"][0];
    assert_eq!(refused["reason"], "out_of_order", "{report}");
    assert_eq!(refused["count"], states / 50, "{report}");

    let cases = [
        (
            "wrong_type",
            "topic /joint_states: recorded as std_msgs/msg/String, expected sensor_msgs/msg/JointState",
        ),
        (
            "no_states",
            "no sensor_msgs/msg/JointState on /joint_states",
        ),
        (
            "no_states",
            "/effort_controller/commands (std_msgs/msg/Float64MultiArray)",
        ),
        ("wrong_names", "missing_joint"),
        ("bz2", "compression \"bz2\" is not supported"),
        ("stream.csv", "not a rosbag2 recording"),
        ("missing", "No such file"),
    ];
    for (case, says) in cases {
        let path = if case == "stream.csv" {
            dir.parent().unwrap().join(case)
        } else {
            dir.join(case)
        };
        let err = failure(&learn(&path, &[]));
        assert!(err.contains(says), "{case}: {err}");
        assert!(!err.contains("panicked"), "{case}: {err}");
    }
    // A folder that is not a recording.
    let err = failure(&learn(dir.parent().unwrap(), &[]));
    assert!(err.contains("not a rosbag2 recording"), "{err}");

    // A mistyped model key is refused before the recording is read, naming the nearest key.
    let params = dir.join("mistyped_model_key.yaml");
    std::fs::write(
        &params,
        "gp_learning_node:\n  ros__parameters:\n    model:\n      config:\n        varient: dense\n",
    )
    .unwrap();
    let err = failure(&learn(
        &dir.join("mcap_effort"),
        &["--params", params.to_str().unwrap()],
    ));
    assert!(err.contains("varient") && err.contains("variant"), "{err}");
    assert!(!err.contains("learned"), "refused before learning: {err}");
}

#[test]
fn a_model_learned_from_a_recording_starts_a_run_without_a_fit() {
    let Some(dir) = recordings("learn_bag") else {
        return;
    };
    let model = dir.join("warm_start.gpn");
    learn_model(&dir.join("mcap_chunk_zstd"), &model);
    let file = ModelFile::read(&model).unwrap();
    // The q̈ the model learned, which the run clamps its queries into.
    assert_eq!(file.header.accel_range.len(), 7);
    assert!(
        file.header.accel_range.iter().all(|(lo, hi)| lo < hi),
        "{:?}",
        file.header.accel_range
    );

    let run = |model: &Path| {
        Command::new(env!("CARGO_BIN_EXE_gp-node"))
            .args([
                "sim",
                "--learned-only",
                "--no-viz",
                "--json",
                "--duration",
                "1",
                "--seed",
                "5",
            ])
            .arg("--model")
            .arg(model)
            .output()
            .unwrap()
    };
    let report = json_output(&run(&model), "sim --model");
    // Adopted at the first tick: no hyperparameter fit, no refit, the file's plugin.
    let adopted = report["model_adopted_at_s"].as_f64().unwrap();
    assert!(adopted < 0.01, "adopted at {adopted} s");
    assert_eq!(report["fit_s"], 0.0, "{report}");
    assert_eq!(report["refits"]["adopted"], 0, "{report}");
    assert_eq!(report["model"]["plugin"], "skygp", "{report}");
    assert!(
        report["learned_samples"].as_u64().unwrap() > 900,
        "{report}"
    );

    // A file that is not a model: a clear error before the run.
    let not_a_model = dir.join("written.json");
    let err = failure(&run(&not_a_model));
    assert!(err.contains("model.file:"), "{err}");
}
