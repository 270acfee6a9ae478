//! gpn_rcagp: robust, computation-aware Gaussian processes (RCaGP; Sinaga, Martinelli &
//! Kaski, "Robust and Computation-Aware Gaussian Processes"; spec `specs/rcagp.md`) — as a
//! batch model with its training objective, and as a streaming model on a block window
//! exported as the plugin `rcagp` (`libgpn_rcagp.so`).
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
//!   rebuilds every output's posterior exactly; the slow path refits the hyperparameters on
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
//! Every key is optional except `hyper`; unknown keys are rejected.
//!
//! | key | values | default | meaning |
//! |---|---|---|---|
//! | `hyper` | object or array of p | required | `{"sigma_f", "sigma_n", "lengthscales": [d]}` (standard deviations); the lengthscales must be the same for every output |
//! | `kernel` | `se` (= `rbf`), `matern12`, `matern32`, `matern52` | `se` | kernel profile (SE because the node and `gp-node eval` fit SE hyperparameters) |
//! | `blocks` | 1..=2048 | 64 | i, number of action blocks in the window |
//! | `block_size` | int ≥ 1 | 16 | k_b, admitted samples per block (window n = i·k_b ≤ 65536) |
//! | `admit_every` | int ≥ 1 | 1 | admit every n-th sample passed to `update` (decimation, §6.2) |
//! | `epsilon` | (0, 1) | 0.15 | c = Q_{1−ε}(\|y − γ\|) over the window (§6.4, §6.7) |
//! | `beta` | number > 0 or `"normalized"` | `"normalized"` | IMQ height; normalized: β² = σ²/2, so d = σ²(1 + t²/c²) (§5 item 9) |
//! | `c_floor_sigmas` | ≥ 0 | 3 | floor of c in units of the window's median noise σ (§6.4) |
//! | `c_min` | ≥ 0 | 1e-6 | absolute floor of c |
//! | `weight_center` | `prior`, `predictive` | `prior` | centre γ of the weights: the prior mean (the paper), or the model's prediction at the sample before learning it, with c² widened by that prediction's latent variance (§6.4's variant, a deviation; it rejects genuine surprises too, see `docs/results/rcagp-eval.md`) |
//! | `prior_mean` | number or array of p | 0 | constant prior mean m per output |
//! | `actions` | `weight_aware`, `random`, `uniform` | `weight_aware` | action entries of a new block (§6.2; random = the paper's N(0, 1/k_b)) |
//! | `seed` | int | 0 | seed of the random actions |
//! | `noise` | `sample`, `hyper` | `sample` | base noise ν of a point: `update`'s `noise_var`, or σ_n² of `hyper`; σ² = κ·ν with κ learned (init 1) |
//! | `background` | bool | true | block path and refits on the model's threads (real-time `update`); false: inside `update` (deterministic) |
//! | `queue_capacity` | 1..2²⁰ | window + block_size | samples waiting for the worker; when full the oldest is dropped (counted): older samples would leave the window anyway, and a burst (e.g. warming on a replay buffer) is caught up in one window's time |
//! | `refit_every_blocks` | int ≥ 0 | 64 | slow path: refit after this many new blocks (0: never) |
//! | `refit_steps` | int ≥ 1 | 10 | Adam steps per refit (on −ELBO/n, clipped at norm 2) |
//! | `refit_lr` | > 0 | 0.01 | Adam learning rate |
//! | `refit_lengthscales`, `refit_outputscale`, `refit_noise` | bool | true | which hyperparameters the slow path learns |
//! | `refit_max_duty` | (0, 1] | 0.25 | background mode: after a refit that took T, the next waits T·(1/duty − 1), capping the refit thread at this fraction of a core (a step costs O(n² d + p n i²), ≈ 0.1–0.3 s at n = 1024, d = 21, p = 7) |
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
#![warn(missing_docs)]

pub mod actions;
pub mod baselines;
pub mod config;
pub mod elbo;
pub mod error;
pub mod kernel;
pub mod mean;
mod model;
pub mod optim;
mod persist;
mod plugin;
pub mod posterior;
pub mod stream;
pub mod train;
pub mod weights;

pub use config::{Config, ValidConfig};
pub use error::RcagpError;
pub use model::RcaGp;
