//! Uncertainty injection and the discard rule (spec §1.2, §1.4, §7 #2–#3).
//!
//! A bandit observation taken at step i is, at step t, a noisy observation of the current
//! function with variance v_i(t) = [`Drift::var`](gpn_gp_core::drift::Drift::var)(σ_i², t − i):
//! the paper's σ²((t−i)² + 1) is the quadratic model with κ² = c_drift = σ² (ages in steps
//! stand in for seconds). It is kept iff v_i(t) ≤ g(t) — non-strict, as §7 #3 decides — and
//! the newest observation is always kept, which fixes g(1) = 0 and g(2) < σ².

use gpn_gp_core::drift::{Drift, DriftModel};

/// The discard threshold g(t).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// g(t) = σ²·max(1, ln t) (the paper's σ² ln t with the newest-sample fix).
    PaperLog {
        /// σ², the bandit noise variance.
        noise_var: f64,
    },
    /// Keep iff v ≤ `max_var_ratio`·σ_i², the plugins' fixed cap (`Drift::expired`).
    Ratio,
    /// g(t) = this constant.
    Constant(f64),
    /// Keep everything (injection without a window).
    Never,
}

/// Injected variances plus the discard rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Injection {
    /// The growth of a sample's variance with its age (steps as seconds).
    pub drift: Drift,
    /// When a sample leaves.
    pub threshold: Threshold,
    /// Ages are counted to step t + `lookahead` (§7 #14: 0 is the paper, 1 ages the data to
    /// the step whose action is being chosen).
    pub lookahead: usize,
}

impl Injection {
    /// The paper's setting: v = σ² + c_drift·a² with c_drift = σ², g(t) = σ²·max(1, ln t).
    pub fn paper(noise_var: f64) -> Self {
        Self::quadratic(noise_var, Threshold::PaperLog { noise_var })
    }

    /// Quadratic injection v = σ_i² + c_drift·a² (§7 #2: c_drift = σ², Δ²/3 or Δ²).
    pub fn quadratic(c_drift: f64, threshold: Threshold) -> Self {
        Self::with_model(
            DriftModel::Quadratic {
                kappa_per_s: c_drift.sqrt(),
            },
            threshold,
        )
    }

    /// Any drift model of [`gpn_gp_core::drift`] with a threshold; `max_var_ratio` (used by
    /// [`Threshold::Ratio`]) starts at +∞, set it on [`Injection::drift`].
    pub fn with_model(model: DriftModel, threshold: Threshold) -> Self {
        Self {
            drift: Drift {
                model,
                max_var_ratio: f64::INFINITY,
                refresh_hz: 1.0,
            },
            threshold,
            lookahead: 0,
        }
    }

    /// g(t), or `None` for a rule without a global threshold ([`Threshold::Ratio`],
    /// [`Threshold::Never`]).
    pub fn g(&self, t: usize) -> Option<f64> {
        match self.threshold {
            Threshold::PaperLog { noise_var } => Some(noise_var * (t as f64).ln().max(1.0)),
            Threshold::Constant(g) => Some(g),
            Threshold::Ratio | Threshold::Never => None,
        }
    }

    /// The age at step t of a sample taken at step i (i ≤ t).
    pub fn age(&self, t: usize, i: usize) -> f64 {
        (t + self.lookahead).saturating_sub(i) as f64
    }

    /// Variance at step t of a sample of base variance `base_var` taken at step i.
    pub fn var(&self, base_var: f64, t: usize, i: usize) -> f64 {
        self.drift.var(base_var, self.age(t, i))
    }

    /// Whether a sample (base variance `base_var`, taken at step i) stays in the model at
    /// step t; `newest` marks the newest bandit observation, which always stays.
    pub fn keep(&self, base_var: f64, t: usize, i: usize, newest: bool) -> bool {
        if newest {
            return true;
        }
        let v = self.var(base_var, t, i);
        match self.threshold {
            Threshold::Never => true,
            Threshold::Ratio => !self.drift.expired(base_var, self.age(t, i)),
            Threshold::PaperLog { .. } | Threshold::Constant(_) => {
                self.g(t).is_some_and(|g| v <= g)
            }
        }
    }

    /// The ages (t − i, ascending) of the observations kept at step t when one is taken
    /// every step (the window table of §1.4).
    pub fn kept_ages(&self, base_var: f64, t: usize) -> Vec<usize> {
        (1..=t)
            .rev()
            .filter(|&i| self.keep(base_var, t, i, i == t))
            .map(|i| t - i)
            .collect()
    }
}
