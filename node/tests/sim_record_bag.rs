//! `gp-node sim --record DIR`: the learned run as a rosbag2 recording with the topics the ROS
//! node records. Read back by two independent readers (`rosbags`, and PyPI `mcap` with
//! `mcap-ros2-support`, in `record_read_back.py`): both see the Jazzy layout (metadata
//! version 9, the `ros2` MCAP profile) and the same messages; the commands and residual
//! estimates are bit for bit those of the same seeded run recorded as CSV; and `gp-node
//! learn` learns from the recording with the robot description it holds.

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use std::path::Path;
use std::process::Command;

mod bag_support;

use bag_support::read_back;
use gpn_test_support::python;
use serde_json::Value;

const NV: usize = 7;
const TICKS: u64 = 3000;

fn sim(record: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["sim", "--learned-only", "--no-viz", "--seed", "4"])
        .args(["--duration", "3", "--record"])
        .arg(record)
        .output()
        .unwrap()
}

fn last_csv_row(path: &Path) -> (csv::StringRecord, csv::StringRecord) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    let last = reader.records().last().unwrap().unwrap();
    (header, last)
}

fn csv_values(header: &csv::StringRecord, row: &csv::StringRecord, prefix: &str) -> Vec<f64> {
    (0..NV)
        .map(|j| {
            let name = format!("{prefix}_{j}");
            let k = header.iter().position(|h| h == name).unwrap();
            row[k].parse().unwrap()
        })
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Equal to the last bits serde_json's default float parsing keeps (it may round the
/// JSON's shortest decimal one unit in the last place off).
fn same(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!(
            (x - y).abs() <= 4.0 * f64::EPSILON * y.abs(),
            "{a:?}\n{b:?}"
        );
    }
}

#[test]
fn the_simulator_records_what_the_node_would_and_both_readers_agree() {
    let Some(python) = python("sim_record_bag") else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim_record_bag");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, bag) = (dir.join("run.csv"), dir.join("run"));
    for path in [&csv, &bag] {
        let out = sim(path);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let read = read_back(&python, &bag);
    let meta = &read["metadata"];
    assert_eq!(meta["version"], 9, "{meta}");
    assert_eq!(meta["storage_identifier"], "mcap");
    assert_eq!(meta["ros_distro"], "jazzy");
    assert_eq!(
        meta["relative_file_paths"],
        serde_json::json!(["run_0.mcap"])
    );
    assert_eq!(read["mcap_profile"], "ros2");
    assert_eq!(
        read["mcap_metadata_records"],
        serde_json::json!(["rosbag2"])
    );
    assert_eq!(
        read["qos"]["/joint_states"],
        serde_json::json!(["best_effort"])
    );

    // Both readers see every message the metadata counts, with the same types and values.
    let counts = meta["counts"].as_object().unwrap();
    for (topic, count) in counts {
        let n = count.as_u64().unwrap();
        if n == 0 {
            assert!(read["rosbags"].get(topic).is_none(), "{topic}");
            continue;
        }
        let (a, b) = (&read["rosbags"][topic], &read["mcap"][topic]);
        assert_eq!(a["count"], n, "{topic}: rosbags {a}");
        assert_eq!(b["count"], n, "{topic}: mcap {b}");
        assert_eq!(a["type"], b["type"], "{topic}");
        assert_eq!(a["first"], b["first"], "{topic}");
        assert_eq!(a["last"], b["last"], "{topic}");
    }
    let topic = |name: &str| &read["rosbags"][name];
    for name in [
        "/joint_states",
        "/effort_controller/commands",
        "/gp_learning_node/residual",
    ] {
        assert_eq!(topic(name)["count"], TICKS, "{name}");
    }
    assert_eq!(
        topic("/robot_description")["first"]["data_len"],
        gp_node::app::DEFAULT_URDF.len()
    );
    let state = &topic("/joint_states")["last"];
    let robot = gp_node::robot::Model::from_urdf_str(gp_node::app::DEFAULT_URDF, "panda").unwrap();
    assert_eq!(state["name"], serde_json::json!(robot.joint_names()));
    assert_eq!(
        floats(&state["effort"]).len(),
        NV,
        "the torque sensor's effort"
    );
    // The stamps are simulated time: the last state is stamped (TICKS − 1) ms.
    assert_eq!(state["stamp_ns"], (TICKS - 1) * 1_000_000, "{state}");

    // The same seeded run, recorded as CSV: the same last command and residual estimate.
    let (header, row) = last_csv_row(&csv);
    same(
        &floats(&topic("/effort_controller/commands")["last"]["data"]),
        &csv_values(&header, &row, "tau"),
    );
    same(
        &floats(&topic("/gp_learning_node/residual")["last"]["mu"]),
        &csv_values(&header, &row, "mu"),
    );

    // A recording is never written over.
    let again = sim(&bag);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        !again.status.success() && err.contains("already exists"),
        "{err}"
    );

    // gp-node learn reads it, robot description included.
    let learned = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["learn", "--json", "--bag"])
        .arg(&bag)
        .arg("--out")
        .arg(dir.join("run.gpn"))
        .output()
        .unwrap();
    assert!(
        learned.status.success(),
        "{}",
        String::from_utf8_lossy(&learned.stderr)
    );
    let report: Value = serde_json::from_slice(&learned.stdout).unwrap();
    assert_eq!(
        report["robot"], "/robot_description in the recording",
        "{report}"
    );
    assert_eq!(report["joint_states"], TICKS);
    assert_eq!(report["with_effort"], TICKS);
    assert!(
        report["samples_in_model"].as_u64().unwrap() > 2000,
        "{report}"
    );
}
