//! Learning samples from the joint-state stream: q̈ estimation, features x = [q, q̇, q̈],
//! residual targets y = τ − τ_RBD(x), gating, decimation, a replay buffer, output
//! standardisation and the background hyperparameter fit.
//!
//! Boundary: knows the nominal robot model and the `OnlineModel` contract; nothing of
//! ROS, plugins' internals or the control law.

mod accel;
mod branch_model;
mod branches;
mod change;
mod features;
mod fit_worker;
mod gate;
mod learner;
mod noise_groups;
mod probe;
mod replay;
mod sample_noise;
mod standardize;
mod swap;

pub use accel::{AccelEstimator, AccelParams, AccelUpdate};
pub use branch_model::BranchModel;
pub use branches::{Part, create_model, kinematic_parts, parts_hyper};
pub use change::{
    ChangeAction, ChangeNotice, ChangeParams, ChangeSource, CoverageMonitor, Cusum, describe_change,
};
pub use features::InputLayout;
pub use fit_worker::{FitOutcome, HyperSharing, ModelChange, ModelFactory, ReadyModel, ReplyMeta};
pub use gate::{Gate, GateCounts, GateParams, Rejection};
pub use learner::{
    LearnCounts, LearnError, LearnParams, LearnPhase, Learner, ModelSnapshot, Observation,
};
pub use probe::{
    ProbeOffer, ProbeParams, ProbePlan, ProbeRefusal, ProbeStart, plan_probe, select_waypoints,
    stale_poses,
};
pub use replay::{ReplayBuffer, SampleRef};
pub use sample_noise::{base_noise_var, read_sigma_n};
pub use standardize::Standardizer;
pub use swap::{
    CancelOutcome, Finished, START_MODEL_ID, SwapEvent, SwapOutcome, SwapRefusal, SwapRequest,
    SwapSource,
};
