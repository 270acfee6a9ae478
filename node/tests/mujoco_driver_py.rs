//! The MuJoCo robot driver (`mujoco_driver/`, Python: PyPI `mujoco` + `cyclonedds`) passes its own
//! test suite, `mujoco_driver/tests` (pytest, from `$GPN_PYTHON`, run from the repository root): URDF
//! stripping and loading, MuJoCo vs Pinocchio dynamics on the shared fixtures, the scenario's
//! payload/friction/armature, the ROS 2 message bytes, and the lock-step loop against a fake
//! controller over Cyclone DDS (loopback only).
//!
//! Without `$GPN_PYTHON` the test says so and passes, except in CI (`CI=true`), where it
//! fails: `.ci/run` creates the venv from `ci/requirements.txt` and exports the variable.

use std::path::Path;
use std::process::Command;

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[test]
fn the_mujoco_driver_passes_its_pytest_suite() {
    let Some(python) = gpn_test_support::python("mujoco_driver_py") else {
        return;
    };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repository root");
    let out = Command::new(&python)
        .current_dir(repo)
        // The node's executable resolves the values the shipped file derives from the robot.
        .env("GPN_NODE", env!("CARGO_BIN_EXE_gp-node"))
        // No .pytest_cache in the work tree.
        .args([
            "-m",
            "pytest",
            "mujoco_driver/tests",
            "-q",
            "-p",
            "no:cacheprovider",
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "pytest mujoco_driver/tests failed ({}):\n{}\n{}",
        out.status,
        tail(&stdout, 80),
        tail(&stderr, 40)
    );
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.contains(" passed") && !summary.contains("skipped") && !summary.contains("failed"),
        "unexpected pytest summary: {summary}"
    );
}
