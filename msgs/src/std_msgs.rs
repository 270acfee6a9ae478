//! `std_msgs`: the header and the multi-array that ros2_control's forward command
//! controllers read.

use serde::{Deserialize, Serialize};

use crate::builtin_interfaces::Time;
use crate::ros_message;

/// `std_msgs/msg/Header`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Acquisition time of the data.
    pub stamp: Time,
    /// Coordinate frame of the data.
    pub frame_id: String,
}
ros_message!(
    Header,
    "std_msgs/msg/Header",
    [("stamp", "builtin_interfaces/Time"), ("frame_id", "string")]
);

/// `std_msgs/msg/MultiArrayDimension`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MultiArrayDimension {
    /// Label of the dimension.
    pub label: String,
    /// Size of the dimension.
    pub size: u32,
    /// Stride of the dimension.
    pub stride: u32,
}
ros_message!(
    MultiArrayDimension,
    "std_msgs/msg/MultiArrayDimension",
    [
        ("label", "string"),
        ("size", "uint32"),
        ("stride", "uint32")
    ]
);

/// `std_msgs/msg/MultiArrayLayout`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MultiArrayLayout {
    /// Dimensions (empty for a plain vector, as ros2_control sends it).
    pub dim: Vec<MultiArrayDimension>,
    /// Padding elements at the front of `data`.
    pub data_offset: u32,
}
ros_message!(
    MultiArrayLayout,
    "std_msgs/msg/MultiArrayLayout",
    [
        ("dim", "std_msgs/MultiArrayDimension[]"),
        ("data_offset", "uint32")
    ]
);

/// `std_msgs/msg/Float64MultiArray`: the effort command of ros2_control's
/// `effort_controllers/JointGroupEffortController` (one value per joint, in the
/// controller's joint order).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Float64MultiArray {
    /// Layout of `data`.
    pub layout: MultiArrayLayout,
    /// The values.
    pub data: Vec<f64>,
}
ros_message!(
    Float64MultiArray,
    "std_msgs/msg/Float64MultiArray",
    [
        ("layout", "std_msgs/MultiArrayLayout"),
        ("data", "float64[]")
    ]
);

/// `std_msgs/msg/Empty`: no data (a signal). ROS 2's IDL gives an empty message one dummy
/// byte, which is what goes on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {
    /// The placeholder member of an empty structure (always 0).
    pub structure_needs_at_least_one_member: u8,
}
ros_message!(
    Empty,
    "std_msgs/msg/Empty",
    [("structure_needs_at_least_one_member", "uint8")]
);

/// `std_msgs/msg/String`: one string (the robot description on `/robot_description`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StringMessage {
    /// The text.
    pub data: String,
}
ros_message!(StringMessage, "std_msgs/msg/String", [("data", "string")]);
