//! Counters of what the receive thread did with incoming messages, shared lock-free with the
//! publish thread (diagnostics) through atomics.

use std::sync::atomic::{AtomicU64, Ordering};

use super::joint_state::Rejection;
use super::stamp_clock::StampRefusal;
use super::trajectory::TrajectoryError;

/// Atomic counters (the receive thread writes, the publish thread reads).
#[derive(Debug, Default)]
pub struct IngestCounters {
    /// Joint-state messages received.
    pub joint_states: AtomicU64,
    /// Refused for wrong array lengths.
    pub rejected_length: AtomicU64,
    /// Refused for a missing joint.
    pub rejected_missing_joint: AtomicU64,
    /// Refused for a duplicated joint.
    pub rejected_duplicate_joint: AtomicU64,
    /// Refused for a NaN or infinite value.
    pub rejected_non_finite: AtomicU64,
    /// Refused for a malformed stamp.
    pub rejected_stamp: AtomicU64,
    /// Refused for a stamp older than the last one.
    pub rejected_out_of_order: AtomicU64,
    /// Refused for a stamp far beyond the predicted one.
    pub rejected_implausible_stamp: AtomicU64,
    /// Times the stamp clock re-synchronised (the sender's clock jumped).
    pub stamp_resyncs: AtomicU64,
    /// Refused for lack of a torque (learn mode).
    pub rejected_no_torque: AtomicU64,
    /// Valid states dropped because the control thread was busy (a burst).
    pub dropped_busy: AtomicU64,
    /// Reference trajectories accepted.
    pub trajectories_accepted: AtomicU64,
    /// Reference trajectories refused: no points.
    pub trajectories_refused_empty: AtomicU64,
    /// Refused: a joint of the model missing, or a name twice.
    pub trajectories_refused_names: AtomicU64,
    /// Refused: a point's array of the wrong length.
    pub trajectories_refused_length: AtomicU64,
    /// Refused: a NaN or infinite value.
    pub trajectories_refused_non_finite: AtomicU64,
    /// Refused: `time_from_start` not increasing.
    pub trajectories_refused_time: AtomicU64,
    /// Refused: `header.stamp` not a time (nanosec ≥ 10⁹).
    pub trajectories_refused_stamp: AtomicU64,
    /// Refused: a position outside the joint limits.
    pub trajectories_refused_limits: AtomicU64,
    /// Refused: arrived while the references before it were still being checked (a flood).
    pub trajectories_refused_busy: AtomicU64,
    /// Commands of another controller accepted (learn mode).
    pub commands_accepted: AtomicU64,
    /// Commands of another controller refused: wrong length.
    pub commands_refused_length: AtomicU64,
    /// Commands of another controller refused: a NaN or infinite value.
    pub commands_refused_non_finite: AtomicU64,
}

/// A plain copy of [`IngestCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IngestSnapshot {
    /// See [`IngestCounters`].
    pub joint_states: u64,
    /// See [`IngestCounters`].
    pub rejected_length: u64,
    /// See [`IngestCounters`].
    pub rejected_missing_joint: u64,
    /// See [`IngestCounters`].
    pub rejected_duplicate_joint: u64,
    /// See [`IngestCounters`].
    pub rejected_non_finite: u64,
    /// See [`IngestCounters`].
    pub rejected_stamp: u64,
    /// See [`IngestCounters`].
    pub rejected_out_of_order: u64,
    /// See [`IngestCounters`].
    pub rejected_implausible_stamp: u64,
    /// See [`IngestCounters`].
    pub stamp_resyncs: u64,
    /// See [`IngestCounters`].
    pub rejected_no_torque: u64,
    /// See [`IngestCounters`].
    pub dropped_busy: u64,
    /// See [`IngestCounters`].
    pub trajectories_accepted: u64,
    /// See [`IngestCounters`].
    pub trajectories_refused_empty: u64,
    /// See [`IngestCounters`].
    pub trajectories_refused_names: u64,
    /// See [`IngestCounters`].
    pub trajectories_refused_length: u64,
    /// See [`IngestCounters`].
    pub trajectories_refused_non_finite: u64,
    /// See [`IngestCounters`].
    pub trajectories_refused_time: u64,
    /// See [`IngestCounters`].
    pub trajectories_refused_stamp: u64,
    /// See [`IngestCounters`].
    pub trajectories_refused_limits: u64,
    /// See [`IngestCounters`].
    pub trajectories_refused_busy: u64,
    /// See [`IngestCounters`].
    pub commands_accepted: u64,
    /// See [`IngestCounters`].
    pub commands_refused_length: u64,
    /// See [`IngestCounters`].
    pub commands_refused_non_finite: u64,
}

impl IngestSnapshot {
    /// Joint states refused for any reason.
    pub fn rejected(&self) -> u64 {
        self.joint_state_refusals().iter().map(|(_, n)| n).sum()
    }

    /// Reference trajectories refused for any reason.
    pub fn trajectories_refused(&self) -> u64 {
        self.reference_refusals().iter().map(|(_, n)| n).sum()
    }

    /// Commands of another controller refused for any reason.
    pub fn commands_refused(&self) -> u64 {
        self.command_refusals().iter().map(|(_, n)| n).sum()
    }

    /// Joint states refused, per reason (the keys of `/diagnostics` and the `--json`
    /// summary). A repeated stamp (a stale state) is not refused but answered with the last
    /// command; the loop counts it.
    pub fn joint_state_refusals(&self) -> [(&'static str, u64); 8] {
        [
            ("length", self.rejected_length),
            ("missing_joint", self.rejected_missing_joint),
            ("duplicate_joint", self.rejected_duplicate_joint),
            ("non_finite", self.rejected_non_finite),
            ("stamp", self.rejected_stamp),
            ("out_of_order", self.rejected_out_of_order),
            ("implausible_stamp", self.rejected_implausible_stamp),
            ("no_torque", self.rejected_no_torque),
        ]
    }

    /// Reference trajectories refused, per reason.
    pub fn reference_refusals(&self) -> [(&'static str, u64); 8] {
        [
            ("empty", self.trajectories_refused_empty),
            ("joint_names", self.trajectories_refused_names),
            ("length", self.trajectories_refused_length),
            ("non_finite", self.trajectories_refused_non_finite),
            ("time_not_increasing", self.trajectories_refused_time),
            ("stamp", self.trajectories_refused_stamp),
            ("beyond_limits", self.trajectories_refused_limits),
            ("busy", self.trajectories_refused_busy),
        ]
    }

    /// Commands of another controller (learn mode) refused, per reason.
    pub fn command_refusals(&self) -> [(&'static str, u64); 2] {
        [
            ("length", self.commands_refused_length),
            ("non_finite", self.commands_refused_non_finite),
        ]
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl IngestCounters {
    /// Counts a refused joint state.
    pub fn reject(&self, why: &Rejection) {
        bump(match why {
            Rejection::Length { .. } => &self.rejected_length,
            Rejection::MissingJoint(_) => &self.rejected_missing_joint,
            Rejection::DuplicateJoint(_) => &self.rejected_duplicate_joint,
            Rejection::NonFinite { .. } => &self.rejected_non_finite,
            Rejection::Stamp(_) => &self.rejected_stamp,
            Rejection::StampClock(StampRefusal::OutOfOrder { .. }) => &self.rejected_out_of_order,
            Rejection::StampClock(StampRefusal::Implausible { .. }) => {
                &self.rejected_implausible_stamp
            }
            Rejection::NoTorque => &self.rejected_no_torque,
        });
    }

    /// Counts a refused reference trajectory.
    pub fn refuse_trajectory(&self, why: &TrajectoryError) {
        bump(match why {
            TrajectoryError::Empty => &self.trajectories_refused_empty,
            TrajectoryError::MissingJoint(_)
            | TrajectoryError::UnknownJoint(_)
            | TrajectoryError::DuplicateJoint(_) => &self.trajectories_refused_names,
            TrajectoryError::Length { .. } => &self.trajectories_refused_length,
            TrajectoryError::NonFinite { .. } => &self.trajectories_refused_non_finite,
            TrajectoryError::Time { .. } => &self.trajectories_refused_time,
            TrajectoryError::Stamp { .. } => &self.trajectories_refused_stamp,
            TrajectoryError::Limit { .. } => &self.trajectories_refused_limits,
        });
    }

    /// Adds one to `counter`.
    pub fn count(&self, counter: &AtomicU64) {
        bump(counter);
    }

    /// A consistent-enough copy (each counter read atomically).
    pub fn snapshot(&self) -> IngestSnapshot {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        IngestSnapshot {
            joint_states: r(&self.joint_states),
            rejected_length: r(&self.rejected_length),
            rejected_missing_joint: r(&self.rejected_missing_joint),
            rejected_duplicate_joint: r(&self.rejected_duplicate_joint),
            rejected_non_finite: r(&self.rejected_non_finite),
            rejected_stamp: r(&self.rejected_stamp),
            rejected_out_of_order: r(&self.rejected_out_of_order),
            rejected_implausible_stamp: r(&self.rejected_implausible_stamp),
            stamp_resyncs: r(&self.stamp_resyncs),
            rejected_no_torque: r(&self.rejected_no_torque),
            dropped_busy: r(&self.dropped_busy),
            trajectories_accepted: r(&self.trajectories_accepted),
            trajectories_refused_empty: r(&self.trajectories_refused_empty),
            trajectories_refused_names: r(&self.trajectories_refused_names),
            trajectories_refused_length: r(&self.trajectories_refused_length),
            trajectories_refused_non_finite: r(&self.trajectories_refused_non_finite),
            trajectories_refused_time: r(&self.trajectories_refused_time),
            trajectories_refused_stamp: r(&self.trajectories_refused_stamp),
            trajectories_refused_limits: r(&self.trajectories_refused_limits),
            trajectories_refused_busy: r(&self.trajectories_refused_busy),
            commands_accepted: r(&self.commands_accepted),
            commands_refused_length: r(&self.commands_refused_length),
            commands_refused_non_finite: r(&self.commands_refused_non_finite),
        }
    }
}
