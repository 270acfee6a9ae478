//! The command decision: which command the plant gets at a tick. Its rules today:
//!
//! - a new state → the tick's law (learned, or nominal where the supervisor refuses the
//!   model: inside [`crate::control::Tick`]);
//! - a repeated stamp → the last command again (a lock-step driver re-sending a state);
//! - silence beyond the watchdog's timeout → the safe output ([`WatchdogAction`]), repeated
//!   every timeout while it lasts (see [`Watchdog`]);
//! - an observe-only plant → no command (inactive).
//!
//! A simulated plant is never silent: it runs without a watchdog.

use std::time::{Duration, Instant};

use super::watchdog::{Watchdog, WatchdogVerdict};

/// The safe output published when joint states stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WatchdogAction {
    /// Gravity compensation g(q) at the last good position, no feedback terms: the arm holds
    /// its weight and does not chase a reference it can no longer see (the default).
    HoldGravity,
    /// Zero torque (only for arms whose brakes or hardware hold them).
    ZeroTorque,
    /// Publish nothing more (the effort controller keeps the last command it received).
    StopPublishing,
}

/// The longest the loop waits for a state before it checks the watchdog again.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// The decision's rules and state.
#[derive(Debug, Clone)]
pub struct CommandDecision {
    watchdog: Option<Watchdog>,
    action: WatchdogAction,
}

impl CommandDecision {
    /// For a robot: the watchdog and its safe output.
    pub fn with_watchdog(watchdog: Watchdog, action: WatchdogAction) -> Self {
        Self {
            watchdog: Some(watchdog),
            action,
        }
    }

    /// For a simulated plant, which is never silent.
    pub fn without_watchdog() -> Self {
        Self {
            watchdog: None,
            action: WatchdogAction::HoldGravity,
        }
    }

    /// A valid new state arrived at `now`.
    pub fn on_state(&mut self, now: Instant) {
        if let Some(w) = self.watchdog.as_mut() {
            w.feed(now);
        }
    }

    /// Nothing arrived until `now`: the safe output to command, if the watchdog trips.
    pub fn on_silence(&mut self, now: Instant) -> Option<WatchdogAction> {
        let w = self.watchdog.as_mut()?;
        (w.check(now) == WatchdogVerdict::Trip).then_some(self.action)
    }

    /// How long the loop may wait for the next state.
    pub fn deadline(&self, now: Instant) -> Duration {
        self.watchdog
            .as_ref()
            .map_or(MAX_WAIT, |w| w.next_deadline(now))
            .min(MAX_WAIT)
    }

    /// New watchdog timeout and action (a robot's; ignored without a watchdog).
    pub fn set_watchdog(&mut self, timeout: Duration, action: WatchdogAction) {
        if let Some(w) = self.watchdog.as_mut() {
            w.set_timeout(timeout);
            self.action = action;
        }
    }

    /// The safe output.
    pub fn action(&self) -> WatchdogAction {
        self.action
    }

    /// The watchdog, if the plant can fall silent.
    pub fn watchdog(&self) -> Option<&Watchdog> {
        self.watchdog.as_ref()
    }
}
