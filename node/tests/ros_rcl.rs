//! What rcl gives every ROS 2 node, checked from a real ROS 2 client (`ros_rcl_peer.py`,
//! rclpy on rmw_fastrtps): `--ros-args` remaps of the node's name, namespace and a topic;
//! parameter overrides from `-p` and from `--params-file` in the forms `ros2 param dump`
//! writes (the fully qualified name), the `/**` wildcard and the bare node name; the
//! parameter services (list, get, get-types, describe with ranges and read-only, set, an
//! atomic set refused whole, `/parameter_events`); the node's log on `/rosout`; type hashes;
//! and `use_sim_time` following a `/clock` publisher.
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use ros_support::{
    domain_id, params_file, rclpy_peer, ros_python, scratch, start_nominal_node, stop_node,
};
use serde_json::json;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a parameter file");
    path.to_str().expect("utf-8 path").to_owned()
}

#[test]
fn remaps_overrides_and_parameter_services_work_from_rclpy() {
    let Some(python) = ros_python("ros_rcl") else {
        return;
    };
    let dir = scratch("ros_rcl_names");
    let params = params_file(&dir, &[]);
    let dumped = write(
        &dir,
        "dumped.yaml",
        "/arm1/arm_learner:\n  ros__parameters:\n    control:\n      kd_per_s: [30.0]\n    learn:\n      admit_every: 2\n",
    );
    let wildcard = write(
        &dir,
        "wildcard.yaml",
        "/**:\n  ros__parameters:\n    ros:\n      residual_every: 5\n    some_other_nodes_parameter: 1\n",
    );
    let by_name = write(
        &dir,
        "by_name.yaml",
        "arm_learner:\n  ros__parameters:\n    control.effort_limit_fraction: 0.9\n",
    );
    let domain = domain_id(11).to_string();
    let node = start_nominal_node(
        &params,
        &domain,
        &[
            "-r",
            "__node:=arm_learner",
            "-r",
            "__ns:=/arm1",
            "-r",
            "/joint_states:=/arm1/robot/joint_states",
            "-p",
            "control.epsilon:=2.5",
            "-p",
            "ros.domain_id:=7",
            "--params-file",
            &dumped,
            "--params-file",
            &wildcard,
            "--params-file",
            &by_name,
        ],
    );
    let out = rclpy_peer(&python, "ros_rcl_peer.py", &["names", &domain])
        .output()
        .expect("run ros_rcl_peer.py");
    let summary = stop_node(node);
    let r = gpn_test_support::json_output(&out, "ros_rcl_peer.py names");
    eprintln!(
        "peer: {}\nnode: {summary}",
        serde_json::to_string_pretty(&r).unwrap_or_default()
    );

    assert_eq!(summary["node"], "/arm1/arm_learner");
    assert_eq!(
        r["graph"], true,
        "the node is in the graph under its remapped name"
    );
    assert_eq!(r["services"], true);
    let list = r["list"].as_array().expect("list");
    assert_eq!(list.len(), gp_node::app::param_schema::SCHEMA.len());
    for name in ["use_sim_time", "control.epsilon", "ros.topics.joint_states"] {
        assert!(list.contains(&json!(name)), "{name} listed");
    }
    assert!(
        r["list_prefixes"]
            .as_array()
            .expect("prefixes")
            .contains(&json!("ros.topics"))
    );
    let topics = r["list_ros_topics"].as_array().expect("ros.topics");
    assert!(
        !topics.is_empty()
            && topics
                .iter()
                .all(|n| n.as_str().is_some_and(|n| n.starts_with("ros.topics.")))
    );

    let get = &r["get"];
    assert_eq!(get["control.epsilon"], 2.5, "-p");
    assert_eq!(get["control.kd_per_s"], json!([30.0]), "the dumped form");
    assert_eq!(get["learn.admit_every"], 2, "the dumped form");
    assert_eq!(get["ros.residual_every"], 5, "the /** wildcard");
    assert_eq!(
        get["control.effort_limit_fraction"], 0.9,
        "the bare node name"
    );
    assert_eq!(get["ros.node_name"], "arm_learner", "the name in force");
    assert_eq!(get["ros.namespace"], "/arm1");
    assert_eq!(
        get["ros.domain_id"], summary["domain_id"],
        "the domain in force, not the ignored override"
    );
    assert_eq!(get["use_sim_time"], false);
    assert_eq!(get["no.such.parameter"], serde_json::Value::Null);
    // rcl_interfaces/msg/ParameterType: bool 1, integer 2, double 3, double[] 8, not set 0.
    let types = &r["types"];
    assert_eq!(
        [
            &types["control.epsilon"],
            &types["control.kd_per_s"],
            &types["learn.admit_every"]
        ],
        [&json!(3), &json!(8), &json!(2)]
    );
    assert_eq!(types["use_sim_time"], 1);
    assert_eq!(types["no.such.parameter"], 0);

    let d = &r["describe"];
    assert_eq!(
        d["ros.watchdog_timeout_s"]["floating_point_range"],
        json!([[0.0, 3600.0]])
    );
    assert_eq!(d["ros.watchdog_timeout_s"]["read_only"], false);
    assert!(
        d["ros.watchdog_timeout_s"]["additional_constraints"]
            .as_str()
            .is_some_and(|c| c.contains("(0, 3600]"))
    );
    assert!(
        d["ros.watchdog_timeout_s"]["description"]
            .as_str()
            .is_some_and(|c| c.contains("[s]"))
    );
    assert_eq!(d["robot.urdf"]["read_only"], true);
    assert_eq!(
        d["learn.admit_every"]["integer_range"],
        json!([[1, 1000000, 1]])
    );
    assert_eq!(d["ros.mode"]["additional_constraints"], "control | learn");

    assert_eq!(
        r["set_epsilon"],
        json!([{"successful": true, "reason": ""}])
    );
    let refused = r["set_refused"].as_array().expect("refused");
    assert_eq!(refused.len(), 4);
    for (i, why) in [
        "in [0.001, 1000000]",
        "read-only",
        "unknown parameter",
        "double",
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(refused[i]["successful"], false, "{}", refused[i]);
        assert!(
            refused[i]["reason"]
                .as_str()
                .is_some_and(|s| s.contains(why)),
            "{} should say {why:?}",
            refused[i]
        );
    }
    assert_eq!(r["set_atomic_refused"]["successful"], false);
    assert_eq!(
        r["get_after"]["control.epsilon"], 3.0,
        "the atomic set changed nothing"
    );
    // As the node derived it from the robot (the refused atomic set changed nothing).
    let derived = gp_node::app::resolved_default_params().expect("built-in parameters");
    assert_eq!(
        r["get_after"]["control.kp_per_s2"],
        serde_json::to_value(&derived.control.kp_per_s2).expect("JSON")
    );

    assert_eq!(r["matched"], true);
    assert!(
        r["commands"].as_u64().is_some_and(|n| n >= 150),
        "joint states on the remapped topic answered"
    );
    assert_eq!(r["commands_finite"], true);
    assert!(
        r["residuals"].as_u64().is_some_and(|n| n >= 1),
        "~/residual under /arm1/arm_learner"
    );
    assert_eq!(r["announce"]["success"], true, "{}", r["announce"]);
    let hashes = &r["type_hashes"];
    assert_eq!(hashes["node"].as_array().map(Vec::len), Some(1), "{hashes}");
    assert_eq!(hashes["node"], hashes["rclpy"], "the residual's type hash");
    assert!(
        hashes["node"][0]
            .as_str()
            .is_some_and(|h| h.contains("RIHS01")),
        "a REP 2011 hash: {hashes}"
    );

    // The set that took effect was announced (the refused ones were not).
    assert_eq!(
        r["parameter_events"],
        json!([{"node": "/arm1/arm_learner", "changed": {"control.epsilon": 3.0}}])
    );
    // The node's log reaches /rosout under its logger (namespace.name): the start line
    // (INFO = 20) and the ignored override (WARN = 30).
    let rosout = r["rosout"].as_array().expect("rosout");
    let has = |level: u64, text: &str| {
        rosout
            .iter()
            .any(|l| l["level"] == level && l["msg"].as_str().is_some_and(|m| m.contains(text)))
    };
    assert!(
        has(20, "node /arm1/arm_learner on 7 joints of panda"),
        "{rosout:?}"
    );
    assert!(
        has(
            30,
            "ignored the --ros-args parameter some_other_nodes_parameter"
        ),
        "{rosout:?}"
    );
    assert!(
        has(
            30,
            "ignored the --ros-args parameter ros.domain_id: rcl has already used it"
        ),
        "{rosout:?}"
    );
}

#[test]
fn use_sim_time_stamps_with_the_clock_topic() {
    let Some(python) = ros_python("ros_rcl") else {
        return;
    };
    let dir = scratch("ros_rcl_clock");
    let params = params_file(
        &dir,
        &[("diagnostics_period_s: 1.0", "diagnostics_period_s: 0.5")],
    );
    let domain = domain_id(12).to_string();
    let node = start_nominal_node(&params, &domain, &["-p", "use_sim_time:=true"]);
    let out = rclpy_peer(&python, "ros_rcl_peer.py", &["clock", &domain])
        .output()
        .expect("run ros_rcl_peer.py");
    let summary = stop_node(node);
    let r = gpn_test_support::json_output(&out, "ros_rcl_peer.py clock");
    eprintln!("peer: {r}\nnode: {summary}");
    assert_eq!(summary["use_sim_time"], true);
    let stamps: Vec<f64> = r["diagnostic_stamps"]
        .as_array()
        .expect("stamps")
        .iter()
        .filter_map(serde_json::Value::as_f64)
        .collect();
    let last_clock = r["clock_last"].as_f64().expect("clock");
    // Diagnostics sent once /clock runs carry its time (1000 s on), not the wall clock's.
    let on_clock: Vec<f64> = stamps.iter().copied().filter(|&t| t >= 1000.0).collect();
    assert!(on_clock.len() >= 3, "{stamps:?}");
    assert!(
        on_clock.iter().all(|&t| t <= last_clock + 1e-6),
        "{stamps:?}"
    );
    assert!(
        stamps.iter().all(|&t| t < 1.0e6),
        "no wall-clock stamp: {stamps:?}"
    );
}
