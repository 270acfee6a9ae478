//! Errors of the embedded simulator.

use gpn_dynamics::RobotError;

/// Why the simulator refused a parameter set or a step.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A parameter is out of range; names the key.
    #[error("invalid simulator parameter `{key}`: {reason}")]
    Param {
        /// Parameter key, as in the parameter file.
        key: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A slice had the wrong length.
    #[error("{what}: expected {expected} values (one per joint), found {found}")]
    Dimension {
        /// Which argument.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Length found.
        found: usize,
    },
    /// A commanded torque was NaN or infinite; the step was refused and the state kept.
    #[error("commanded torque of joint {joint} is not finite ({value})")]
    NonFiniteCommand {
        /// Joint index.
        joint: usize,
        /// The offending value.
        value: f64,
    },
    /// The integration produced a non-finite state (the true robot diverged).
    #[error("simulation diverged at t = {t_secs} s (non-finite state)")]
    Diverged {
        /// Simulated time of the failed step.
        t_secs: f64,
    },
    /// Building the true robot model failed.
    #[error(transparent)]
    Robot(#[from] RobotError),
}

impl From<gpn_dynamics::JointValuesError> for SimError {
    fn from(e: gpn_dynamics::JointValuesError) -> Self {
        SimError::Param {
            key: e.key,
            reason: e.reason,
        }
    }
}

/// Result alias of the simulator.
pub type SimResult<T> = Result<T, SimError>;
