//! Command-decision issue, arming over ROS 2: `gp-node run` without `--autostart` commands
//! nothing while an rclpy robot streams joint states; `ros2 param set … ros.active true`
//! (the peer's set_parameters call) activates it, and its first command is the torque that
//! holds the arm where it stands (g(q), within one rate-limited step), then it holds the pose;
//! set back to false, it ends with the safe output (gravity at the pose) and goes quiet.
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use gp_node::robot::{Data, gravity};
use ros_support::{domain_id, params_file, rclpy_peer, scratch, start_nominal_node, stop_node};

/// The numbers of a JSON array (`what` names it in the panic).
fn floats(value: &serde_json::Value, what: &str) -> Vec<f64> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {value}"))
        .iter()
        .map(|v| v.as_f64().expect("number"))
        .collect()
}

#[test]
fn the_node_commands_only_once_activated_starting_from_the_holding_torque() {
    let Some(python) = gpn_test_support::ros_python("ros_arming") else {
        return;
    };
    let dir = scratch("ros_arming");
    // Inactive at start: the shipped default, which the test helper switches on otherwise.
    let params = params_file(
        &dir,
        &[("active: false", "active: false  # the shipped default")],
    );
    let domain = domain_id(62).to_string();
    let node = start_nominal_node(&params, &domain, &[]);
    let out = rclpy_peer(&python, "ros_arming_peer.py", &[&domain])
        .output()
        .expect("run ros_arming_peer.py");
    let summary = stop_node(node);
    let r = gpn_test_support::json_output(&out, "ros_arming_peer.py");
    eprintln!("peer: {r}\nnode: {summary}");
    assert!(r.get("error").is_none(), "{r}");

    assert_eq!(r["commands_while_inactive"], 0, "{r}");
    assert_eq!(r["activation_accepted"], true, "{r}");
    assert!(
        r["commands_after_activation"].as_u64().unwrap_or(0) > 50,
        "{r}"
    );
    assert_eq!(summary["law"]["activations"], 1, "{summary}");
    assert!(
        summary["law"]["inactive_ticks"].as_u64().unwrap_or(0) > 50,
        "{summary}"
    );

    // The first command: g(q) at the pose, at most one rate-limited step (50 × the effort
    // limit per second, 10 ms between states: capped at twice the running period) away.
    let robot =
        gp_node::app::load_robot(&gp_node::app::NodeParams::from_file(&params).expect("params"))
            .expect("robot");
    let pose = floats(&r["pose"], "pose");
    let g = gravity(&robot, &mut Data::new(&robot), &pose)
        .expect("g")
        .to_vec();
    let first = floats(&r["first_command"], "a first command");
    for (j, (u, g)) in first.iter().zip(&g).enumerate() {
        let step = 50.0 * robot.limits()[j].effort * 0.02;
        assert!(
            (u - g).abs() <= step + 1e-9,
            "joint {j}: first command {u}, g(q) {g}"
        );
    }
    // Holding the pose at rest: the law's command stays g(q).
    let last = floats(&r["last_command"], "a last command");
    for (j, (u, g)) in last.iter().zip(&g).enumerate() {
        assert!(
            (u - g).abs() <= 1e-6 * (1.0 + g.abs()),
            "joint {j}: holding with {u}, g(q) {g}"
        );
    }
    // Deactivated: the last command is the safe output, then none.
    assert_eq!(r["deactivation_accepted"], true, "{r}");
    assert_eq!(r["commands_once_inactive"], 0, "{r}");
    let safe = floats(&r["command_after_deactivation"], "a command");
    for (j, (u, g)) in safe.iter().zip(&g).enumerate() {
        assert!(
            (u - g).abs() <= 1e-6 * (1.0 + g.abs()),
            "joint {j}: safe output {u}, g(q) {g}"
        );
    }
}
