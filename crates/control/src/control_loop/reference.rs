//! The reference source: what the robot should do at each state. The simulator's task
//! generator (with its probing pauses), a trajectory topic, and — for an observe-only
//! plant — the measured state itself; later an action server.

use super::plant::StateFrame;
use crate::learn::{ChangeNotice, Learner};

/// The desired state at one tick (buffers of the loop, model joint order).
#[derive(Debug)]
pub struct Desired<'a> {
    /// Position, rad.
    pub q: &'a mut [f64],
    /// Velocity, rad/s.
    pub qd: &'a mut [f64],
    /// Acceleration, rad/s².
    pub qdd: &'a mut [f64],
}

/// A source of the reference the loop is given. Real-time: `sample` must not allocate.
pub trait ReferenceSource {
    /// The desired state for the measured state `frame` (its time; a source that holds the
    /// pose takes it from the measurement) into `desired`; `qdd_estimate` is the latest q̈
    /// estimate of the learner (one tick old).
    fn sample(&mut self, frame: &StateFrame, qdd_estimate: &[f64], desired: Desired<'_>);

    /// A change of the dynamics was noticed at loop time `t`: a source may plan around it
    /// (a probe of the region whose data went stale), querying the learner's model.
    fn on_change(&mut self, _t_secs: f64, _notice: &ChangeNotice, _learner: &mut Learner) {}

    /// Whether a trajectory (rather than a held pose or the measurement) is in force.
    fn has_trajectory(&self) -> bool {
        false
    }

    /// The validator refused the last sample: drop what is being followed and hold position
    /// (the default does nothing; the loop then holds the measured pose).
    fn refuse(&mut self) {}

    /// The node was activated: hold the pose of the next state until told otherwise.
    fn restart(&mut self) {}

    /// The node was deactivated: what is being followed ends (it is not sampled until the
    /// next activation). Real-time.
    fn deactivated(&mut self) {}
}

/// The reference of an observe-only plant: the measured state, with q̈ the latest estimate,
/// so that the residual is estimated where the robot is (`learn` mode).
#[derive(Debug, Clone, Copy, Default)]
pub struct MeasuredReference;

impl ReferenceSource for MeasuredReference {
    fn sample(&mut self, frame: &StateFrame, qdd_estimate: &[f64], desired: Desired<'_>) {
        desired.q.copy_from_slice(&frame.q);
        desired.qd.copy_from_slice(&frame.v);
        desired.qdd.copy_from_slice(qdd_estimate);
    }
}

impl<R: ReferenceSource + ?Sized> ReferenceSource for Box<R> {
    fn sample(&mut self, frame: &StateFrame, qdd_estimate: &[f64], desired: Desired<'_>) {
        (**self).sample(frame, qdd_estimate, desired);
    }

    fn on_change(&mut self, t_secs: f64, notice: &ChangeNotice, learner: &mut Learner) {
        (**self).on_change(t_secs, notice, learner);
    }

    fn has_trajectory(&self) -> bool {
        (**self).has_trajectory()
    }

    fn refuse(&mut self) {
        (**self).refuse();
    }

    fn restart(&mut self) {
        (**self).restart();
    }

    fn deactivated(&mut self) {
        (**self).deactivated();
    }
}
