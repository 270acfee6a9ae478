//! Errors of the RCaGP numerics (batch posterior, ELBO, training, baselines). The plugin
//! turns them into `gpn_gp_core::model::ModelError` at its boundary.

/// Errors of the numerics.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RcagpError {
    /// A slice or matrix had the wrong size.
    #[error("{what}: expected size {expected}, found {found}")]
    Dimension {
        /// Which argument.
        what: &'static str,
        /// Expected size.
        expected: usize,
        /// Size found.
        found: usize,
    },
    /// A matrix could not be factorised even with the largest jitter.
    #[error("{size}×{size} system matrix not positive definite even with jitter")]
    NotPositiveDefinite {
        /// Its size.
        size: usize,
    },
    /// A value outside its domain.
    #[error("{0}")]
    Invalid(String),
}
