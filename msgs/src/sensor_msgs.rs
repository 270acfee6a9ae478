//! `sensor_msgs`: the joint state.

use serde::{Deserialize, Serialize};

use crate::ros_message;
use crate::std_msgs::Header;

/// `sensor_msgs/msg/JointState`: positions (rad or m), velocities and efforts (N·m or N) of
/// named joints. `position`, `velocity` and `effort` are each either empty or as long as
/// `name`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JointState {
    /// Stamp and frame.
    pub header: Header,
    /// Joint names.
    pub name: Vec<String>,
    /// Positions.
    pub position: Vec<f64>,
    /// Velocities.
    pub velocity: Vec<f64>,
    /// Efforts.
    pub effort: Vec<f64>,
}
ros_message!(
    JointState,
    "sensor_msgs/msg/JointState",
    [
        ("header", "std_msgs/Header"),
        ("name", "string[]"),
        ("position", "float64[]"),
        ("velocity", "float64[]"),
        ("effort", "float64[]"),
    ]
);
