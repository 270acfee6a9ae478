//! The work clock of the supervisor's budget: the clock on which the model's work in a tick
//! (learn + predict) is charged against `supervisor.budget_micros`.
//!
//! Whoever builds the [`Tick`](super::Tick) chooses it, from what the plant does while the
//! model works:
//! - [`BudgetClock::Wall`]: the plant does not wait (a robot, `gp-node run`; also
//!   `gp-node sim --realtime`, which paces the simulator to the wall clock). The work costs
//!   its wall time, so an overrun depends on the machine and its load.
//! - [`BudgetClock::Simulated`]: the plant waits for the model (`gp-node sim`: simulated time
//!   stands still during the tick, as it does during the background fit). The work costs 0
//!   simulated µs and never overruns, so the supervisor's decisions, and the run, are the
//!   same under any CPU load.
//!
//! Either way the tick still measures and reports the wall time (`TickStatus::model_micros`,
//! `exec_micros`); only the overrun decision reads this clock. Real-time: a `Copy` enum, no
//! allocation, lock or I/O.

/// The clock that charges the model's work against the supervisor's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetClock {
    /// Wall time: the plant moves on while the model works.
    Wall,
    /// Simulated time: the plant waits for the model, whose work costs 0 µs.
    Simulated,
}

impl BudgetClock {
    /// The model's work on this clock, µs, given its measured wall time `wall_micros`.
    /// Real-time: no allocation, lock or I/O.
    pub fn work_micros(self, wall_micros: f64) -> f64 {
        match self {
            BudgetClock::Wall => wall_micros,
            BudgetClock::Simulated => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_charges_the_wall_time_and_simulated_charges_nothing() {
        assert_eq!(BudgetClock::Wall.work_micros(1234.5), 1234.5);
        assert_eq!(BudgetClock::Simulated.work_micros(1234.5), 0.0);
        assert_eq!(BudgetClock::Simulated.work_micros(f64::INFINITY), 0.0);
    }
}
