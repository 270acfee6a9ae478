//! Issue 27: the ROS node logs to rerun when asked. `gp-node run --rerun save FILE` controls
//! the MuJoCo Panda (mujoco_driver/mujoco_driver.py over Cyclone DDS, real time) with
//! learning for 12 s; the recording, read back with the rerun SDK's own reader
//! (`viz_read_rrd.py`), must carry the same layout as `gp-node sim`'s (every joint's views,
//! the ±η_cal band, the measured residual in place of the simulator's truth) on the node's
//! timeline, with the run's ticks in it and the robot in 3-D.
#![cfg(all(feature = "ros", feature = "rerun"))]

mod ros_support;
mod viz_support;

use gp_node::robot::Model;
use ros_support::{LoopExtras, closed_loop_with, python, scratch};
use viz_support::{check_layout, read_back};

#[test]
fn the_node_records_its_run_with_the_layout_of_the_simulator() {
    let Some(python) = python("ros_mujoco_rerun") else {
        return;
    };
    let rrd = scratch("ros_mujoco_rerun").join("node.rrd");
    let _ = std::fs::remove_file(&rrd);
    let rrd_arg = rrd.to_str().expect("utf-8 path");
    let (_, node) = closed_loop_with(
        &python,
        "rerun",
        9,
        "volatile",
        &LoopExtras {
            node: &["--rerun", "save", rrd_arg],
            duration_s: "15",
            // The ±η_cal band after 1000 samples with a model rather than 5000.
            params: &[("calibration_samples: 5000", "calibration_samples: 1000")],
            ..LoopExtras::default()
        },
    );
    let report = &node["rerun"];
    eprintln!("rerun: {report}; node ticks {}", node["ticks"]);
    assert!(report["error"].is_null(), "{report}");
    assert!(
        report["target"]
            .as_str()
            .is_some_and(|t| t.contains(rrd_arg)),
        "{report}"
    );
    let (logged, dropped) = (
        report["logged"].as_u64().expect("logged"),
        report["dropped"].as_u64().expect("dropped"),
    );
    let ticks = node["ticks"].as_u64().expect("ticks");
    assert_eq!(logged + dropped, ticks, "every tick is logged or counted");
    assert!(logged >= ticks / 2, "{dropped} of {ticks} ticks dropped");

    let summary = read_back(&python, &rrd);
    assert_eq!(summary["application_ids"][0], "gp-node");
    let entities = summary["entities"].as_object().expect("entities");
    let entity = |path: &str| -> &serde_json::Value {
        entities
            .get(path)
            .unwrap_or_else(|| panic!("no entity {path}: {:#?}", entities.keys()))
    };
    let rows = |path: &str| entity(path)["rows"].as_u64().unwrap_or(0);
    let robot = Model::from_urdf_str(gp_node::app::DEFAULT_URDF, "panda.urdf").expect("panda");
    let joints = robot.joint_names().to_vec();
    check_layout(&summary["blueprints"], &joints, false, &|path| {
        entities.contains_key(path)
    });
    for joint in &joints {
        let j = |rest: &str| format!("/joints/{joint}/{rest}");
        for rest in [
            "position/q",
            "position/q_d",
            "tracking_error",
            "torque/applied",
        ] {
            let path = j(rest);
            assert_eq!(rows(&path), logged, "{path}");
            assert_eq!(
                entity(&path)["timelines"],
                serde_json::json!(["node_time", "tick"]),
                "{path}"
            );
        }
        // What the learner measured (at least every sample it learned from), and the
        // model's band once calibrated.
        let learned = node["samples_learned"].as_u64().expect("samples learned");
        assert!(
            rows(&j("residual/measured")) + dropped >= learned,
            "{joint}: {} measured residuals, {learned} samples learned",
            rows(&j("residual/measured"))
        );
        assert!(rows(&j("residual/upper")) > 0, "{joint}: no band");
        // A robot has no ground truth: no true residual.
        assert!(!entities.contains_key(&j("residual/true")), "{joint}");
        // The measured q tracks the reference.
        let err = &entity(&j("tracking_error"))["scalars"];
        assert!(
            err["max"].as_f64().expect("max").abs() < 0.5,
            "{joint}: {err}"
        );
    }
    assert!(
        !entities.keys().any(|p| p.starts_with("/nominal/")),
        "the node records one run"
    );
    assert!(rows("/model/experts") > 0);
    assert!(rows("/dynamics/events") >= 1, "a model went live");
    assert!(rows("/robot/links/panda_link7") > 0, "the 3-D robot");
}
