//! The topics a replay reads, and their indices in the reader's wanted list.

use gpn_bag::Wanted;
use gpn_msgs::RosMessage as _;
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::{Float64MultiArray, StringMessage};

/// Index of the joint states in [`ReplayTopics::wanted`].
pub(crate) const JOINT_STATES: usize = 0;
/// Index of the effort command.
pub(crate) const COMMAND: usize = 1;
/// Index of the robot description.
pub(crate) const ROBOT_DESCRIPTION: usize = 2;

/// Topic names as recorded (absolute; a relative name is taken from the root namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayTopics {
    /// sensor_msgs/msg/JointState.
    pub joint_states: String,
    /// std_msgs/msg/Float64MultiArray, the effort command (used where a state has no effort).
    pub command: String,
    /// std_msgs/msg/String, the URDF (used without `--urdf`).
    pub robot_description: String,
}

impl ReplayTopics {
    /// The node's topic names (`ros.topics`), `/robot_description` for the robot.
    pub fn of(topics: &gpn_app::TopicNames) -> Self {
        Self {
            joint_states: absolute(&topics.joint_states),
            command: absolute(&topics.command),
            robot_description: "/robot_description".into(),
        }
    }

    pub(crate) fn wanted(&self) -> Vec<Wanted> {
        vec![
            Wanted::new(absolute(&self.joint_states), JointState::TYPE_NAME),
            Wanted::new(absolute(&self.command), Float64MultiArray::TYPE_NAME),
            Wanted::new(absolute(&self.robot_description), StringMessage::TYPE_NAME),
        ]
    }
}

/// `name` in the root namespace (`~/x`, a private name, has no meaning in a recording and is
/// kept as given, so that its error names it).
fn absolute(name: &str) -> String {
    if name.starts_with('/') || name.starts_with('~') {
        name.to_owned()
    } else {
        format!("/{name}")
    }
}
