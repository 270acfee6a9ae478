//! gpn_rcagp: robust, computation-aware Gaussian processes (RCaGP; Sinaga, Martinelli &
//! Kaski; spec `specs/rcagp.md`).
#![warn(missing_docs)]

pub mod actions;
pub mod baselines;
pub mod elbo;
pub mod error;
pub mod kernel;
pub mod mean;
pub mod optim;
pub mod posterior;
pub mod train;
pub mod weights;

pub use error::RcagpError;
