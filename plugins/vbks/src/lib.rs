//! gpn_vbks: the VBKS ensemble — variational Bayesian kernel selection over a space of
//! composite kernels (Teng, Chen, Zhang & Low, "Scalable Variational Bayesian Kernel
//! Selection for Sparse Gaussian Process Regression"; spec `specs/vbks.md`), run as an
//! online mixture of sparse GPs (spec §7).
//!
//! Boundary: sees x ∈ R^d and y ∈ R^p only — nothing of robots, ROS or the plugin ABI
//! (`plugin.rs` is the glue). Linear algebra is our own small allocation-free routines
//! (`linalg`); the packed dot product comes from `gpn_gp_core`. No feature flags.
//!
//! # What it does
//!
//! 1. **Offline phase** (first N = `offline_samples` samples, on the model's background
//!    thread; `offline.rs`): standardise; choose M_sel shared inducing inputs by k-means;
//!    for every candidate kernel fit its hyperparameters (noise included, per kernel) by
//!    minibatch stochastic optimisation of its local bound — the uncollapsed SVGP bound
//!    with natural-gradient steps for q(u) and Adam for the log-hyperparameters
//!    (`local.rs`) — while the data arrive in checkpoints; L_i* is each kernel's collapsed
//!    bound; the logistic-normal belief q(g) is fitted to the L_i* (`belief.rs`, Alg. 4);
//!    prune to the top K̃ = `keep` kernels and refit their belief (Alg. 6).
//! 2. **Online ensemble** (`component.rs`, `ensemble.rs`): one sparse GP per kept kernel
//!    with M = `inducing` inducing inputs and whitened sufficient statistics updated in
//!    O(M²) per sample (rank-one Cholesky update, recursive least squares for the mean
//!    weights); predictions are the belief-weighted mixture with the between-kernel
//!    variance term; the belief is refitted on the components' online evidence (L_i* plus
//!    the prequential log predictive density of the online samples) and, with
//!    forgetting, the factors are rebuilt, both on the background thread; with `drift`
//!    old samples are down-weighted and finally removed (below).
//!
//! Until the ensemble is ready a **warm-up model** predicts from the `warmup_samples`-th
//! sample on (default 200; `model.rs`): the first candidate kernel at its initial
//! parameters, seeded from `hyper` when given, one sparse GP built on its own thread from
//! the samples so far and rebuilt each time they double, learning every sample in between.
//! Before it (or with `warmup_samples: 0`) `predict` returns the running mean and variance
//! of the targets (see `model.rs`); `describe` (the ABI's diagnostics) reports the phase, the
//! kept kernels with their weights, bounds and learned hyperparameters.
//!
//! # Kernel space
//!
//! `kernels`: `"level2"` (default: the 24 expressions of level ≤ 2 over SE, RQ, LIN,
//! PER), `"level1"`, `"level3"` (K_144), `"k12"` (the paper's K_12), or a list such as
//! `["SE", "PER*SE", "(PER+RQ)*LIN"]`. Every base kernel acts on all d inputs with ARD
//! parameters (per-input lengthscales; PER a period per input; LIN a weight per input),
//! or on the inputs `base_dims` lists for it (`{"PER": [0, 1, 2]}`). See
//! `docs/decisions/0006-vbks-kernel-space-and-describe.md` for why.
//!
//! # Configuration (JSON keys; all optional)
//!
//! Unknown keys are rejected. The keys, their types, defaults, units and meanings are
//! declared once, in [`config_schema`], which the plugin hands to the node through the ABI;
//! `docs/plugins/vbks.md` is printed from it (`gp-node plugins vbks --markdown`).
//!
//! # Uncertainty injection (`drift`)
//!
//! `"drift": {"model": "quadratic"|"linear"|"exponential", "kappa_per_s" | "q_per_s" |
//! "tau_s", "max_var_ratio", "refresh_hz"}` — the keys every plugin shares
//! (`gpn_gp_core::drift`; time-varying GP spec §1.2, §6.1). Each sample keeps its `t_secs`
//! and `noise_var`; its variance grows with its age a = t_newest − t_i:
//! v_i(t) = base_i + κ²a² (quadratic), base_i + q·a (linear), base_i·e^(a/τ)
//! (exponential), and it leaves once v_i/base_i > `max_var_ratio` (default 100). The base
//! of a sample in a component is the larger of the component's learned noise s² (in target
//! units) and the caller's `noise_var` (mean over the outputs): a caller's noise below the
//! learned one leaves the fit as it was learned, one above (a jump variance injected on a
//! detected change, a worse sensor) loosens it. Each component's statistics become
//! heteroscedastic, Ã = Σ_i (s²/v_i) ṽ_i ṽ_iᵀ, r = Σ_i (s²/v_i) ṽ_i y_i, … — the spec's
//! A = K_ZZ + Σ k_Z k_Zᵀ / v_i in whitened form (`inject.rs`):
//!
//! * `exponential`: every weight shrinks by the common factor e^(−Δt/τ) when the clock
//!   moves by Δt, so the control thread discounts the statistics exactly in O(M²) per
//!   sample;
//! * `quadratic`, `linear`: the weights shrink at different rates, so the statistics are
//!   rebuilt exactly on the background thread from its copy of the window, O(n M²) per
//!   component;
//! * for all three the background thread rebuilds at `refresh_hz` (sample clock; default
//!   10): statistics at the newest stamp with expired samples removed, then L_B and γ. It
//!   is adopted at the next call and the samples since the copy are replayed. New samples
//!   enter on the control thread at their age-0 weight (rank-one update as without drift).
//!
//! **What predictions see.** Predictions use L_B and γ, which the rank-one updates do not
//! re-discount: old samples lose weight in the predictions at each adopted rebuild, i.e.
//! with a lag of about one refresh period plus the rebuild's own time (O(n M² K̃) on the
//! background thread — if that exceeds the period, rebuilds simply run back to back).
//!
//! **`drift` wins over `forgetting`.** λ discounts per *sample*, the drift models per
//! *second*; with a `drift` key `forgetting` (and `refactor_every`, `replay_capacity`) is
//! ignored — use `"model": "exponential"` with τ = −Δt/ln λ ≈ Δt/(1 − λ) (Δt the sample
//! period) for the same memory. The online belief refits then use each component's
//! drift-weighted evidence (L_i* scaled by the offline samples' remaining weight plus the
//! weighted prequential log densities). `Vbks::sync_drift` (tests, tools) blocks until a
//! rebuild including every sample is adopted. Save/load carries the window.
//!
//! # Multi-output
//!
//! All p outputs share the candidate kernels, the kept components, each kernel's θ and its
//! noise in standardised units (spec §7.6): one factorisation and one kernel vector serve
//! every output; each output has its own mean weights; local bounds are summed over the
//! outputs. Without `drift`, `noise_var` passed to `update` is checked and not used (the
//! learned noise is) and `t_secs` only appears in `describe`; with `drift` both set the
//! sample's weight (above).
//!
//! # Example
//!
//! ```
//! use gpn_gp_core::model::OnlineModel;
//! let cfg = serde_json::json!({
//!     "kernels": ["SE", "PER", "SE+LIN"], "offline_samples": 60, "inducing": 8,
//!     "checkpoints": 2, "epochs": 1, "min_steps": 5, "final_steps": 10,
//!     "init_candidates": 3, "starts": 1, "keep": 2, "belief_steps": 50,
//!     "posterior_samples": 100, "wait_for_offline": true,
//! });
//! let mut m = gpn_vbks::Vbks::from_json(&cfg, 1, 1).unwrap();
//! let (mut mu, mut var) = ([0.0], [0.0]);
//! for k in 0..100 {
//!     let x = [k as f64 * 0.05];
//!     m.predict(&x, &mut mu, &mut var).unwrap();
//!     m.update(&x, &[x[0].sin()], k as f64 * 0.01, &[0.01]).unwrap();
//! }
//! assert_eq!(m.stats().experts, 2);
//! ```
#![warn(missing_docs)]
// Dense linear algebra indexes several arrays with one row/column index; iterator chains
// over zipped rows would hide the formulas the comments cite.
#![allow(clippy::needless_range_loop)]

pub mod adam;
pub mod belief;
pub mod component;
pub mod config;
mod describe;
pub mod ensemble;
pub mod expr;
pub mod fast;
pub mod grammar;
pub mod init;
pub mod inject;
pub mod kernel;
pub mod kmeans;
pub mod linalg;
pub mod local;
pub mod model;
pub mod offline;
mod persist;
mod plugin;
pub mod rng;
pub mod scaler;
mod schema;
pub mod stats;
mod worker;

pub use config::{Config, ValidConfig};
pub use model::{Phase, Vbks};
pub use schema::config_schema;
