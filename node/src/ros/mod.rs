//! The ROS 2 node (`gp-node run`): joint states and a reference in, the compensated effort
//! command, the residual estimate and diagnostics out, over DDS through `ros2-client`.
//!
//! Boundary: `control_loop` is the loop without transport (frames in, frames out) and knows
//! nothing of ROS types beyond the frames; `joint_state` and `trajectory` turn messages
//! (`gpn_msgs`) into frames and references; only `transport` and `run` (feature `ros`) touch
//! `ros2-client`, and no ros2-client type leaves them. Threads: the DDS receive thread
//! (conversion and validation), the control thread (the tick: no allocation, lock or I/O),
//! and the publish thread (messages, diagnostics, latency); bounded channels between them
//! carry preallocated frames.

pub mod control_loop;
pub mod diagnostics;
pub mod ingest;
pub mod joint_state;
pub mod latency;
pub mod ops;
pub mod probe_offer;
pub mod stamp_clock;
pub mod trajectory;
pub mod watchdog;

#[cfg(feature = "ros")]
pub mod run;
#[cfg(feature = "ros")]
mod transport;

pub use crate::app::{Mode, RosParams, ServiceFraming, TopicNames, TorqueSource, WatchdogAction};
pub use control_loop::{
    ControlCommand, ControlLoop, ControlReply, Handled, LoopCounters, OutFrame, OutKind,
};
pub use joint_state::{JointStateReader, Rejection, StateFrame, TorqueOrigin};
pub use latency::LatencyHistogram;
pub use stamp_clock::{StampClock, StampParams, StampRefusal, Stamped, Timing};
pub use trajectory::{Reference, Trajectory, TrajectoryError};
pub use watchdog::{Watchdog, WatchdogVerdict};

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
