//! The ROS 2 node (`gp-node run`): joint states and a reference in, the compensated effort
//! command, the residual estimate and diagnostics out, on ROS 2 through rcl (r2r).
//!
//! Boundary: the loop is [`gpn_control::control_loop`]; this layer gives it a plant (`plant`:
//! state frames in, commands out through channels), a reference (`TopicReference`), the
//! operations (`ops`) and the publishers as a listener. `joint_state` and `trajectory` turn
//! messages (`gpn_msgs`) into frames and references. Only the files of feature `ros` touch
//! r2r, and no r2r type leaves them: `transport` (the node, topics, services), `rcl_msgs`
//! (the rosidl types at the edge), `parameters` (overrides and parameter services), `run`
//! (wiring and the summary), and one file per thread — `receive` (on the spin thread:
//! conversion and validation), `publish` (messages, diagnostics, latency; probe offers) and
//! `services` (the operations thread: services and parameter sets). The control thread runs
//! the loop (no allocation, lock or I/O); bounded channels between the threads carry
//! preallocated frames.
//!
//! # Feature flag
//! `ros` (off by default; gp_node's own `ros` feature turns it on): the files above and r2r,
//! which needs ROS 2 Jazzy to build (a sourced installation, or the PyPI environment of
//! `ci/ros2_jazzy/setup.sh`). Without it, the plant, reference, operations and conversions
//! remain (they are plain Rust, tested without ROS). The layer sits on the application layer
//! (`gpn_app`) and never imports the sim job (`gpn_sim_job`). The node re-exports this crate
//! as `gp_node::ros`.

#![warn(missing_docs)]

pub mod diagnostics;
pub mod goal_monitor;
pub mod ingest;
pub mod joint_state;
pub mod lifecycle;
pub mod op_refusals;
pub mod ops;
pub mod plant;
pub mod probe_offer;
pub mod stamp_clock;
pub mod trajectory;

#[cfg(feature = "ros")]
mod follow_joint_trajectory;
#[cfg(feature = "ros")]
mod lifecycle_services;
#[cfg(feature = "ros")]
mod node_log;
#[cfg(feature = "ros")]
mod parameters;
#[cfg(feature = "ros")]
mod publish;
#[cfg(feature = "ros")]
mod rcl_msgs;
#[cfg(feature = "ros")]
mod receive;
#[cfg(feature = "ros")]
mod rerun_log;
#[cfg(feature = "ros")]
mod robot_description;
#[cfg(feature = "ros")]
pub mod run;
#[cfg(feature = "ros")]
mod services;
#[cfg(feature = "ros")]
mod transport;

pub use gpn_app::{Mode, RosParams, TopicNames, TorqueSource, WatchdogAction};
pub use gpn_control::latency::LatencyHistogram;
pub use joint_state::{JointStateReader, Rejection, StateFrame, TorqueOrigin};
pub use plant::{ChannelOperations, PublishQueue, RosPlant};
pub use stamp_clock::{StampClock, StampParams, StampRefusal, Stamped, Timing};
pub use trajectory::{Reference, ReferenceInput, TopicReference, Trajectory, TrajectoryError};
