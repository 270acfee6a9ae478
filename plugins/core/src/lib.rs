//! gpn_gp_core: Gaussian-process numerics shared by the model plugins.
//!
//! Kernels, incremental and full Cholesky factorisations, triangular solves, the expert
//! aggregation rules, marginal-likelihood hyperparameter fitting, the prequential metrics,
//! the SkyGP error bound and small seeded random generators. It knows nothing of robots or
//! ROS: models see x ∈ R^d and y ∈ R^p. Statically linked into each plugin.
#![warn(missing_docs)]

pub mod admission;
pub mod aggregate;
#[cfg(target_arch = "x86_64")]
mod avx2;
pub mod bound;
pub mod cholesky;
pub mod drift;
pub mod hyper_config;
pub mod hyperfit;
pub mod kernel;
pub mod metrics;
pub mod rng;
pub mod state_codec;
/// The streaming-model contract (the `gpn_online_model` crate).
pub use gpn_online_model as model;
