//! The loop's clock: whose time the supervisor judges the model's work on, whether the
//! plant waits for the model, and how the loop is paced. The plant stamps the states; the
//! clock only decides what the model's work costs and when the next tick may start.
//!
//! - [`SimulatedClock`]: `gp-node sim`. The simulated robot waits for the model — its work,
//!   a background fit included, costs no simulated time — so the same seed gives the same
//!   run under any CPU load.
//! - [`PacedClock`]: `gp-node sim --realtime`: tick k starts k·dt after the start on the
//!   wall clock, as on a robot; the model's work is charged on the wall clock.
//! - [`WallClock`]: a robot over ROS; the plant's arrivals pace the loop. ROS time from
//!   `/clock` (`use_sim_time`) is another implementation of this trait.

use std::time::{Duration, Instant};

use crate::control::BudgetClock;

/// A clock the control loop is given.
pub trait Clock {
    /// The clock the supervisor judges the model's work on.
    fn budget(&self) -> BudgetClock;

    /// Whether the plant waits for background model work (a fit): the loop then waits for
    /// it after each tick, as if it were instantaneous.
    fn waits_for_model(&self) -> bool;

    /// Now, for the watchdog's deadlines.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Called once when the loop starts, before the first state is read.
    fn start(&mut self) {}

    /// Called after each tick: sleeps until the next one may start (a paced clock).
    fn pace(&mut self) {}
}

/// Simulated time: the simulator steps as fast as it can and waits for the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimulatedClock;

impl Clock for SimulatedClock {
    fn budget(&self) -> BudgetClock {
        BudgetClock::Simulated
    }

    fn waits_for_model(&self) -> bool {
        true
    }
}

/// The wall clock with a fixed period: tick k starts k·period after the loop started.
#[derive(Debug, Clone, Copy)]
pub struct PacedClock {
    period: Duration,
    /// When the next tick is due.
    due: Instant,
}

impl PacedClock {
    /// Ticks every `period`, from when the loop starts.
    pub fn new(period: Duration) -> Self {
        Self {
            period,
            due: Instant::now(),
        }
    }
}

impl Clock for PacedClock {
    fn budget(&self) -> BudgetClock {
        BudgetClock::Wall
    }

    fn waits_for_model(&self) -> bool {
        false
    }

    fn start(&mut self) {
        self.due = Instant::now();
    }

    fn pace(&mut self) {
        self.due += self.period;
        if let Some(wait) = self.due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// The wall clock of a robot: the plant's arrivals pace the loop.
#[derive(Debug, Clone, Copy, Default)]
pub struct WallClock;

impl Clock for WallClock {
    fn budget(&self) -> BudgetClock {
        BudgetClock::Wall
    }

    fn waits_for_model(&self) -> bool {
        false
    }
}
