//! Changing the learner's model while the loop runs: the request (a swap to another plugin
//! or configuration, a model loaded from a file), why one can be refused, and what the
//! learner reports afterwards. The work happens on the fit worker; the control thread only
//! moves these values through bounded channels (no allocation, no waiting).

use std::time::Instant;

use super::fit_worker::ModelFactory;
pub use super::fit_worker::{ModelChange, ReadyModel};

/// The id of the change to the model a run starts from (`model.file`,
/// `Learner::start_from`), distinct from the operations' ids.
pub const START_MODEL_ID: u64 = u64::MAX;

/// Where the new model comes from.
pub enum SwapSource {
    /// Create it with this factory and the current hyperparameters, and warm it on the
    /// replay buffer (before the first fit: use the factory for it).
    Warm(ModelFactory),
    /// A model built off the control thread (a loaded file), adopted as it is.
    Ready(Box<ReadyModel>),
}

/// A request to change the model, with the caller's id (reported back in [`SwapEvent`]).
pub struct SwapRequest {
    /// Caller's id (non-zero).
    pub id: u64,
    /// The new model.
    pub source: SwapSource,
}

/// Why a request was refused at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapRefusal {
    /// A fit, refit or another change is still in progress; try again later.
    Busy,
    /// The hyperparameter fit is running; the model can change once it is done.
    Fitting,
}

impl SwapRefusal {
    /// Human-readable reason.
    pub fn message(self) -> &'static str {
        match self {
            SwapRefusal::Busy => "busy: a fit, refit or model change is in progress; try again",
            SwapRefusal::Fitting => {
                "the first hyperparameter fit is running; the model can change when it is done"
            }
        }
    }
}

/// What became of a request.
#[derive(Debug)]
pub enum SwapOutcome {
    /// The new model runs since the tick at `adopted_at`; it was ready at `ready_at`.
    Adopted {
        /// When the worker finished building it.
        ready_at: Instant,
        /// When the tick adopted it.
        adopted_at: Instant,
    },
    /// No model existed yet: the new plugin/config will be used for the first fit.
    FactorySet,
    /// Building it failed; the old model keeps running.
    Failed(String),
}

/// One request's result.
#[derive(Debug)]
pub struct SwapEvent {
    /// The caller's id.
    pub id: u64,
    /// What changed.
    pub change: ModelChange,
    /// The result.
    pub outcome: SwapOutcome,
}

/// How a caller's change ended, as far as the learner knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// The new model runs.
    Adopted,
    /// No model existed yet: the plugin is used for the first fit.
    FactorySet,
    /// Building it failed; the old model runs.
    Failed,
}

/// The answer to a cancel ([`crate::learn::Learner::cancel_swap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelOutcome {
    /// It was still in progress and will never be adopted; the old model runs on.
    Cancelled,
    /// It had already ended this way.
    Finished(Finished),
    /// The learner knows no such change (refused at once, or an older one).
    Unknown,
}
