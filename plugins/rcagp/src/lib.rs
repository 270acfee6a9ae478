//! gpn_rcagp: robust, computation-aware Gaussian processes (RCaGP; Sinaga, Martinelli &
//! Kaski, "Robust and Computation-Aware Gaussian Processes"; spec `specs/rcagp.md`) — as a
//! batch model with its training objective, and as a streaming model on a block window
//! (`layout: window`) — exported as the plugin `rcagp` (`libgpn_rcagp.so`), whose default
//! layout puts RCaGP's weights on SkyGP's local experts instead ([`experts`], ADR 0018).
//!
//! Boundary: sees x ∈ R^d and y ∈ R^p only — nothing of robots or ROS; the plugin ABI is
//! confined to `plugin.rs`. No feature flags.
//!
//! # What is here
//!
//! * Batch numerics (offline, allocate freely): [`kernel`] (Matérn 1/2, 3/2, 5/2, RBF; ARD),
//!   [`weights`] (IMQ weights, adjusted targets, the soft threshold), [`actions`]
//!   (block-sparse and dense actions, random / weight-aware / targets / eigen init),
//!   [`posterior`] (the RCaGP posterior of spec §1.3, A3, A6 for p outputs sharing inputs,
//!   kernel shape and actions), [`elbo`] (the objective with the corrected KL term and its
//!   analytic gradient, R1–R12), [`optim`] and [`train`] (Adam on softplus parameters),
//!   [`baselines`] (dense exact RCGP, CaGP and exact GP), [`mean`] (the expert-guided robust
//!   prior mean, A7).
//! * The streaming model [`RcaGp`] ([`stream`], spec §6): a block-FIFO window of
//!   `blocks × block_size` admitted samples; each full block gets weight-aware action
//!   entries and replaces the oldest; the block path updates one row of G = SᵀCS and
//!   rebuilds every output's posterior exactly (or, between threshold refreshes, updates
//!   each factor by one row: `threshold_refresh_blocks`); the slow path refits the hyperparameters on
//!   the ELBO; `predict` reads an immutable snapshot. Multi-output with shared inputs, kernel
//!   shape and actions; per-output weights, outputscale and noise; per-sample noise
//!   variance (`noise_var` of `update`) is each point's base noise.
//!
//! Real-time: in background mode (the default) `predict` and `update` allocate nothing,
//! take no lock and do no I/O (tested with a counting allocator); the block path and the
//! refits run on the model's two threads, which `Drop` (the ABI's destroy) joins.
//!
//! # Example
//!
//! ```
//! use gpn_gp_core::model::OnlineModel;
//! let cfg = serde_json::json!({
//!     "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.5, 0.5]},
//!     "blocks": 8, "block_size": 4, "background": false,
//! });
//! let mut gp = gpn_rcagp::RcaGp::from_json(&cfg, 2, 1).unwrap();
//! let (mut mu, mut var) = ([0.0], [0.0]);
//! for k in 0..200 {
//!     let x = [(k as f64 * 0.1).sin(), (k as f64 * 0.07).cos()];
//!     gp.predict(&x, &mut mu, &mut var).unwrap();
//!     let glitch = if k % 50 == 7 { 30.0 } else { 0.0 };
//!     gp.update(&x, &[x[0] * x[1] + glitch], k as f64 * 0.01, &[0.01]).unwrap();
//! }
//! gp.predict(&[0.3, 0.5], &mut mu, &mut var).unwrap();
//! assert!((mu[0] - 0.15).abs() < 0.2 && var[0] < 0.5);
//! ```
//!
//! # Configuration of the streaming model (JSON keys)
//!
//! Every key is optional except `hyper`; unknown keys are rejected. The keys, their types,
//! defaults, units and meanings are declared once, in [`config_schema`], which the plugin
//! hands to the node through the ABI; `docs/plugins/rcagp.md` is printed from it
//! (`gp-node plugins rcagp --markdown`).
//!
//! A refit that leaves the box [1/100, 100] × the configured lengthscales or outputscales
//! is discarded. Fixed constants: δ_a ≥ 1e−12; the jitter schedule 0, 1e−8, 1e−7, 1e−6, …,
//! 1e−4·mean diag on chol(M) (spec A3.5); σ² floor 1e−4 (multiplier) in refits.
//!
//! # Choices (spec §5) and deviations
//!
//! The paper's errors are fixed as the spec recommends: KL with Σ_a log δ_a (item 5), the
//! per-point expected log-likelihood (item 4), the correct constant C (item 6), the soft
//! threshold on |y − m| with a floor (item 3). Deviations, all documented in
//! `docs/decisions/0005-rcagp-streaming.md`: weight-aware actions by default (item 15),
//! normalized β by default (item 9, the spec's offered option), the open block's samples
//! as live singleton actions (§6.3's live block, with unit actions), and the SE kernel by
//! default.
//!
//! # Drift (uncertainty injection)
//!
//! With a `drift` key (`{"model": "quadratic" | "linear" | "exponential", "kappa_per_s" |
//! "q_per_s" | "tau_s", "max_var_ratio", "refresh_hz"}`, parsed and documented by
//! `gpn_gp_core::drift`; spec `specs/tvgp.md` §1.2, §6.1) old samples count less and finally
//! leave, through RCaGP's per-point noise:
//!
//! * **Aged noise.** Every window sample keeps its stamp t_l (`t_secs` of `update`) and base
//!   noise ν_l per output (`noise_var`, or σ_n² with `"noise": "hyper"`). The posterior uses
//!   ν_l(t) = `drift.var(ν_l, t_ref − t_l)` in place of ν_l, so the point's noise is
//!   σ_l² = κ_o·ν_l(t) (κ_o the learned noise multiplier, 1 unless refits learn it).
//!   t_ref is the newest stamp at the last refresh; newer samples count as age 0.
//! * **Where it enters, and why this form.** σ_l² is replaced everywhere it appears in the
//!   point's robust pseudo-likelihood: d_l = σ_l⁴/(2w_l²), Λ_l, the adjusted target
//!   r_l = y_l − m − σ_l²h_l and, with normalized β, β_l² = σ_l²/2. The posterior is then
//!   exactly RCGP (spec §1.2) of a model with heteroscedastic noise σ_l²(t), and RCaGP's
//!   projection of it (tested against the dense exact RCGP and, with flat weights, against
//!   an exact heteroscedastic GP). With the default normalized β, d_l = σ_l²(t)(1 + t²/c²):
//!   the age inflation multiplies the effective noise exactly as it would a plain GP's,
//!   and the IMQ factor (1 + t²/c²) stays the outlier weighting. The spec's alternative
//!   (§6.1), w_l = w_rob,l·σ_l²/v_l(t), gives d_l = σ⁴/(2w_l²) = (v_l²/σ_l²)(1 + t²/c²) with
//!   normalized β — the noise grows with the *square* of the inflation ratio — and leaves
//!   σ_l² in r_l's correction; its c → ∞ limit is a GP with noise v²/σ², not the aged model
//!   v. Hence not chosen. With a fixed β, d_l grows as σ_l⁴ (RCGP's own
//!   dependence on the noise): injection acts faster there. The thresholds c_o and their
//!   floor keep using the base noise, so aging does not loosen outlier rejection.
//! * **Base noise.** RCaGP's own per-point noise ν_l, not SkyGP's max(σ_n², `noise_var`):
//!   without drift RCaGP already honours `noise_var` as each point's noise, so this keeps
//!   the limit exact (κ → 0 or τ → ∞ gives the model without the key).
//! * **Expiry, by blocks.** A sample has expired when ν_l(t)/ν_l > `max_var_ratio` for every
//!   output. The window is a FIFO of time-contiguous blocks, so expiry removes whole blocks
//!   from the old end: a block leaves once all its samples have expired. The remaining
//!   slots are rotated in place (inputs, targets, actions, ids, G_C's rows and columns, the
//!   open samples' kernel rows; no allocation) so the oldest is slot 0 and the window is
//!   refilled from there. The newest sample never expires (its ratio is 1), so after a long
//!   gap the window holds just the newest samples.
//! * **Refresh.** t_ref moves to the newest admitted stamp once it is `1/refresh_hz` past the
//!   previous t_ref (the first sample refreshes at once). A refresh expires blocks and marks
//!   the factors for the full rebuild of the block path (O(p(n + i³)), the same as a block
//!   commit); in background mode this runs on the block worker and `predict` keeps reading
//!   the previous immutable snapshot until the rebuilt one is published. Ages change only
//!   when new samples arrive, so refreshing in the samples' clock (rather than on a wall-clock
//!   timer) loses nothing, and inline and background runs reach the same state (tested).
//!   Between refreshes a factor's rows keep the noise of t_ref: the injection lags by at most
//!   one period. `update` and `predict` stay allocation-free with drift on (tested, with
//!   expiry and rebuilds inside the counted stretch).
//! * **Refits** see the aged noise (the window's batch problem carries ν_l(t)), so the slow
//!   path fits the hyperparameters of the same heteroscedastic model.
//! * **Save/load.** A model without the key saves exactly the bytes it saved before drift
//!   existed (tested against a recorded fixture). With the key the state has a trailing
//!   section (`DRIFT`, the settings, t_newest, t_ref, blocks expired, refreshes); it loads
//!   only into a model with the same settings. A state saved without drift loads into a
//!   drift model, which ages it from its newest sample at load.
//! * [`RcaGp::drift_counters`]: blocks expired and refreshes so far.
//! * As in the spec, the injection treats the age errors of different samples as
//!   independent; a persistent drift correlates them, so ±2σ coverage is approximate
//!   (measured in `docs/results/rcagp-drift.md`).
//!
//! Without the `drift` key (or with `"drift": null` or `{"model": "none"}`) every prediction
//! and saved state is bit for bit that of the model before the key existed (tested).
#![warn(missing_docs)]

pub mod actions;
pub mod baselines;
pub mod config;
pub mod elbo;
pub mod error;
pub mod experts;
pub mod kernel;
pub mod mean;
mod model;
pub mod optim;
mod persist;
mod plugin;
pub mod posterior;
mod schema;
pub mod stream;
pub mod train;
pub mod weights;

pub use config::{Config, ValidConfig};
pub use error::RcagpError;
pub use experts::RobustExperts;
pub use model::RcaGp;
pub use plugin::RcaGpPlugin;
pub use schema::config_schema;
