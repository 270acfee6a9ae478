//! Issue 23, the node as a ros2_control robot sees it: the MuJoCo Panda at the controllers'
//! update rate (1 kHz, `config/ros2_controllers.yaml`) with a one-cycle command delay (the
//! driver's `--command-delay-steps 1`: the command answering state k acts from step k + 1,
//! as a command written in one controller-manager cycle reaches the hardware in the next).
//! Same scenario as `ros_mujoco.rs` (30 s, 1.5 kg unmodelled payload, friction, armature),
//! nominal and learned: the learned law must still halve the RMS tracking error of every
//! joint over the second half (the numbers are printed for the closing note).
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use ros_support::{closed_loop, per_joint, python};

fn run(python: &std::path::Path, tag: &str, nominal: bool, salt: u32) -> serde_json::Value {
    let (result, _) = closed_loop(
        python,
        tag,
        nominal,
        salt,
        "transient_local",
        &["--command-delay-steps", "1"],
    );
    assert_eq!(result["command_delay_steps"], 1, "{result}");
    result
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
