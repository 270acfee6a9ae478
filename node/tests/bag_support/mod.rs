//! Robot recordings for the tests of `gp-node learn` and of runs started from its model
//! files: a `gp-node sim --record` stream of the built-in Panda written as rosbag2
//! recordings in every storage, compression and torque form, and damaged ones, by
//! `node/tests/learn_bag_writer.py` (PyPI `rosbags` and `mcap`).
#![allow(dead_code, clippy::unwrap_used)] // each test binary uses a part

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use gpn_test_support::{python, repo_root};

/// Seconds of the recorded stream.
const STREAM_S: &str = "3";

/// The recordings, written once per test binary into a folder named after `test` (None: no
/// Python, outside CI).
pub fn recordings(test: &str) -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let python = python(test)?;
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{test}_recordings"));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("stream.csv");
        let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
            .args([
                "sim",
                "--learned-only",
                "--no-viz",
                "--seed",
                "5",
                "--duration",
            ])
            .arg(STREAM_S)
            .arg("--record")
            .arg(&csv)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let joints = gp_node::robot::Model::from_urdf_str(gp_node::app::DEFAULT_URDF, "panda")
            .unwrap()
            .joint_names()
            .join(",");
        let bags = dir.join("bags");
        let out = Command::new(python)
            .arg(repo_root().join("node/tests/learn_bag_writer.py"))
            .arg(&csv)
            .arg(repo_root().join("urdf/panda.urdf"))
            .arg(joints)
            .arg(&bags)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(bags)
    })
    .as_deref()
}

/// `gp-node learn` of the recording `bag` into the model file `out`; panics with its log if
/// it fails.
pub fn learn_model(bag: &Path, out: &Path) {
    let run = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["learn", "--json", "--bag"])
        .arg(bag)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "gp-node learn failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// A recording as two independent readers see it (`node/tests/record_read_back.py`: PyPI
/// `rosbags`, and `mcap` with `mcap-ros2-support`); panics with the script's error.
pub fn read_back(python: &Path, bag: &Path) -> serde_json::Value {
    let out = Command::new(python)
        .arg(repo_root().join("node/tests/record_read_back.py"))
        .arg(bag)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
