//! SparQ-GP-UCB, the time-varying GP bandit with uncertainty injection and expert side
//! queries (spec `specs/tvgp.md` §1–§3, §5.1), and its baselines, as a test harness for the
//! injection and side-query machinery the plugins use.
//!
//! Boundary: pure numerics over a [`problem::TimeVaryingProblem`] (a function of x ∈ D ⊂ R^d
//! and a step t); it knows nothing of robots. Not real-time: every step refits and
//! allocates. The drift model is [`gpn_gp_core::drift::Drift`] and the greedy selection is
//! [`gpn_gp_core::drift::greedy_pivoted_cholesky`], the same code the plugins run.
//!
//! | module | job |
//! |---|---|
//! | [`rng`] | SplitMix64 (from `gpn_gp_core::rng`), so runs are reproducible without `rand` |
//! | [`hetero_gp`] | exact GP with one noise variance per sample, whitened Cholesky (§1.3) |
//! | [`window`] | injected variances and the discard rule g(t) (§1.2, §1.4, §7 #2–#3) |
//! | [`side_query`] | the pool of past locations, Q_t, greedy pivoted Cholesky / M-DPP swap chain, Ĉ_KL (§1.5, §2.4) |
//! | [`ucb`] | β_t (§2.5) and the UCB argmax over a candidate grid |
//! | [`time_kernel`] | incremental GP with the spatio-temporal kernel (1−ε)^{|i−j|/2}·k: GP-UCB, R-GP-UCB, TV-GP-UCB |
//! | [`problem`] | the time-varying function, its maxima, the synthetic function of §5.1 and the ML-II fit (§7 #11) |
//! | [`bandit`] | the methods and one seeded run, logging what §3 line 18 asks for |
//! | [`experiment`] | many seeds, baseline tuning, the summary table |
//!
//! Evaluation budgets (§5.1's caveat): SparQ spends Q_t ≈ 6 ln t extra noisy evaluations per
//! step (≈ 37 at t = 500) that the bandit baselines do not get, so besides the paper's
//! comparison the harness has budget-matched ablations that spend the same Q_t per step at
//! other points (random past points, random points of D, expert answers without the recent
//! window), and reports every method's total evaluations.
//!
//! ```
//! use gpn_tvgp_bandit::bandit::{BanditConfig, Method};
//! use gpn_tvgp_bandit::problem::Synthetic1d;
//! use gpn_tvgp_bandit::problem::TimeVaryingProblem;
//! let problem = Synthetic1d::with_horizon(30);
//! let mut config = BanditConfig::synthetic_default(30).unwrap();
//! config.grid_step = 1.0;
//! let method = Method::sparq(problem.noise_var());
//! let log = gpn_tvgp_bandit::bandit::run(&problem, &method, &config, 7).unwrap();
//! assert_eq!(log.steps.len(), 30);
//! assert!(log.average_regret() >= 0.0);
//! ```

#![warn(missing_docs)]

pub mod bandit;
pub mod experiment;
pub mod hetero_gp;
pub mod problem;
pub mod rng;
pub mod side_query;
pub mod time_kernel;
pub mod ucb;
pub mod window;

/// Errors of the bandit harness.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TvgpError {
    /// Inconsistent lengths or a NaN / infinite value (the streaming models' input errors).
    #[error(transparent)]
    Input(#[from] gpn_gp_core::model::ModelError),
    /// A noise variance that is not > 0.
    #[error("noise variance at index {index} must be > 0, found {value}")]
    BadVariance {
        /// Sample index.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A matrix could not be factorised even with jitter.
    #[error("{0}: matrix not positive definite even with jitter")]
    NotPositiveDefinite(&'static str),
    /// A setting out of range.
    #[error("invalid setting: {0}")]
    Config(String),
}

/// Result alias of this module.
pub type Result<T> = std::result::Result<T, TvgpError>;

/// Index of the first non-finite entry of `v`, as an error naming `what`.
pub(crate) fn check_finite(what: &'static str, v: &[f64]) -> Result<()> {
    Ok(gpn_gp_core::model::check_finite(what, v)?)
}
