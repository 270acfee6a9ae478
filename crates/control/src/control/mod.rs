//! The control tick: the learning computed-torque law, its error bounds, torque limits and
//! the safety supervisor (STYLE.md "Control tick").
//!
//! Boundary: a plain function of (measured state, reference, learner) → command. Knows the
//! nominal robot model and the learner; nothing of transport (ROS, the simulator).
//!
//! The supervisor judges the model's work against its budget on a [`BudgetClock`] chosen by
//! whoever builds the [`Tick`]: the wall clock on a robot (`gp-node run`), simulated time in
//! `gp-node sim`, where the simulated robot waits for the model so that no decision depends
//! on the machine's load. The tick's wall time is measured and reported either way.
//!
//! ```no_run
//! # use gpn_control::{control::*, learn::*};
//! # use gpn_dynamics::Model;
//! # fn demo(robot: &Model, learner: &mut Learner) -> Result<(), ControlError> {
//! let mut tick = Tick::new(robot, &ControlParams::default(), BudgetClock::Wall)?;
//! let mut out = TickOutput::new(robot.nv());
//! let (q, v, tau) = (vec![0.0; 7], vec![0.0; 7], vec![0.0; 7]);
//! let input = TickInput { t_secs: 0.0, q: &q, v: &v, tau: &tau, q_d: &q, qd_d: &v, qdd_d: &v };
//! let status = tick.step(&input, learner, &mut out);
//! println!("u = {:?} ({:?})", out.u, status.result);
//! # Ok(()) }
//! ```

mod bounds;
mod budget_clock;
mod law;
pub mod lyapunov;
mod params;
mod supervisor;
mod tick;

pub use bounds::TheoremBound;
pub use budget_clock::BudgetClock;
pub use law::{ControlLaw, Gains};
pub use lyapunov::JointLyapunov;
pub use params::{
    BoundParams, ControlParams, FallbackParams, PlausibilityParams, SupervisorParams,
    TorqueConvention,
};
pub use supervisor::{Fallback, Supervisor, SupervisorCounts};
pub use tick::{Tick, TickInput, TickOutput, TickResult, TickStatus};

use crate::robot::{JointValuesError, RobotError};

/// Why the control law could not be set up or evaluated.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// A parameter is out of range.
    #[error("invalid control parameter `{key}`: {reason}")]
    Param {
        /// The key.
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The inertia matrix was not positive definite (bad state).
    #[error("the inertia matrix is not positive definite at this state")]
    SingularInertia,
    /// A dynamics call failed.
    #[error(transparent)]
    Robot(#[from] RobotError),
}

impl From<JointValuesError> for ControlError {
    fn from(e: JointValuesError) -> Self {
        ControlError::Param {
            key: e.key,
            reason: e.reason,
        }
    }
}
