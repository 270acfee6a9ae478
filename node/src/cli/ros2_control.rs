//! `gp-node ros2-control`: the ros2_control side of a robot for the node, derived from its
//! model — the controllers YAML (joint_state_broadcaster and a ForwardCommandController on
//! the effort interface of the joints the node commands, in the node's command order), or
//! those joints for the `joints` argument of the shipped xacro macro
//! (`urdf/ros2_control.urdf.xacro`).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::app::{NodeParams, load_robot};

/// What to print.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Print {
    /// The controllers YAML (controller_manager, joint_state_broadcaster, effort_controller).
    Controllers,
    /// The commanded joints, space-separated (xacro's `joints:=` argument).
    Joints,
}

/// Arguments of `gp-node ros2-control`.
#[derive(clap::Args)]
pub struct Ros2ControlArgs {
    /// Parameter file (its `robot.urdf`, `robot.joints` and topic names); default: the
    /// built-in one.
    #[arg(long)]
    params: Option<PathBuf>,
    /// The robot (URDF; overrides `robot.urdf`).
    #[arg(long, value_name = "FILE.urdf")]
    urdf: Option<PathBuf>,
    /// The joints the node controls, comma-separated URDF names (overrides `robot.joints`).
    #[arg(long, value_name = "A,B,C", value_delimiter = ',')]
    joints: Vec<String>,
    /// The controller manager's update rate and the joint state broadcaster's, Hz.
    #[arg(long, default_value_t = 1000)]
    update_rate_hz: u32,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Print::Controllers)]
    print: Print,
}

/// Prints the controllers YAML or the joints.
pub fn run(args: Ros2ControlArgs) -> anyhow::Result<ExitCode> {
    let params = super::robot_params(args.params.as_deref(), args.urdf.as_deref(), &args.joints)?;
    let robot = load_robot(&params)?;
    let description = &params.robot.urdf;
    if !description.as_os_str().is_empty()
        && std::fs::read_to_string(description).is_ok_and(|text| text.contains("<ros2_control"))
    {
        eprintln!(
            "warning: {} has a <ros2_control> block of its own: its hardware claims these \
             joints too; give its joints an effort command interface, or remove it before \
             adding the node's (urdf/ros2_control.urdf.xacro)",
            description.display()
        );
    }
    if args.update_rate_hz == 0 {
        anyhow::bail!("--update-rate-hz must be > 0");
    }
    let joints = robot.joint_names();
    match args.print {
        Print::Joints => println!("{}", joints.join(" ")),
        Print::Controllers => print!(
            "{}",
            controllers_yaml(robot.name(), joints, &params, args.update_rate_hz)?
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// The controller whose topic is the node's command topic (`/<name>/commands`), if it is one.
fn command_controller(command_topic: &str) -> anyhow::Result<&str> {
    command_topic
        .trim_start_matches('/')
        .strip_suffix("/commands")
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "ros.topics.command is {command_topic:?}: a ForwardCommandController reads \
                 /<controller>/commands; set it to e.g. /effort_controller/commands"
            )
        })
}

/// The controllers YAML for `joints` (the node's command order).
fn controllers_yaml(
    robot: &str,
    joints: &[String],
    params: &NodeParams,
    rate_hz: u32,
) -> anyhow::Result<String> {
    let topics = &params.ros.topics;
    let controller = command_controller(&topics.command)?;
    if topics.joint_states != "/joint_states" {
        eprintln!(
            "warning: ros.topics.joint_states is {:?}; joint_state_broadcaster publishes \
             /joint_states (remap one of them)",
            topics.joint_states
        );
    }
    let list: String = joints.iter().map(|j| format!("      - {j}\n")).collect();
    Ok(format!(
        "# ros2_control controllers for gp_learning_node on {robot} (gp-node ros2-control).\n\
         # joint_state_broadcaster publishes /joint_states (position, velocity, effort), which\n\
         # the node reads; {controller} (ForwardCommandController, effort interface) takes\n\
         # the node's command on /{controller}/commands, one value per joint in this order.\n\
         controller_manager:\n  ros__parameters:\n    update_rate: {rate_hz}  # Hz\n\
         \x20   joint_state_broadcaster:\n      type: joint_state_broadcaster/JointStateBroadcaster\n\
         \x20   {controller}:\n      type: forward_command_controller/ForwardCommandController\n\
         joint_state_broadcaster:\n  ros__parameters:\n    update_rate: {rate_hz}  # Hz\n\
         {controller}:\n  ros__parameters:\n    interface_name: effort\n    joints:\n{list}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_controller_comes_from_the_command_topic() {
        assert_eq!(
            command_controller("/effort_controller/commands").unwrap(),
            "effort_controller"
        );
        assert_eq!(command_controller("arm/commands").unwrap(), "arm");
        let nested = command_controller("/robot/arm/commands").unwrap_err();
        assert!(
            nested.to_string().contains("ForwardCommandController"),
            "{nested}"
        );
        assert!(command_controller("/commands").is_err());
    }
}
