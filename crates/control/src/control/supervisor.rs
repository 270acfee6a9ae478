//! The safety supervisor: decides, per tick, whether the model's answer may be used.
//!
//! Falls back to the nominal law (μ = 0) when there is no model, when the model returns an
//! error, when an output is non-finite (that joint only), or when the model's work in the
//! tick overran its budget (measured by the caller on the tick's
//! [`BudgetClock`](super::BudgetClock): wall time on a robot, simulated time in the
//! simulator). After `max_consecutive_faults` faults in a row the model is
//! quarantined for `quarantine_ticks` ticks (neither learning nor predicting), then tried
//! again. Every decision is counted for diagnostics. Real-time: plain counters.

use super::params::SupervisorParams;

/// Why the nominal law was used (for the whole tick or some joints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// No model yet (collecting or fitting), or the model is switched off.
    NoModel,
    /// The model returned an error.
    ModelError,
    /// Some outputs were NaN or infinite; those joints used μ = 0.
    NonFinite,
    /// The model's work overran the tick budget.
    Overrun,
    /// The model is quarantined after repeated faults.
    Quarantined,
    /// Some |μ| exceeded what the effort limits make plausible
    /// (`control.fallback.mu_effort_fraction`); the whole tick used μ = 0.
    Implausible,
    /// The learned law fell back and the model is on probation: it predicts (μ is reported)
    /// but the nominal law commands.
    Probation,
}

/// Counters of the supervisor's decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SupervisorCounts {
    /// Ticks that used the model on every joint.
    pub model_ticks: u64,
    /// Ticks without a model.
    pub no_model: u64,
    /// Ticks with a model error.
    pub model_errors: u64,
    /// Ticks with at least one non-finite output.
    pub non_finite: u64,
    /// Ticks over budget.
    pub overruns: u64,
    /// Ticks spent in quarantine.
    pub quarantined: u64,
    /// Times the model was put in quarantine.
    pub quarantines: u64,
}

/// The supervisor's state.
#[derive(Debug, Clone)]
pub struct Supervisor {
    params: SupervisorParams,
    consecutive_faults: u32,
    quarantine_left: u32,
    counts: SupervisorCounts,
}

impl Supervisor {
    /// A supervisor with these settings.
    /// Replaces the settings (copies them; no allocation).
    pub fn set_params(&mut self, params: &SupervisorParams) {
        self.params.budget_micros = params.budget_micros;
        self.params.max_consecutive_faults = params.max_consecutive_faults;
        self.params.quarantine_ticks = params.quarantine_ticks;
    }

    /// A supervisor with these settings.
    pub fn new(params: SupervisorParams) -> Self {
        Self {
            params,
            consecutive_faults: 0,
            quarantine_left: 0,
            counts: SupervisorCounts::default(),
        }
    }

    /// Whether the model may be called this tick (false while quarantined).
    pub fn model_allowed(&mut self) -> bool {
        if self.quarantine_left > 0 {
            self.quarantine_left -= 1;
            self.counts.quarantined += 1;
            return false;
        }
        true
    }

    /// Records the outcome of a tick in which the model was called; returns the fallback
    /// to apply, if any. `non_finite` says some outputs were replaced by μ = 0;
    /// `elapsed_micros` is the model's work on the tick's budget clock.
    pub fn judge(
        &mut self,
        errored: bool,
        non_finite: bool,
        elapsed_micros: f64,
    ) -> Option<Fallback> {
        let verdict = if errored {
            self.counts.model_errors += 1;
            Some(Fallback::ModelError)
        } else if elapsed_micros > self.params.budget_micros {
            self.counts.overruns += 1;
            Some(Fallback::Overrun)
        } else if non_finite {
            self.counts.non_finite += 1;
            Some(Fallback::NonFinite)
        } else {
            self.counts.model_ticks += 1;
            None
        };
        if verdict.is_some() {
            self.consecutive_faults += 1;
            if self.consecutive_faults >= self.params.max_consecutive_faults {
                self.consecutive_faults = 0;
                self.quarantine_left = self.params.quarantine_ticks;
                self.counts.quarantines += 1;
            }
        } else {
            self.consecutive_faults = 0;
        }
        verdict
    }

    /// A new model was adopted (a swap, a load, a rebuild): the faults in a row and any
    /// quarantine in progress were the old model's, so the new one is called from its first
    /// tick. Without this, a good model swapped in after a faulty one stayed unused for the
    /// rest of the quarantine (found by the hostile-input suite).
    pub fn model_changed(&mut self) {
        self.consecutive_faults = 0;
        self.quarantine_left = 0;
    }

    /// Records a tick without a model.
    pub fn no_model(&mut self) {
        self.counts.no_model += 1;
    }

    /// Counters.
    pub fn counts(&self) -> SupervisorCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_faults_quarantine_the_model_then_release_it() {
        let mut s = Supervisor::new(SupervisorParams {
            budget_micros: 100.0,
            max_consecutive_faults: 3,
            quarantine_ticks: 2,
        });
        assert_eq!(s.judge(false, false, 50.0), None);
        assert_eq!(s.judge(false, false, 150.0), Some(Fallback::Overrun));
        assert_eq!(s.judge(true, false, 10.0), Some(Fallback::ModelError));
        assert_eq!(s.judge(false, true, 10.0), Some(Fallback::NonFinite));
        assert!(!s.model_allowed());
        assert!(!s.model_allowed());
        assert!(s.model_allowed());
        let c = s.counts();
        assert_eq!(
            (
                c.model_ticks,
                c.overruns,
                c.model_errors,
                c.non_finite,
                c.quarantines,
                c.quarantined
            ),
            (1, 1, 1, 1, 1, 2)
        );
    }

    #[test]
    fn a_new_model_ends_the_old_ones_quarantine() {
        let mut s = Supervisor::new(SupervisorParams {
            budget_micros: 100.0,
            max_consecutive_faults: 2,
            quarantine_ticks: 1000,
        });
        assert_eq!(s.judge(true, false, 10.0), Some(Fallback::ModelError));
        assert_eq!(s.judge(true, false, 10.0), Some(Fallback::ModelError));
        assert!(!s.model_allowed(), "quarantined");
        s.model_changed();
        assert!(s.model_allowed(), "the new model is called at once");
        // One fault of the new model does not complete the old one's count.
        assert_eq!(s.judge(true, false, 10.0), Some(Fallback::ModelError));
        assert!(s.model_allowed());
        assert_eq!(s.counts().quarantines, 1);
    }
}
