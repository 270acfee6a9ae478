//! Issue 23, the node as a ros2_control robot sees it: the MuJoCo Panda at the controllers'
//! update rate (1 kHz, `config/ros2_controllers.yaml`) with a one-cycle command delay (the
//! driver's `--command-delay-steps 1`: the command answering state k acts from step k + 1,
//! as a command written in one controller-manager cycle reaches the hardware in the next).
//! Same scenario as `ros_mujoco.rs` (30 s, 1.5 kg unmodelled payload, friction, armature),
//! nominal and learned: the learned law must still halve the RMS tracking error of every
//! joint over the second half (the numbers are printed for the closing note).
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use ros_support::{
    domain_id, driver_result, mujoco_driver, params_file, python, scratch, start_node, stop_node,
};

fn run(python: &std::path::Path, tag: &str, nominal: bool, salt: u32) -> serde_json::Value {
    let dir = scratch(&format!("ros_mujoco_delay_{tag}"));
    // As in ros_mujoco.rs: the debug build's grouped model would overrun next to MuJoCo.
    let params = params_file(
        &dir,
        &[
            ("watchdog_timeout_s: 0.1", "watchdog_timeout_s: 0.5"),
            ("hyper_sharing: grouped", "hyper_sharing: tied   "),
        ],
    );
    let params = params.to_str().expect("utf-8 path");
    let domain = domain_id(salt).to_string();
    let mut args = vec!["--params", params, "--domain-id", &domain, "--json"];
    if nominal {
        args.push("--nominal");
    }
    let node = start_node(&args);
    let result_path = dir.join("result.json");
    let driver = mujoco_driver(python, params, &domain, "30", &result_path)
        .args(["--command-delay-steps", "1"])
        .output()
        .expect("run the MuJoCo driver");
    let summary = stop_node(node);
    let result = driver_result(&result_path, &driver.stderr);
    assert!(
        driver.status.success() && result["completed"] == true,
        "the {tag} run did not complete: {}\n{}",
        result["error"],
        String::from_utf8_lossy(&driver.stderr)
    );
    assert_eq!(result["command_delay_steps"], 1, "{result}");
    eprintln!("{tag}: driver {result}\n{tag}: node {summary}");
    result
}

fn per_joint(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("per-joint array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

#[test]
fn with_a_one_cycle_command_delay_the_learned_law_still_halves_the_tracking_error() {
    let Some(python) = python("ros_mujoco_delay") else {
        return;
    };
    let nominal = per_joint(&run(&python, "nominal", true, 5)["rms_tracking_error_rad"]);
    let learned = per_joint(&run(&python, "learned", false, 6)["rms_tracking_error_rad"]);
    let ratios: Vec<f64> = learned.iter().zip(&nominal).map(|(l, n)| l / n).collect();
    eprintln!(
        "MuJoCo, 1 kHz, one-cycle command delay, RMS over the second half (rad): nominal \
         {nominal:?}, learned {learned:?}, learned/nominal {ratios:?}"
    );
    for (j, r) in ratios.iter().enumerate() {
        assert!(*r <= 0.5, "joint {j}: learned/nominal {r:.3} > 0.5");
    }
}
