//! The streaming-model contract every learner in this workspace implements.
//!
//! It mirrors the plugin ABI (create / update / predict / stats) in safe Rust, so the
//! evaluator, the control loop and the tests drive in-process crates and plugins the same way.
//! A crate of its own so that the plugin ABI needs no numerics (`gpn_gp_core` re-exports it
//! as `gpn_gp_core::model`).

#![warn(missing_docs)]

thread_local! {
    static CONTROL_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling thread as a control loop's: a model whose calls can take unbounded time
/// (a plugin in another process) gives up on a call from this thread at its deadline, and
/// waits as long as it takes on any other (a learner's worker warming a new model).
pub fn mark_control_thread() {
    CONTROL_THREAD.with(|c| c.set(true));
}

/// Whether [`mark_control_thread`] was called on this thread.
pub fn on_control_thread() -> bool {
    CONTROL_THREAD.with(|c| c.get())
}

/// Errors a streaming model reports to its caller.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// A slice had the wrong length.
    #[error("{what}: expected length {expected}, found {found}")]
    Dimension {
        /// Which argument.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Length found.
        found: usize,
    },
    /// An input or target was NaN or infinite.
    #[error("{what} contains a non-finite value at index {index}")]
    NonFinite {
        /// Which argument.
        what: &'static str,
        /// First offending index.
        index: usize,
    },
    /// The configuration was rejected.
    #[error("invalid config: {0}")]
    Config(String),
    /// Any other failure, with a message.
    #[error("{0}")]
    Other(String),
}

/// `Err(Dimension)` naming `what` unless `s` has `expected` entries.
pub fn check_len(what: &'static str, s: &[f64], expected: usize) -> Result<(), ModelError> {
    if s.len() == expected {
        Ok(())
    } else {
        Err(ModelError::Dimension {
            what,
            expected,
            found: s.len(),
        })
    }
}

/// `Err(NonFinite)` naming `what` and the first NaN or infinite entry of `s`, if any.
pub fn check_finite(what: &'static str, s: &[f64]) -> Result<(), ModelError> {
    match s.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(ModelError::NonFinite { what, index }),
        None => Ok(()),
    }
}

/// The checks every model makes of a sample before learning it: `x` has `d` entries, `y`
/// and `noise_var` have `p`, every entry is finite and no noise variance is negative. Made
/// before anything changes, so that a refused sample leaves the model as it was.
pub fn check_sample(
    x: &[f64],
    y: &[f64],
    noise_var: &[f64],
    d: usize,
    p: usize,
) -> Result<(), ModelError> {
    check_len("x", x, d)?;
    check_len("y", y, p)?;
    check_len("noise_var", noise_var, p)?;
    check_finite("x", x)?;
    check_finite("y", y)?;
    check_finite("noise_var", noise_var)?;
    match noise_var.iter().position(|&v| v < 0.0) {
        Some(i) => Err(ModelError::Other(format!(
            "noise_var[{i}] = {} is negative",
            noise_var[i]
        ))),
        None => Ok(()),
    }
}

/// Counters a model reports (for eval tables, diagnostics and the ABI's `stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModelStats {
    /// Samples passed to `update` so far.
    pub samples_seen: u64,
    /// Samples currently stored (after any eviction).
    pub samples_stored: u64,
    /// Local experts (or components) in use; 1 for a single GP.
    pub experts: u64,
    /// Bytes of model state held (buffers, not the code).
    pub memory_bytes: u64,
}

/// A multi-output streaming regression model: predict at a point, then learn from it.
///
/// Real-time contract: in steady state neither `predict` nor `update` allocates, locks or
/// does I/O; heavy work belongs on the model's own background thread.
pub trait OnlineModel: Send {
    /// Input dimension d.
    fn input_dim(&self) -> usize;
    /// Output dimension p.
    fn output_dim(&self) -> usize;
    /// Posterior mean and **latent** variance (noise not added) of every output at `x`.
    /// `x.len() == d`, `mean.len() == var.len() == p`.
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError>;
    /// Learn one sample: input `x` (d), targets `y` (p), its time stamp in seconds and the
    /// noise variance of each output (p; a model may ignore it and use its own σ_n²).
    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError>;
    /// Counters for tables and diagnostics.
    fn stats(&self) -> ModelStats;

    /// The learned state as opaque bytes (a plugin's `save`), for a model file. Not
    /// real-time (allocates). Models that cannot save keep this default, an error.
    fn state_bytes(&self) -> Result<Vec<u8>, ModelError> {
        Err(ModelError::Other(
            "this model cannot save its learned state".into(),
        ))
    }

    /// Replaces the learned state with bytes from [`OnlineModel::state_bytes`] of a model of
    /// the same kind, configuration and dimensions. Not real-time.
    fn restore_state_bytes(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        let _ = bytes;
        Err(ModelError::Other(
            "this model cannot load a learned state".into(),
        ))
    }

    /// Name and version of the plugin the model comes from (None for in-process models).
    fn plugin_identity(&self) -> Option<(String, String)> {
        None
    }

    /// What `predict` answers from now: sets `from_prior[o]` (p entries) when output o
    /// answers from the prior (or a data-free fallback) alone, nothing learned in use; and
    /// returns how many samples given to `update` a background thread has not taken in yet.
    /// `None` (the default): the model does not say. Real-time: no allocation, lock or I/O.
    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        let _ = from_prior;
        None
    }

    /// Blocks up to `timeout` until the background has taken in every sample given so far
    /// (then [`Readiness::samples_behind`] is 0 and `predict` reflects them), adopting what
    /// it published. Returns at once for a model without background work. Not real-time:
    /// for evaluation, tests and tools, never the control thread.
    fn wait_ready(&mut self, timeout: std::time::Duration) -> Result<(), ModelError> {
        let _ = timeout;
        Ok(())
    }
}

/// How far a model's background work is behind the samples it was given; see
/// [`OnlineModel::readiness`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Readiness {
    /// Samples given to `update` that the model's background thread has not taken in yet
    /// (queued, or waiting for a phase that runs in the background). 0 for a model that
    /// learns on the calling thread.
    pub samples_behind: u64,
}
