//! gpn_rcagp: robust, computation-aware Gaussian processes (RCaGP; Sinaga, Martinelli &
//! Kaski; spec `specs/rcagp.md`).
#![warn(missing_docs)]

pub mod actions;
pub mod baselines;
pub mod config;
pub mod elbo;
pub mod error;
pub mod kernel;
pub mod mean;
mod model;
pub mod optim;
mod persist;
mod plugin;
pub mod posterior;
pub mod stream;
pub mod train;
pub mod weights;

pub use config::{Config, ValidConfig};
pub use error::RcagpError;
pub use model::RcaGp;
