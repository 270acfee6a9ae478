//! Operations: changes asked of the loop between ticks (a model swap, a reset, new gains),
//! and their results. The ROS node's operations thread (services, parameters) and the
//! simulation's swap schedule are two implementations.

use super::decision::WatchdogAction;
use crate::control::{ControlLaw, SupervisorParams};
use crate::learn::{
    CancelOutcome, GateParams, LearnPhase, ModelSnapshot, SwapEvent, SwapRefusal, SwapRequest,
};

/// A change the node's operations ask of the loop, applied between ticks.
pub enum ControlCommand {
    /// Change the model (a swap or a loaded model).
    Swap(SwapRequest),
    /// Cancel the model change `id` if it is still in progress (its caller gave up).
    CancelSwap {
        /// The change's id.
        id: u64,
    },
    /// Forget what was learned.
    Reset {
        /// Keep the hyperparameters (a fresh model) or fit them again.
        keep_hyperparameters: bool,
        /// Caller's id.
        id: u64,
    },
    /// Serialise the running model (allocates: done between ticks, timed).
    Save {
        /// Caller's id.
        id: u64,
    },
    /// A new control law (gains, effort limits), built off the control thread.
    Law(Box<ControlLaw>),
    /// Use the learned residual in the law, or not.
    UseModel(bool),
    /// Supervisor settings.
    Supervisor(SupervisorParams),
    /// Gate settings.
    Gate(GateParams),
    /// Learn every n-th admitted sample.
    AdmitEvery(u32),
    /// The dynamics changed now (a payload picked up): react as configured.
    AnnounceChange,
    /// Freeze the calibration of η_cal on what the model predicted so far.
    FreezeCalibration,
    /// From now on form samples but learn none of them (a held-out evaluation).
    HoldOut,
    /// Activate (command the robot) or deactivate (command nothing).
    Activate(bool),
    /// Watchdog timeout and action.
    Watchdog {
        /// Timeout.
        timeout: std::time::Duration,
        /// Action.
        action: WatchdogAction,
    },
}

/// What the loop answers (sent back to the operations thread).
pub enum ControlReply {
    /// A model change finished (adopted, failed, or the factory was set).
    Event(SwapEvent),
    /// A model change was refused at once; the request comes back to be dropped off the
    /// control thread.
    Refused {
        /// Caller's id.
        id: u64,
        /// The request, if it could be given back.
        request: Option<SwapRequest>,
        /// Why.
        why: SwapRefusal,
    },
    /// A reset was accepted or refused.
    Reset {
        /// Caller's id.
        id: u64,
        /// Result.
        result: Result<(), SwapRefusal>,
    },
    /// The running model's snapshot (or why there is none) and how long the control thread
    /// spent on it, µs.
    Saved {
        /// Caller's id.
        id: u64,
        /// The snapshot.
        result: Result<Box<ModelSnapshot>, String>,
        /// Time the control thread spent serialising.
        blocked_micros: f64,
    },
    /// The law that was replaced, to be dropped off the control thread.
    OldLaw(Box<ControlLaw>),
    /// What became of a cancelled model change.
    SwapCancel {
        /// The change's id.
        id: u64,
        /// Cancelled, or how it had already ended.
        outcome: CancelOutcome,
    },
}

/// What the operations see of the loop when asked for commands.
#[derive(Debug, Clone, Copy)]
pub struct LoopView {
    /// Ticks run so far (the index of the next tick).
    pub ticks: u64,
    /// The learner's phase.
    pub phase: LearnPhase,
}

/// Operations the loop is given. Called on the control thread between ticks: real-time for
/// a robot (channels with preallocated capacity, never blocking).
pub trait Operations {
    /// The next command to apply before the next state is read (None: none pending).
    fn next_command(&mut self, view: &LoopView) -> Option<ControlCommand>;

    /// The result of the command just applied (None: accepted, nothing to answer yet).
    fn on_applied(&mut self, reply: Option<ControlReply>);

    /// A model change finished at tick `tick`.
    fn on_event(&mut self, tick: u64, event: SwapEvent);
}

/// No operations (a run with nothing to change).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOperations;

impl Operations for NoOperations {
    fn next_command(&mut self, _: &LoopView) -> Option<ControlCommand> {
        None
    }

    fn on_applied(&mut self, _: Option<ControlReply>) {}

    fn on_event(&mut self, _: u64, _: SwapEvent) {}
}
