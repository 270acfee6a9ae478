//! Issue 23, the ros2_control wiring on every robot: `gp-node ros2-control` and the shipped
//! xacro macro (`urdf/ros2_control.urdf.xacro`, expanded with PyPI xacro) against each URDF
//! of the set read independently (`ros2_control_files.py`): the block names exactly the
//! movable joints with the effort command and position/velocity/effort state interfaces, the
//! controllers YAML the same joints in the node's command order; the shipped
//! `config/ros2_controllers.yaml` is the default robot's, and the node's default topics are
//! the controllers'.

use std::process::Command;

use gpn_test_support::{json_output, python, repo_root};

#[test]
fn the_xacro_block_and_the_controllers_name_every_movable_joint_of_every_robot() {
    let Some(python) = python("ros2_control_files") else {
        return;
    };
    let root = repo_root();
    let out = Command::new(python)
        .arg(root.join("node/tests/ros2_control_files.py"))
        .arg(env!("CARGO_BIN_EXE_gp-node"))
        .arg(&root)
        .output()
        .expect("run ros2_control_files.py");
    let r = json_output(&out, "ros2_control_files.py");
    eprintln!("{r}");
    assert!(r.get("error").is_none(), "{r}");
    let robots = r.as_object().expect("object");
    assert!(robots.len() >= 12, "{r}");
    for (name, found) in robots {
        assert_eq!(found["problems"], serde_json::json!([]), "{name}: {found}");
        assert!(found["joints"].as_u64().expect("count") >= 3, "{name}");
    }
    // A URDF with its own block (xarm7's) was covered.
    assert!(
        robots.values().any(|f| f["own_ros2_control_blocks"] == 1),
        "{r}"
    );
}

#[test]
fn the_shipped_controllers_are_the_default_robots_and_match_the_node_topics() {
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .arg("ros2-control")
        .output()
        .expect("gp-node ros2-control");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shipped = std::fs::read_to_string(repo_root().join("config/ros2_controllers.yaml"))
        .expect("config/ros2_controllers.yaml");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        shipped,
        "config/ros2_controllers.yaml is not `gp-node ros2-control` (regenerate it)"
    );
    let params =
        gp_node::app::NodeParams::from_yaml(gp_node::app::DEFAULT_PARAMS_YAML).expect("defaults");
    assert_eq!(params.ros.topics.joint_states, "/joint_states");
    assert_eq!(params.ros.topics.command, "/effort_controller/commands");
    assert!(
        shipped.contains("\neffort_controller:\n  ros__parameters:\n    interface_name: effort\n")
    );
}

#[test]
fn a_command_topic_no_forward_command_controller_reads_is_refused() {
    let dir = std::env::temp_dir().join(format!("gpn_ros2_control_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let params = dir.join("params.yaml");
    let text = gp_node::app::DEFAULT_PARAMS_YAML.replace(
        "command: /effort_controller/commands",
        "command: /robot/arm/effort",
    );
    std::fs::write(&params, text).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["ros2-control", "--params"])
        .arg(&params)
        .output()
        .expect("gp-node ros2-control");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ForwardCommandController reads /<controller>/commands"),
        "{err}"
    );
}
