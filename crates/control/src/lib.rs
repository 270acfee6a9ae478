//! The learning control of gp-learning-node: the learner ([`learn`]: q̈ estimation, gating,
//! the online GP model of the residual τ − τ_RBD and its background fits and swaps, change
//! detection), the control tick ([`control`]: the computed-torque law with the learned
//! residual, its error bounds and the supervisor) and the one control loop over a plant
//! ([`control_loop`]).
//!
//! Boundary: knows the robot's dynamics (`gpn_dynamics`) and the GP numerics and model
//! contract (`gpn_gp_core`); nothing of ROS, rerun, plugin loading or the simulator. A model
//! comes in through a factory closure ([`learn::ModelFactory`]).

#![warn(missing_docs)]

pub mod control;
pub mod control_loop;
pub mod latency;
pub mod learn;

/// The robot's dynamics, under the name the modules use.
use gpn_dynamics as robot;
