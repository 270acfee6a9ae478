//! The main job, `gp-node sim`: the learning control loop on the embedded simulator.
//!
//! Runs a scenario twice with the same seed — the nominal computed-torque law, then the
//! learned law — and reports tracking, residual accuracy, bound coverage and tick latency.
//! Boundary: glue between `sim` (the true robot), `control` (the tick) and `learn`; no I/O
//! except the optional `--record` CSV.

mod params_file;
mod probing;
mod record;
mod reference;
mod report;
mod runner;
mod scenario;
mod swaps;

pub use params_file::{ModelParams, NodeParams, ParamsError, RobotParams, RunParams};
pub use probing::ProbeRecord;
pub use record::Recorder;
pub use reference::ReferenceParams;
pub use report::{AfterStep, SimReport, SwapSummary, quantile};
pub use runner::{RunLog, model_factory, run, run_with_factory, run_with_viz};
pub use scenario::Scenario;
pub use swaps::{SwapRecord, SwapTarget};

use crate::control::ControlError;
use crate::learn::LearnError;
use crate::robot::RobotError;
use crate::sim::SimError;

/// The default parameter file (`launch/sim_default.yaml`), built in so that `gp-node sim`
/// runs from any directory.
pub const DEFAULT_PARAMS_YAML: &str = include_str!("../../../launch/sim_default.yaml");

/// The default robot (`urdf/panda.urdf`), built in for the same reason.
pub const DEFAULT_URDF: &str = include_str!("../../../urdf/panda.urdf");

/// Why a simulated run failed.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    /// A parameter is inconsistent.
    #[error("{0}")]
    Param(String),
    /// Parameter file.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// The robot model.
    #[error(transparent)]
    Robot(#[from] RobotError),
    /// The simulator.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// The control law.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// The learner.
    #[error(transparent)]
    Learn(#[from] LearnError),
    /// The model never became active.
    #[error("the model never became active: {0}")]
    Model(String),
    /// Writing the recording.
    #[error("cannot write the recording: {error}: {}", path.display())]
    Record {
        /// OS error.
        error: std::io::Error,
        /// The file.
        path: std::path::PathBuf,
    },
}

/// Loads the robot of a parameter set (`gp-node sim` and `gp-node run`): the built-in Panda
/// when `robot.urdf` is empty. Every movable joint gets an effort limit, from
/// `control.effort_limits_nm` or else from the URDF; a movable joint without one is an error
/// naming it ([`crate::robot::Model::from_urdf_file_with_effort_limits`]).
pub fn load_robot(params: &NodeParams) -> Result<crate::robot::Model, SimulateError> {
    use crate::robot::Model;
    let effort_limits_nm = params.control.given_effort_limits_nm();
    if params.robot.urdf.as_os_str().is_empty() {
        Ok(Model::from_urdf_str_with_effort_limits(
            DEFAULT_URDF,
            "built-in urdf/panda.urdf",
            effort_limits_nm,
        )?)
    } else {
        Ok(Model::from_urdf_file_with_effort_limits(
            &params.robot.urdf,
            effort_limits_nm,
        )?)
    }
}
