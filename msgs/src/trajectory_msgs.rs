//! `trajectory_msgs`: joint trajectories (the reference the node tracks).

use serde::{Deserialize, Serialize};

use crate::builtin_interfaces::Duration;
use crate::ros_message;
use crate::std_msgs::Header;

/// `trajectory_msgs/msg/JointTrajectoryPoint`: one waypoint; each array is empty or one
/// value per joint of the trajectory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JointTrajectoryPoint {
    /// Positions.
    pub positions: Vec<f64>,
    /// Velocities.
    pub velocities: Vec<f64>,
    /// Accelerations.
    pub accelerations: Vec<f64>,
    /// Efforts.
    pub effort: Vec<f64>,
    /// When the point is to be reached, from the trajectory's `header.stamp`.
    pub time_from_start: Duration,
}
ros_message!(
    JointTrajectoryPoint,
    "trajectory_msgs/msg/JointTrajectoryPoint",
    [
        ("positions", "float64[]"),
        ("velocities", "float64[]"),
        ("accelerations", "float64[]"),
        ("effort", "float64[]"),
        ("time_from_start", "builtin_interfaces/Duration"),
    ]
);

/// `trajectory_msgs/msg/JointTrajectory`: waypoints for named joints, timed from
/// `header.stamp` (zero: from when it is received).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JointTrajectory {
    /// Start time and frame.
    pub header: Header,
    /// Joints the points refer to, in the points' order.
    pub joint_names: Vec<String>,
    /// Waypoints in increasing `time_from_start`.
    pub points: Vec<JointTrajectoryPoint>,
}
ros_message!(
    JointTrajectory,
    "trajectory_msgs/msg/JointTrajectory",
    [
        ("header", "std_msgs/Header"),
        ("joint_names", "string[]"),
        ("points", "trajectory_msgs/JointTrajectoryPoint[]"),
    ]
);
