//! The tolerances of a `FollowJointTrajectory` goal, checked on the control thread at every
//! tick as ros2_control's joint trajectory controller checks them in its update:
//!
//! - before the trajectory's last point, the *path* tolerances: |desired − actual| of each
//!   joint's position, velocity and acceleration within its tolerance (0: not checked);
//!   a violation ends the goal with `PATH_TOLERANCE_VIOLATED` and the arm holds where it is;
//! - from the last point's time on, the *goal* tolerances (position and acceleration as
//!   given; velocity as given, else the stopped-velocity tolerance): when every joint is
//!   within them the goal succeeds (the last point stays held); when it is not within them
//!   `goal_time` after the last point (`goal_time` > 0) the goal ends with
//!   `GOAL_TOLERANCE_VIOLATED` and the arm holds where it is; with `goal_time` = 0 it waits.
//!
//! The actual acceleration is not measured: acceleration tolerances are accepted and not
//! checked (documented in the README). The outcome goes to the spin thread as a small
//! `Copy` event over a bounded channel; the desired and actual states for the action's
//! feedback go into a preallocated slot taken with `try_lock` (a busy slot skips a tick).
//! Nothing here allocates on the control thread.

use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

/// One joint's tolerance (0: not checked).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tolerance {
    /// rad or m.
    pub position: f64,
    /// rad/s or m/s.
    pub velocity: f64,
    /// rad/s² or m/s² (not checked: the acceleration is not measured).
    pub acceleration: f64,
}

impl Tolerance {
    /// This tolerance with `given` applied as `control_msgs/JointTolerance` says: 0 keeps the
    /// value, −1 erases it (not checked), a positive value replaces it. Any other negative
    /// value is an error naming the field.
    pub fn overridden(self, given: Tolerance) -> Result<Tolerance, String> {
        let one = |current: f64, value: f64, field: &str| -> Result<f64, String> {
            if value == 0.0 {
                Ok(current)
            } else if value == -1.0 {
                Ok(0.0)
            } else if value > 0.0 && value.is_finite() {
                Ok(value)
            } else {
                Err(format!(
                    "{field} tolerance {value}: must be > 0, 0 (default) or -1 (unchecked)"
                ))
            }
        };
        Ok(Tolerance {
            position: one(self.position, given.position, "position")?,
            velocity: one(self.velocity, given.velocity, "velocity")?,
            acceleration: one(self.acceleration, given.acceleration, "acceleration")?,
        })
    }
}

/// The tolerances of one goal, per model joint.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalTolerances {
    /// While the trajectory runs.
    pub path: Vec<Tolerance>,
    /// At and after its end.
    pub goal: Vec<Tolerance>,
    /// How long after the end the goal tolerances may take to be met, s (0: no limit).
    pub goal_time_secs: f64,
}

/// Which quantity broke a tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Position.
    Position,
    /// Velocity.
    Velocity,
}

impl Quantity {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Position => "position",
            Quantity::Velocity => "velocity",
        }
    }
}

/// A joint beyond its tolerance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Violation {
    /// Model joint index.
    pub joint: usize,
    /// What.
    pub quantity: Quantity,
    /// desired − actual (for the goal's velocity: the actual velocity).
    pub error: f64,
    /// The tolerance.
    pub tolerance: f64,
}

/// How a goal ended, as seen by the control thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GoalOutcome {
    /// Within the goal tolerances after the last point.
    Succeeded,
    /// A path tolerance was broken.
    PathViolated(Violation),
    /// The goal tolerances were not met `goal_time` after the last point.
    GoalViolated(Violation),
    /// The loop's reference validator refused the sampled reference (the arm holds).
    Refused,
    /// Another trajectory (a newer goal, or one on the reference topic) replaced it.
    Replaced,
    /// The node was deactivated or re-activated while the goal ran (the arm holds).
    Stopped,
}

/// An outcome of goal `id` at loop time `t_secs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GoalEvent {
    /// The goal.
    pub id: u64,
    /// How it ended.
    pub outcome: GoalOutcome,
    /// Loop time, s.
    pub t_secs: f64,
}

/// The latest desired and actual state of the goal being followed.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalFeedback {
    /// The goal (0: none yet).
    pub id: u64,
    /// Loop time, s.
    pub t_secs: f64,
    /// Desired position, velocity, acceleration.
    pub desired: [Vec<f64>; 3],
    /// Measured position, velocity.
    pub actual: [Vec<f64>; 2],
}

impl GoalFeedback {
    /// An empty slot for `nv` joints.
    pub fn new(nv: usize) -> Self {
        Self {
            id: 0,
            t_secs: 0.0,
            desired: [vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]],
            actual: [vec![0.0; nv], vec![0.0; nv]],
        }
    }
}

/// The control thread's ends: outcomes out, the feedback slot.
#[derive(Debug, Clone)]
pub struct GoalReports {
    /// Outcomes (bounded; a full channel drops the event — the spin thread drains it often).
    pub events: SyncSender<GoalEvent>,
    /// The feedback slot.
    pub feedback: Arc<Mutex<GoalFeedback>>,
}

/// The desired and measured state of one tick.
#[derive(Debug, Clone, Copy)]
pub struct TickState<'a> {
    /// Loop time, s.
    pub t_secs: f64,
    /// Time since the trajectory's start, s.
    pub elapsed_secs: f64,
    /// Time of its last point, s.
    pub duration_secs: f64,
    /// Desired position, velocity, acceleration.
    pub desired: (&'a [f64], &'a [f64], &'a [f64]),
    /// Measured position, velocity.
    pub actual: (&'a [f64], &'a [f64]),
}

/// Whether `error` breaks a checked `tolerance` (a NaN error breaks it).
fn beyond(error: f64, tolerance: f64) -> bool {
    tolerance > 0.0 && (error.is_nan() || error.abs() > tolerance)
}

/// The first joint beyond `tolerances` (position, then velocity).
fn first_violation(tolerances: &[Tolerance], state: &TickState<'_>) -> Option<Violation> {
    let (qd, vd, _) = state.desired;
    let (q, v) = state.actual;
    for (j, tol) in tolerances.iter().enumerate() {
        let e_q = qd[j] - q[j];
        if beyond(e_q, tol.position) {
            return Some(Violation {
                joint: j,
                quantity: Quantity::Position,
                error: e_q,
                tolerance: tol.position,
            });
        }
        let e_v = vd[j] - v[j];
        if beyond(e_v, tol.velocity) {
            return Some(Violation {
                joint: j,
                quantity: Quantity::Velocity,
                error: e_v,
                tolerance: tol.velocity,
            });
        }
    }
    None
}

/// The outcome of this tick for a goal with `tolerances`, if it ended. Real-time.
pub fn check(tolerances: &GoalTolerances, state: &TickState<'_>) -> Option<GoalOutcome> {
    if state.elapsed_secs < state.duration_secs {
        return first_violation(&tolerances.path, state).map(GoalOutcome::PathViolated);
    }
    match first_violation(&tolerances.goal, state) {
        None => Some(GoalOutcome::Succeeded),
        Some(v) => {
            let late = state.elapsed_secs - state.duration_secs;
            (tolerances.goal_time_secs > 0.0 && late > tolerances.goal_time_secs)
                .then_some(GoalOutcome::GoalViolated(v))
        }
    }
}

impl GoalReports {
    /// Reports `outcome` of goal `id` (dropped if the channel is full). Real-time.
    pub fn report(&self, id: u64, outcome: GoalOutcome, t_secs: f64) {
        let _ = self.events.try_send(GoalEvent {
            id,
            outcome,
            t_secs,
        });
    }

    /// Writes this tick's state into the feedback slot unless the reader holds it. Real-time.
    pub fn write_feedback(&self, id: u64, state: &TickState<'_>) {
        if let Ok(mut slot) = self.feedback.try_lock() {
            slot.id = id;
            slot.t_secs = state.t_secs;
            slot.desired[0].copy_from_slice(state.desired.0);
            slot.desired[1].copy_from_slice(state.desired.1);
            slot.desired[2].copy_from_slice(state.desired.2);
            slot.actual[0].copy_from_slice(state.actual.0);
            slot.actual[1].copy_from_slice(state.actual.1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tol(position: f64, velocity: f64) -> Tolerance {
        Tolerance {
            position,
            velocity,
            acceleration: 0.0,
        }
    }

    fn state<'a>(elapsed: f64, qd: &'a [f64], q: &'a [f64], v: &'a [f64]) -> TickState<'a> {
        TickState {
            t_secs: elapsed,
            elapsed_secs: elapsed,
            duration_secs: 1.0,
            desired: (qd, &[0.0, 0.0], &[0.0, 0.0]),
            actual: (q, v),
        }
    }

    fn tolerances(goal_time: f64) -> GoalTolerances {
        GoalTolerances {
            path: vec![tol(0.1, 0.0), tol(0.0, 0.0)],
            goal: vec![tol(0.01, 0.01), tol(0.01, 0.01)],
            goal_time_secs: goal_time,
        }
    }

    #[test]
    fn path_tolerance_is_checked_before_the_end_only() {
        let t = tolerances(0.0);
        let (qd, v) = ([0.0, 0.0], [0.0, 0.0]);
        // Joint 0 off by 0.05 (within 0.1), joint 1 off by 5 (unchecked on the path).
        assert_eq!(check(&t, &state(0.5, &qd, &[0.05, 5.0], &v)), None);
        let out = check(&t, &state(0.5, &qd, &[-0.2, 0.0], &v));
        match out {
            Some(GoalOutcome::PathViolated(v)) => {
                assert_eq!((v.joint, v.quantity), (0, Quantity::Position));
                assert!((v.error - 0.2).abs() < 1e-12 && v.tolerance == 0.1);
            }
            other => panic!("expected a path violation, got {other:?}"),
        }
    }

    #[test]
    fn goal_succeeds_within_tolerance_and_fails_only_after_goal_time() {
        let (qd, still) = ([0.0, 0.0], [0.0, 0.0]);
        let within = [0.005, -0.005];
        assert_eq!(
            check(&tolerances(0.5), &state(1.0, &qd, &within, &still)),
            Some(GoalOutcome::Succeeded)
        );
        // Moving faster than the stopped-velocity tolerance: not yet done.
        let moving = [0.0, 0.02];
        assert_eq!(
            check(&tolerances(0.5), &state(1.2, &qd, &within, &moving)),
            None
        );
        match check(&tolerances(0.5), &state(1.6, &qd, &within, &moving)) {
            Some(GoalOutcome::GoalViolated(v)) => {
                assert_eq!((v.joint, v.quantity), (1, Quantity::Velocity))
            }
            other => panic!("expected a goal violation, got {other:?}"),
        }
        // goal_time 0: waits for ever.
        assert_eq!(
            check(&tolerances(0.0), &state(100.0, &qd, &within, &moving)),
            None
        );
    }

    #[test]
    fn nan_measurement_breaks_a_checked_tolerance() {
        let out = check(
            &tolerances(0.0),
            &state(0.5, &[0.0, 0.0], &[f64::NAN, 0.0], &[0.0, 0.0]),
        );
        assert!(matches!(out, Some(GoalOutcome::PathViolated(v)) if v.joint == 0));
    }

    #[test]
    fn joint_tolerance_message_semantics() {
        let base = Tolerance {
            position: 0.1,
            velocity: 0.2,
            acceleration: 0.3,
        };
        let given = Tolerance {
            position: 0.0,
            velocity: -1.0,
            acceleration: 0.5,
        };
        assert_eq!(
            base.overridden(given).unwrap(),
            Tolerance {
                position: 0.1,
                velocity: 0.0,
                acceleration: 0.5
            }
        );
        let bad = Tolerance {
            position: -0.5,
            ..Tolerance::default()
        };
        assert!(base.overridden(bad).unwrap_err().contains("position"));
    }

    #[test]
    fn feedback_slot_is_skipped_when_busy() {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let reports = GoalReports {
            events: tx,
            feedback: Arc::new(Mutex::new(GoalFeedback::new(2))),
        };
        let (qd, q, v) = ([1.0, 2.0], [0.5, 0.5], [0.0, 0.0]);
        reports.write_feedback(7, &state(0.2, &qd, &q, &v));
        assert_eq!(reports.feedback.lock().unwrap().desired[0], vec![1.0, 2.0]);
        {
            let _held = reports.feedback.lock().unwrap();
            reports.write_feedback(8, &state(0.3, &qd, &q, &v));
        }
        assert_eq!(reports.feedback.lock().unwrap().id, 7);
        reports.report(7, GoalOutcome::Succeeded, 1.0);
        reports.report(7, GoalOutcome::Succeeded, 1.1); // full: dropped, no block
        assert_eq!(rx.try_recv().unwrap().t_secs, 1.0);
        assert!(rx.try_recv().is_err());
    }
}
