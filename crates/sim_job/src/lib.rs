//! The main job, `gp-node sim`: the learning control loop on the embedded simulator.
//!
//! Runs a scenario twice with the same seed — the nominal computed-torque law, then the
//! learned law — and reports tracking, residual accuracy, bound coverage and tick latency.
//! Boundary: the simulated plant (`gpn_embedded_sim`, the true robot) and the run's seams
//! for the one control loop (`gpn_control::control_loop`), on the application layer
//! (`gpn_app`: parameters, robot, model factory); it never imports the ROS layer
//! (`gpn_ros_io`). No I/O except the optional `--record` (a CSV, or a rosbag2 recording as the
//! node writes one). The node re-exports this crate
//! as `gp_node::simulate`.

#![warn(missing_docs)]

mod bag_record;
mod plant;
mod probing;
mod record;
mod report;
mod runner;
mod scenario;
mod stats;
mod swaps;

pub use bag_record::SimBag;
pub use probing::ProbeRecord;
pub use record::Recorder;
pub use report::{AfterStep, SimReport, SwapSummary, quantile};
pub use runner::{
    LateTick, LawEvent, RunLog, Series, TickSeries, run, run_with_factory, run_with_viz,
};
pub use scenario::Scenario;
pub use stats::{AdoptionWindow, DecimatedSample, RunStats, StepStats, TickValues};
pub use swaps::SwapRecord;

use gpn_control::control::ControlError;
use gpn_control::learn::LearnError;
use gpn_dynamics::RobotError;
use gpn_embedded_sim::SimError;

/// Where `gp-node sim --record` writes the learned run.
pub enum RunRecord {
    /// One CSV row per tick with the simulator's truth (the stream `gp-node eval` reads).
    Csv(Recorder),
    /// A rosbag2 recording with the topics the ROS node records (`gp-node learn` reads it).
    Bag(SimBag),
}

/// Why a simulated run failed.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    /// A parameter is inconsistent.
    #[error("{0}")]
    Param(String),
    /// Parameter file.
    #[error(transparent)]
    Params(#[from] gpn_app::ParamsError),
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
