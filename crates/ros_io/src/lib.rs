//! The ROS 2 node (`gp-node run`): joint states and a reference in, the compensated effort
//! command, the residual estimate and diagnostics out, over DDS through `ros2-client`.
//!
//! Boundary: the loop is [`gpn_control::control_loop`]; this layer gives it a plant (`plant`:
//! state frames in, commands out through channels), a reference (`TopicReference`), the
//! operations (`ops`) and the publishers as a listener. `joint_state` and `trajectory` turn
//! messages (`gpn_msgs`) into frames and references. Only the files of feature `ros` touch
//! `ros2-client`, and no ros2-client type leaves them: `transport` (the node, topics,
//! services), `run` (wiring and the summary), and one file per thread — `receive` (DDS in:
//! conversion and validation), `publish` (messages, diagnostics, latency; probe offers) and
//! `services` (services and parameter sets). The control thread runs the loop (no
//! allocation, lock or I/O); bounded channels between the threads carry preallocated frames.
//!
//! # Feature flag
//! `ros` (on by default here; gp_node's own `ros` feature turns it on): the DDS files above
//! and `ros2-client`. Without it, the plant, reference, operations and conversions remain
//! (they are plain Rust, tested without DDS). The layer sits on the application layer
//! (`gpn_app`) and never imports the sim job (`gpn_sim_job`). The node re-exports this crate
//! as `gp_node::ros`.

#![warn(missing_docs)]

pub mod diagnostics;
pub mod ingest;
pub mod joint_state;
pub mod latency;
pub mod ops;
pub mod plant;
pub mod probe_offer;
pub mod stamp_clock;
pub mod trajectory;

#[cfg(feature = "ros")]
mod publish;
#[cfg(feature = "ros")]
mod receive;
#[cfg(feature = "ros")]
pub mod run;
#[cfg(feature = "ros")]
mod services;
#[cfg(feature = "ros")]
mod transport;

pub use gpn_app::{Mode, RosParams, ServiceFraming, TopicNames, TorqueSource, WatchdogAction};
pub use joint_state::{JointStateReader, Rejection, StateFrame, TorqueOrigin};
pub use latency::LatencyHistogram;
pub use plant::{ChannelOperations, PublishQueue, RosPlant};
pub use stamp_clock::{StampClock, StampParams, StampRefusal, Stamped, Timing};
pub use trajectory::{Reference, TopicReference, Trajectory, TrajectoryError};

/// Resolves a topic name of the parameters (`/abs`, `rel`, `~/private`) for a node named
/// `node_name` in `namespace`: `~/x` becomes `<namespace>/<node_name>/x`; the others are
/// returned unchanged (relative names are resolved against the namespace by the transport).
pub fn expand_private_name(name: &str, namespace: &str, node_name: &str) -> String {
    match name.strip_prefix("~/") {
        Some(rest) => {
            let ns = namespace.trim_end_matches('/');
            format!("{ns}/{node_name}/{rest}")
        }
        None => name.to_owned(),
    }
}
