//! A `sensor_msgs/JointState` becomes a [`StateFrame`] in the robot model's joint order,
//! matched by name, or is refused with the reason ([`Rejection`]).
//!
//! Rules (ROS convention where there is one): every joint of the model must be present
//! exactly once; extra names (a gripper's, another arm's) are ignored and counted; `position`
//! and `velocity` must be as long as `name`; `effort` may be empty (then the commanded torque
//! is used) or as long as `name`; every value used must be finite. Stamps go through the
//! stream's [`StampClock`]: out-of-order and implausible stamps are refused, a zero stamp
//! means "unstamped" for that message, and the frame's time is on the node's continuous
//! timeline.

use std::time::Instant;

use gpn_app::ros_params::TorqueSource;
use gpn_msgs::sensor_msgs::JointState;

use super::stamp_clock::{StampClock, StampParams, StampRefusal};
pub use gpn_control::control_loop::{StateFrame, TorqueOrigin};

/// Why a joint-state message was refused (the robot keeps its last command; the watchdog
/// acts if no valid message follows).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Rejection {
    /// An array's length differs from `name`'s.
    #[error("joint_states: {field} has {found} entries for {names} names")]
    Length {
        /// Which array.
        field: &'static str,
        /// Names in the message.
        names: usize,
        /// Entries in the array.
        found: usize,
    },
    /// A joint of the model is missing.
    #[error("joint_states: joint {0:?} of the robot model is missing")]
    MissingJoint(String),
    /// A joint appears twice.
    #[error("joint_states: joint {0:?} appears more than once")]
    DuplicateJoint(String),
    /// A value is NaN or infinite.
    #[error("joint_states: {field} of joint {joint:?} is not finite")]
    NonFinite {
        /// Which array.
        field: &'static str,
        /// The joint.
        joint: String,
    },
    /// The stamp's nanoseconds are out of range.
    #[error("joint_states: stamp nanosec {0} is not below 10^9")]
    Stamp(u32),
    /// The stamp is older than the last one, or implausibly far beyond the prediction.
    #[error(transparent)]
    StampClock(#[from] StampRefusal),
    /// No torque is known for the learning sample (learn mode before the other
    /// controller's first command, with no efforts in the message).
    #[error("joint_states: no effort in the message and no commanded torque yet")]
    NoTorque,
}

/// Matches joint-state messages to the model's joints by name.
#[derive(Debug, Clone)]
pub struct JointStateReader {
    joints: Vec<String>,
    source: TorqueSource,
    learn_mode: bool,
    /// Index in the message of each model joint (scratch).
    slot: Vec<Option<usize>>,
    started: Instant,
    clock: StampClock,
    /// Names ignored so far (not in the model).
    pub extra_names_seen: u64,
}

impl JointStateReader {
    /// A reader for the model's `joints` (in model order). In learn mode the torque comes
    /// from `source` or the other controller's command; in control mode from `source` or
    /// the node's own command.
    pub fn new(joints: &[String], source: TorqueSource, learn_mode: bool) -> Self {
        Self {
            joints: joints.to_vec(),
            source,
            learn_mode,
            slot: vec![None; joints.len()],
            started: Instant::now(),
            clock: StampClock::new(StampParams::default()),
            extra_names_seen: 0,
        }
    }

    /// Times the stream's clock re-synchronised (the sender's clock jumped).
    pub fn stamp_resyncs(&self) -> u64 {
        self.clock.resyncs()
    }

    /// Fills `frame` from `msg`. `commanded` is the latest command of the other controller
    /// (learn mode), already in model order.
    pub fn read(
        &mut self,
        msg: &JointState,
        commanded: Option<&[f64]>,
        received: Instant,
        frame: &mut StateFrame,
    ) -> Result<(), Rejection> {
        let n = msg.name.len();
        for (field, len) in [
            ("position", msg.position.len()),
            ("velocity", msg.velocity.len()),
        ] {
            if len != n {
                return Err(Rejection::Length {
                    field,
                    names: n,
                    found: len,
                });
            }
        }
        if !msg.effort.is_empty() && msg.effort.len() != n {
            return Err(Rejection::Length {
                field: "effort",
                names: n,
                found: msg.effort.len(),
            });
        }
        self.slot.fill(None);
        let mut extra = 0;
        for (k, name) in msg.name.iter().enumerate() {
            match self.joints.iter().position(|j| j == name) {
                Some(j) if self.slot[j].is_some() => {
                    return Err(Rejection::DuplicateJoint(name.clone()));
                }
                Some(j) => self.slot[j] = Some(k),
                None => extra += 1,
            }
        }
        if let Some(j) = self.slot.iter().position(Option::is_none) {
            return Err(Rejection::MissingJoint(self.joints[j].clone()));
        }
        let stamp = &msg.header.stamp;
        if stamp.nanosec >= 1_000_000_000 {
            return Err(Rejection::Stamp(stamp.nanosec));
        }
        let use_effort = self.source == TorqueSource::Measured && !msg.effort.is_empty();
        let origin = if use_effort || self.learn_mode {
            TorqueOrigin::Given
        } else {
            TorqueOrigin::OwnCommand
        };
        if origin == TorqueOrigin::Given && !use_effort && commanded.is_none() {
            return Err(Rejection::NoTorque);
        }
        for (j, slot) in self.slot.iter().enumerate() {
            let k = slot.unwrap_or_default();
            let finite = |field: &'static str, x: f64| {
                if x.is_finite() {
                    Ok(x)
                } else {
                    Err(Rejection::NonFinite {
                        field,
                        joint: self.joints[j].clone(),
                    })
                }
            };
            frame.q[j] = finite("position", msg.position[k])?;
            frame.v[j] = finite("velocity", msg.velocity[k])?;
            if use_effort {
                frame.tau[j] = finite("effort", msg.effort[k])?;
            } else if let Some(cmd) = commanded.filter(|_| origin == TorqueOrigin::Given) {
                frame.tau[j] = finite("commanded torque", cmd[j])?;
            }
        }
        // Last: only a message valid in every other respect may move the clock.
        let receipt = received
            .saturating_duration_since(self.started)
            .as_secs_f64();
        let timed = self
            .clock
            .observe((!stamp.is_zero()).then(|| stamp.as_secs_f64()), receipt)?;
        frame.tau_origin = origin;
        frame.received = received;
        frame.t_secs = timed.t_secs;
        frame.stamp_secs = timed.stamp_secs;
        frame.timing = timed.timing;
        self.extra_names_seen += extra;
        Ok(())
    }
}
