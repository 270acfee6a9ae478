//! gpn_msgs: the ROS 2 messages and services of gp-learning-node as plain serde types, laid
//! out field for field as their `.msg`/`.srv` definitions so that ROS 2's CDR encoding of
//! them is what a CDR serialiser of these structs writes.
//!
//! Boundary: data only. No transport, no DDS: the ROS layer (`gpn_ros_io`, feature `ros`)
//! converts them to and from the rosidl-generated types of r2r at its edge, so the
//! validation and conversion code around them builds and is tested on machines without ROS. Two families: the project's own interface package `gp_learning_node_msgs`
//! (`msg/` and `srv/` beside this crate, built by colcon for ROS 2 users) and the handful of
//! standard ROS 2 (Jazzy) types the node uses.
//!
//! Every type implements [`RosMessage`]: its ROS type name and its field list, which tests
//! check against the `.msg` files and against PyPI `rosbags`' definitions and CDR bytes.
//!
//! ```
//! use gpn_msgs::{RosMessage, sensor_msgs::JointState};
//! assert_eq!(JointState::TYPE_NAME, "sensor_msgs/msg/JointState");
//! assert_eq!(JointState::dds_type_name(), "sensor_msgs::msg::dds_::JointState_");
//! ```
#![warn(missing_docs)]

pub mod builtin_interfaces;
pub mod definition;
pub mod diagnostic_msgs;
pub mod gp_learning_node_msgs;
pub mod sensor_msgs;
pub mod std_msgs;
pub mod trajectory_msgs;

/// One field of a message definition: its name and its ROS type as a `.msg` file spells it
/// (`float64[]`, `string`, `std_msgs/Header`…; nested types as `package/Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Field name.
    pub name: &'static str,
    /// ROS type.
    pub ros_type: &'static str,
}

/// Shorthand for the field tables.
const fn field(name: &'static str, ros_type: &'static str) -> Field {
    Field { name, ros_type }
}

/// A ROS 2 message type.
pub trait RosMessage: serde::Serialize + serde::de::DeserializeOwned {
    /// Full ROS type name, `package/msg/Type` (services' parts: `package/srv/Type_Request`).
    const TYPE_NAME: &'static str;
    /// The fields in definition order.
    const FIELDS: &'static [Field];

    /// The package (`sensor_msgs`).
    fn package() -> &'static str {
        Self::TYPE_NAME.split('/').next().unwrap_or_default()
    }

    /// The type's own name (`JointState`).
    fn type_name() -> &'static str {
        Self::TYPE_NAME.rsplit('/').next().unwrap_or_default()
    }

    /// The DDS type name ROS 2 middlewares register, `package::msg::dds_::Type_`.
    fn dds_type_name() -> String {
        let mut parts = Self::TYPE_NAME.split('/');
        let (pkg, kind, name) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        format!("{pkg}::{kind}::dds_::{name}_")
    }
}

/// A ROS 2 service type: a request and a response message.
pub trait RosService {
    /// Full ROS type name, `package/srv/Type`.
    const TYPE_NAME: &'static str;
    /// The request.
    type Request: RosMessage;
    /// The response.
    type Response: RosMessage;
}

/// Declares `RosMessage` for a type.
macro_rules! ros_message {
    ($ty:ty, $name:literal, [$(($field:literal, $ros_type:literal)),* $(,)?]) => {
        impl $crate::RosMessage for $ty {
            const TYPE_NAME: &'static str = $name;
            const FIELDS: &'static [$crate::Field] = &[$($crate::field($field, $ros_type)),*];
        }
    };
}
pub(crate) use ros_message;
