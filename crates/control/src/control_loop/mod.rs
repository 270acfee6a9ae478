//! One control loop over a plant, in ros2_control's shape: a [`Plant`] (read the measured
//! state → the tick → write the command), and the seams the loop is given — the [`Clock`],
//! the [`ReferenceSource`], the [`CommandDecision`] (supervisor and watchdog rules), the
//! [`Operations`] between ticks, and [`OutputListener`]s that receive one [`LoopOutput`] per
//! tick. `gp-node sim` and the ROS node differ only in the plant, clock, reference,
//! operations and listeners they hand to [`ControlLoop::run`].
//!
//! Boundary: knows the control tick and the learner; nothing of ROS, the simulator or the
//! application's parameters.
//!
//! ```text
//!            ┌──────────── Operations (swaps, resets, gains) ───────────┐
//!            ▼                                                          │ replies, events
//!  Plant::read ─► ReferenceSource ─► Tick (law, supervisor) ─► CommandDecision ─► Plant::write
//!                                         │
//!                                         └─► LoopOutput ─► OutputListeners (ROS, rerun, report)
//! ```

mod clock;
mod decision;
mod driver;
mod operations;
mod output;
mod plant;
mod reference;
mod watchdog;

pub use clock::{Clock, PacedClock, SimulatedClock, WallClock};
pub use decision::{
    CommandDecision, DecisionCounts, FallbackReason, Mode, ReferenceFault, ReferenceLimits,
    ReferenceRefusal, StateFault, Verdict, WatchdogAction,
};
pub use driver::{ControlLoop, Handled, ModelReport};
pub use operations::{ControlCommand, ControlReply, LoopView, NoOperations, Operations};
pub use output::{CHANGES_PER_TICK, LoopCounters, LoopOutput, OutKind, OutputListener};
pub use plant::{Command, Plant, Read, StateFrame, Timing, TorqueOrigin, Truth};
pub use reference::{Desired, MeasuredReference, ReferenceSource};
pub use watchdog::{Watchdog, WatchdogVerdict};
