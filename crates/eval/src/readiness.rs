//! Whether each prediction came from what the model learned or from its prior: the
//! model's [`OnlineModel::readiness`] asked after every prediction, tallied per target.
//!
//! A model whose background work lags (RCaGP's worker, VBKS's offline phase) answers from
//! the prior until it catches up; without this tally such a run scores SMSE ≈ 1 and nothing
//! says why. "Ready" for a target is the first predicted step it answered from data; the
//! fraction from the prior after that step is 0 for a model that kept up.

use gpn_gp_core::model::OnlineModel;

/// Per-target counts of predictions from the prior.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadinessTally {
    /// Scratch for `readiness` (one flag per target).
    flags: Vec<bool>,
    /// The model answered `readiness` at every prediction so far.
    known: bool,
    predicted: usize,
    from_prior: Vec<usize>,
    ready_at: Vec<Option<usize>>,
    prior_after_ready: Vec<usize>,
    max_samples_behind: u64,
}

/// What [`ReadinessTally::report`] returns; per target where a `Vec`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadinessReport {
    /// The fraction of predictions made from the prior (`None`: the model does not say).
    pub prior_fraction: Option<Vec<f64>>,
    /// The first predicted step answered from data (`None` inside: never).
    pub ready_at_step: Option<Vec<Option<usize>>>,
    /// The fraction of predictions after `ready_at_step` made from the prior (NaN for a
    /// target never ready).
    pub prior_fraction_after_ready: Option<Vec<f64>>,
    /// The most samples the model's background work was behind at a prediction.
    pub max_samples_behind: Option<u64>,
}

impl ReadinessReport {
    /// True when the model says every target reached data and never fell back after.
    pub fn all_ready(&self) -> bool {
        match (&self.ready_at_step, &self.prior_fraction_after_ready) {
            (Some(at), Some(after)) => {
                at.iter().all(Option::is_some) && after.iter().all(|&f| f == 0.0)
            }
            _ => false,
        }
    }
}

impl ReadinessTally {
    /// A tally for `p` targets.
    pub fn new(p: usize) -> Self {
        Self {
            flags: vec![false; p],
            known: true,
            predicted: 0,
            from_prior: vec![0; p],
            ready_at: vec![None; p],
            prior_after_ready: vec![0; p],
            max_samples_behind: 0,
        }
    }

    /// Records predicted step `step`: asks the model what that prediction answered from.
    pub fn observe(&mut self, step: usize, model: &dyn OnlineModel) {
        self.predicted += 1;
        let Some(r) = model.readiness(&mut self.flags) else {
            self.known = false;
            return;
        };
        self.max_samples_behind = self.max_samples_behind.max(r.samples_behind);
        for (t, &prior) in self.flags.iter().enumerate() {
            match (prior, self.ready_at[t]) {
                (true, None) => self.from_prior[t] += 1,
                (true, Some(_)) => {
                    self.from_prior[t] += 1;
                    self.prior_after_ready[t] += 1;
                }
                (false, None) => self.ready_at[t] = Some(step),
                (false, Some(_)) => {}
            }
        }
    }

    /// The fractions (`None` where the model did not answer at every prediction).
    pub fn report(&self) -> ReadinessReport {
        if !self.known {
            return ReadinessReport {
                prior_fraction: None,
                ready_at_step: None,
                prior_fraction_after_ready: None,
                max_samples_behind: None,
            };
        }
        let fraction = |count: usize, of: usize| {
            if of == 0 {
                0.0
            } else {
                count as f64 / of as f64
            }
        };
        let after: Vec<f64> = self
            .ready_at
            .iter()
            .zip(&self.prior_after_ready)
            // Out of the predictions after the ready step (which itself was from data);
            // NaN (`null` in JSON) for a target never ready.
            .map(|(at, &count)| match at {
                Some(_) => fraction(count, self.predicted_after(*at)),
                None => f64::NAN,
            })
            .collect();
        ReadinessReport {
            prior_fraction: Some(
                self.from_prior
                    .iter()
                    .map(|&c| fraction(c, self.predicted))
                    .collect(),
            ),
            ready_at_step: Some(self.ready_at.clone()),
            prior_fraction_after_ready: Some(after),
            max_samples_behind: Some(self.max_samples_behind),
        }
    }

    /// Predictions after step `at` (predicted steps are 1, 2, …, `predicted`).
    fn predicted_after(&self, at: Option<usize>) -> usize {
        at.map_or(0, |a| self.predicted.saturating_sub(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_gp_core::model::{ModelError, ModelStats, Readiness};

    /// Answers from the prior at the steps listed in `prior` (output 1 only from step 3 on);
    /// `None` from `readiness` when `silent`.
    struct Scripted {
        step: usize,
        prior: Vec<usize>,
        silent: bool,
    }

    impl OnlineModel for Scripted {
        fn input_dim(&self) -> usize {
            1
        }
        fn output_dim(&self) -> usize {
            2
        }
        fn predict(&mut self, _: &[f64], _: &mut [f64], _: &mut [f64]) -> Result<(), ModelError> {
            Ok(())
        }
        fn update(&mut self, _: &[f64], _: &[f64], _: f64, _: &[f64]) -> Result<(), ModelError> {
            Ok(())
        }
        fn stats(&self) -> ModelStats {
            ModelStats::default()
        }
        fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
            if self.silent {
                return None;
            }
            from_prior[0] = self.prior.contains(&self.step);
            from_prior[1] = self.step < 3;
            Some(Readiness {
                samples_behind: self.step as u64,
            })
        }
    }

    #[test]
    fn before_ready_after_ready_and_unknown() {
        // Steps 1..=6 predicted; output 0 from the prior at 1 and 5 (a fall-back after ready
        // at 2), output 1 at 1 and 2 (ready at 3).
        let mut model = Scripted {
            step: 0,
            prior: vec![1, 5],
            silent: false,
        };
        let mut tally = ReadinessTally::new(2);
        for step in 1..=6 {
            model.step = step;
            tally.observe(step, &model);
        }
        let r = tally.report();
        assert_eq!(r.prior_fraction, Some(vec![2.0 / 6.0, 2.0 / 6.0]));
        assert_eq!(r.ready_at_step, Some(vec![Some(2), Some(3)]));
        // Output 0: 1 of the 4 predictions after step 2; output 1: none of the 3 after 3.
        assert_eq!(r.prior_fraction_after_ready, Some(vec![0.25, 0.0]));
        assert_eq!(r.max_samples_behind, Some(6));
        assert!(!r.all_ready());

        model.silent = true;
        let mut unknown = ReadinessTally::new(2);
        unknown.observe(1, &model);
        let r = unknown.report();
        assert_eq!(r.prior_fraction, None);
        assert!(!r.all_ready());
    }
}
