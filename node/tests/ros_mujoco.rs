//! ROS-node acceptance: `gp-node run` controls the MuJoCo Panda (mujoco_driver/mujoco_driver.py, PyPI
//! `mujoco` + `cyclonedds`, lock-step paced by the wall clock, `--realtime`) over real DDS for 30 s of simulated time with the
//! default scenario (1.5 kg unmodelled payload, friction, armature), once with learning and
//! once with the nominal law; the learned run's RMS tracking error over the second half,
//! measured by the driver on MuJoCo's true state, must be ≤ 0.5× the nominal run's on every
//! joint. The learned run's driver publishes the reference volatile (ROS 2's default QoS), the
//! nominal run's transient-local: the node's `~/reference` subscription matches both.
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use ros_support::{closed_loop, per_joint, python};

/// One closed-loop run; the learned run's driver publishes the reference volatile (the node
/// must track a volatile reference), the nominal run's transient-local.
fn run(
    python: &std::path::Path,
    tag: &str,
    nominal: bool,
    salt: u32,
) -> (serde_json::Value, serde_json::Value) {
    let durability = if nominal {
        "transient_local"
    } else {
        "volatile"
    };
    closed_loop(python, tag, nominal, salt, durability, &[])
}

#[test]
fn learned_law_halves_the_tracking_error_of_the_mujoco_panda_over_dds() {
    let Some(python) = python("ros_mujoco") else {
        return;
    };
    let (nominal, _) = run(&python, "nominal", true, 2);
    let (learned, node) = run(&python, "learned", false, 3);
    let rms_nominal = per_joint(&nominal["rms_tracking_error_rad"]);
    let rms_learned = per_joint(&learned["rms_tracking_error_rad"]);
    let ratios: Vec<f64> = rms_learned
        .iter()
        .zip(&rms_nominal)
        .map(|(l, n)| l / n)
        .collect();
    eprintln!(
        "MuJoCo over DDS, RMS over the second half (rad): nominal {rms_nominal:?}, learned \
         {rms_learned:?}, learned/nominal {ratios:?}; node latency {} (us), driver round trip {}",
        node["latency_us"], learned["round_trip_us"]
    );
    assert!(
        node["models_adopted"].as_u64().expect("adopted") >= 1,
        "a model was adopted"
    );
    for (j, r) in ratios.iter().enumerate() {
        assert!(*r <= 0.5, "joint {j}: learned/nominal {r:.3} > 0.5");
    }
}
