//! gpn_vbks: the VBKS ensemble — variational Bayesian kernel selection over a space of
//! composite kernels (Teng, Chen, Zhang & Low, "Scalable Variational Bayesian Kernel
//! Selection for Sparse Gaussian Process Regression"; spec `specs/vbks.md`), run as an
//! online mixture of sparse GPs (spec §7).
//!
//! Boundary: sees x ∈ R^d and y ∈ R^p only — nothing of robots, ROS or the plugin ABI
//! (`plugin.rs` is the glue). Linear algebra is our own small allocation-free routines
//! (`linalg`); the packed dot product comes from `gpn_gp_core`. No feature flags.
//!
//! TODO-DOC: configuration table (filled below in this file's final version).
#![warn(missing_docs)]
// Dense linear algebra indexes several arrays with one row/column index; iterator chains
// over zipped rows would hide the formulas the comments cite.
#![allow(clippy::needless_range_loop)]

pub mod adam;
pub mod belief;
pub mod component;
pub mod config;
mod describe;
pub mod ensemble;
pub mod expr;
pub mod fast;
pub mod grammar;
pub mod init;
pub mod kernel;
pub mod kmeans;
pub mod linalg;
pub mod local;
pub mod model;
pub mod offline;
mod persist;
mod plugin;
pub mod rng;
pub mod scaler;
pub mod stats;
mod worker;

pub use config::{Config, ValidConfig};
pub use model::{Phase, Vbks};
