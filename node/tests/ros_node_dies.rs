//! Command-decision issue, "what happens if the node dies": `gp-node run` commands the MuJoCo
//! Panda over DDS, is killed with SIGKILL mid-run, and the robot's driver — run with a command
//! timeout, `--on-command-timeout hold` — stops applying the node's last torque and holds the
//! arm with gravity compensation and damping until the run's end, which completes normally.
//! (The driver's own suite measures the hold's drift against the true state:
//! `mujoco_driver/tests/test_command_timeout.py`.)
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use std::process::Stdio;
use std::time::Duration;

use ros_support::{domain_id, driver_result, mujoco_driver, params_file, python, scratch};

#[test]
fn a_killed_node_leaves_the_arm_to_the_drivers_command_timeout() {
    let Some(python) = python("ros_node_dies") else {
        return;
    };
    let dir = scratch("ros_node_dies");
    let params = params_file(&dir, &[]);
    let params = params.to_str().expect("utf-8 path");
    let domain = domain_id(61).to_string();
    let result_path = dir.join("result.json");
    let mut driver = mujoco_driver(&python, params, &domain, "8", &result_path);
    // A robot's timeout: 0.25 s per state, then the hold (the last option wins).
    driver
        .args([
            "--command-timeout-s",
            "0.25",
            "--on-command-timeout",
            "hold",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let driver = driver.spawn().expect("start the MuJoCo driver");
    let node = ros_support::start_nominal_node(std::path::Path::new(params), &domain, &[]);
    // Discovery, the driver's settling pause, then a few seconds of control.
    std::thread::sleep(Duration::from_secs(4));
    let log = node.kill();
    let out = driver.wait_with_output().expect("the driver ends");
    let result = driver_result(&result_path, &out.stderr);
    eprintln!("driver: {result}\nnode log (killed):\n{log}");
    assert!(
        out.status.success() && result["completed"] == true,
        "the run did not complete: {}\n{}",
        result["error"],
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        result["steps"].as_u64().unwrap_or(0) > 0
            && result["command_timeouts"].as_u64().unwrap_or(0) >= 1,
        "the commands did not time out: {result}"
    );
    let safe = result["safe_steps"].as_u64().unwrap_or(0);
    let steps = result["steps"].as_u64().unwrap_or(0);
    assert!(
        safe > 0 && safe < steps,
        "the node commanded some steps, the driver's hold the rest: {safe} of {steps}"
    );
}
