//! Covariance kernels. (Being written: implementations to follow.)

/// A stationary covariance function with hyperparameters handled in log space.
///
/// Parameter vector order (log space): `[ln σ_f, ln ℓ_1, …, ln ℓ_d]`.
pub trait Kernel {
    /// Input dimension d.
    fn dim(&self) -> usize;
    /// κ(a, b).
    fn value(&self, a: &[f64], b: &[f64]) -> f64;
    /// κ(x, x) = σ_f² for the stationary kernels here.
    fn diag(&self) -> f64;
    /// Number of hyperparameters (1 + d).
    fn n_params(&self) -> usize;
    /// Current hyperparameters, log space, into `out` (len `n_params`).
    fn log_params(&self, out: &mut [f64]);
    /// Replace the hyperparameters from a log-space vector (len `n_params`).
    fn set_log_params(&mut self, p: &[f64]);
    /// ∂κ(a, b)/∂(log params) into `out` (len `n_params`).
    fn gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]);
}
