//! gpn_skygp_model: SkyGP-Fast and SkyGP-Dense, streaming mixtures of local GP experts
//! (Yang et al., "Streaming Generated Gaussian Process Experts for Online Learning and
//! Control"; spec `specs/skygp.md` §§1–3, 8–10).
//!
//! Boundary: sees x ∈ R^d and y ∈ R^p only — nothing of robots, ROS or the plugin ABI.
//! Numerics (kernels, packed Cholesky, aggregation) come from `gpn_gp_core`. No feature
//! flags.
//!
//! Real-time: caches and scratch are allocated in [`SkyGp::new`], with the first chunk of
//! experts; further experts, up to `max_experts`, are made by a background thread before
//! they are needed and handed over without a lock wait, so memory follows what the model
//! holds ([`SkyGp::bytes_per_expert`] each). `predict` and `update` allocate nothing
//! (tested with a counting allocator), except that `update` makes an expert itself if that
//! thread is late ([`SkyGp::grown_late`] counts it; the result never depends on timing).
//!
//! # Example
//!
//! ```
//! use gpn_gp_core::model::OnlineModel;
//! let cfg = serde_json::json!({
//!     "variant": "dense", "preset": "recommended", "n_cal": 2,
//!     "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.5, 0.5]}
//! });
//! let mut gp = gpn_skygp_model::SkyGp::from_json(&cfg, 2, 1).unwrap();
//! let (mut mu, mut var) = ([0.0], [0.0]);
//! for k in 0..200 {
//!     let x = [(k as f64 * 0.1).sin(), (k as f64 * 0.07).cos()];
//!     gp.predict(&x, &mut mu, &mut var).unwrap();
//!     gp.update(&x, &[x[0] * x[1]], k as f64 * 0.01, &[0.01]).unwrap();
//! }
//! assert!(gp.stats().experts >= 1);
//! ```
//!
//! # Configuration (JSON keys)
//!
//! Every key is optional except `hyper`; unset keys take the preset's value; unknown keys
//! are rejected. The keys, their types, defaults (those of `preset: "recommended"`, the
//! spec's [R] choices; `preset: "reference"` follows the public reference code, anchors
//! §3.1) and meanings are declared once, in [`config_schema`], which the plugin hands to
//! the node through the ABI; `docs/plugins/skygp.md` is printed from it
//! (`gp-node plugins skygp --markdown`).
//!
//! Fixed constants (spec A21): pivot floor 1e-9 on rank-one extensions, 1e-6 jitter on a
//! Dense refactorisation, expert variances clamped ≥ 1e-12 (recommended only). Ties in
//! the expert ranking go to the lower list position (recommended) or the higher one
//! (reference, anchors §3.1). The prior prediction is (0, σ_f²).
//!
//! # Multi-output
//!
//! All p outputs share one expert structure (centers, assignment, list). Outputs whose
//! kernels have the same formula and lengthscales and the same σ_n²/σ_f² share one
//! factorisation per expert (the one of the first such output; the others rescale the
//! variance by σ_f,o²/σ_f,g²); other outputs get their own. Ranking, windows and
//! insertion use output 0's kernel. Without drift, `noise_var` passed to `update` is
//! checked and ignored: the configured σ_n² is the noise of every sample. With drift,
//! outputs share a factorisation only when their kernels, σ_f and σ_n are identical (the
//! injected variance is in each output's own units, so a σ_f rescaling no longer maps one
//! factor onto another).
//!
//! # Time decay
//!
//! ϑ_i = ρ^(clock − stamp_i), where an expert is stamped when selected (or created). With
//! `decay_clock = "seconds"` the clock is the latest `t_secs` given to `update` (never
//! moving backwards) and stamps are set in `update`; with `"steps"` the clock counts
//! selections and stamps are set in `predict`, as in the reference code.
//!
//! # Reference reproduction
//!
//! `preset: "reference"` follows the public reference code (GitHub zdf6288/SkyGP,
//! `models/SkyGP_rBCM.py`) rule for rule, including two quirks the spec does not list:
//! the insertion side (`ref_mirror`) compares a kernel that, through NumPy broadcasting,
//! only sees the first input coordinate (see `insert.rs`), and with `decay_clock = "steps"`
//! the weights of the experts visited by the update loop are reset (ϑ ← 1). With it the
//! first 500 KIN40K steps match the reference anchors to ~1e-12 and the full stream ends
//! with the reference's 303 (Fast) and 86 (Dense, 6,350 replacements) experts.
//!
//! # Drift (uncertainty injection)
//!
//! With a `drift` key (`{"model": "quadratic" | "linear" | "exponential", "kappa_per_s" |
//! "q_per_s" | "tau_s", "max_var_ratio", "refresh_hz"}`, parsed and documented by
//! `gpn_gp_core::drift`, spec `specs/tvgp.md` §1.2, §1.4, §6.1) the model forgets:
//!
//! * **Per-sample state.** Each stored sample s keeps its stamp t_s (`t_secs` of `update`)
//!   and a base variance σ_s² per output group. Its variance at time τ is
//!   v_s(τ) = `drift.var(σ_s², τ − t_s)`: σ_s² + κ²a², σ_s² + q·a or σ_s²·e^(a/τ₀).
//! * **Base variance: σ_s² = max(σ_n², `noise_var`)** per output (the largest over the
//!   outputs sharing a factor). The caller's value is honoured when it says a sample is
//!   noisier than usual (a fast joint, a pseudo-observation with its own σ̄², a torque
//!   estimated from motor current) but never lowers the noise below the fitted σ_n², which
//!   also carries model misfit the caller's sensor figure knows nothing about; lowering it
//!   would make experts overconfident and their factors ill-conditioned. It also keeps the
//!   limit exact: with callers that pass at most σ_n² and κ → 0, an expert is the one the
//!   model builds without drift. (Scaling σ_n² by a ratio of the caller's figures was the
//!   other candidate; it needs a reference noise the ABI does not give.)
//! * **Each expert is a heteroscedastic exact GP**: its factor is that of
//!   K + diag(v_s(τ_e)) at its factor time τ_e (no jitter unless that factorisation fails;
//!   then the Dense refactor's 1e-6), so μ_i and the latent σ_i² are the spec's §1.3
//!   posterior of the current function. A sample appended between refreshes enters with
//!   v = `drift.var(σ_s², τ_e − t_s)` (its base, as it is newer than τ_e), so the factor is
//!   always exactly that of v(τ_e) for all its rows (negative ages count as 0).
//! * **Refresh off the control thread.** A background thread (`skygp-drift`, joined when
//!   the model is dropped or the plugin destroyed) wakes at `refresh_hz`, takes the newest
//!   stamp seen as τ, and for every expert: copies its samples, drops those with
//!   v_s(τ) > `max_var_ratio`·σ_s² in every output group, and factors K + diag(v(τ)) with α.
//!   `predict` (and an `update` that does not reuse the prediction) adopts at most
//!   `ADOPT_PER_CALL` = 4 results per call: it removes the expired rows, swaps the factor and
//!   α in (buffer swaps, no copy), and re-adds by rank-one extension the rows appended
//!   since the copy. Changed experts are copied to the thread (at most `SYNC_PER_CALL` = 4
//!   per call) with `try_lock` only: if the thread is reading that expert, the copy is
//!   retried on a later call. So `predict`/`update` never wait and, in steady state,
//!   neither they nor the thread allocate (tested with a counting allocator over all
//!   threads). A result is dropped if its expert was recycled or had a row replaced
//!   (Dense) meanwhile; the next cycle redoes it. The first cycle runs one period after
//!   the model is created, cloned or loaded.
//! * **Retirement.** An expert whose samples have all expired leaves 𝒯; its slot goes to a
//!   free list that new experts use before recycling (evicting) any other.
//! * **Staleness.** Between refreshes a factor's old rows keep the variance of τ_e: the
//!   injection lags by at most one period plus the adoption delay.
//!   [`SkyGp::drift_refresh_now`] (not real-time) brings every expert to the newest stamp
//!   and waits for it; tests and offline evaluation use it for reproducible runs.
//! * **Aggregation and error bound.** Nothing changes in the aggregation rules: the
//!   injected noise acts through each expert's σ_i², which grows where its data are stale,
//!   so stale experts get less weight in (r)BCM/PoE and the Lemma-1 σ(x) = Σ ω_i σ_i grows
//!   there. Lemma 1's constants stay valid with σ_n² (every v_s ≥ σ_n², so
//!   ‖(K + diag v)⁻¹‖ ≤ 1/σ_n²). The injection treats the age errors of different samples
//!   as independent (spec §1.2); a persistent drift makes them correlated, so the
//!   coverage of ±2σ is approximate (measured in `docs/results/skygp-drift.md`).
//! * **SkyGP-Dense** with drift keeps no cached K: a replacement refactors K + diag(v(t_now))
//!   from the inputs (the factor time moves to the newest stamp).
//! * **Statistics** ([`SkyGp::drift_stats`]): refresh cycles and their duration, results
//!   adopted and dropped, samples expired, experts retired, deferred copies.
//! * **Memory.** Per expert slot, a copy of its samples for the thread and a result
//!   buffer with a second set of factors: about twice the factor memory of the model
//!   without drift (counted in `stats().memory_bytes` and in the pool-size check).
//! * **Save/load**: format 2 (see `persist.rs`); a model without drift still writes
//!   format 1, byte for byte as before. `Clone` starts a new refresh thread.
//! * `update` with drift requires a finite `t_secs` and finite `noise_var` ≥ 0.
//! * **A drift that adds nothing** (`{"model": "linear", "q_per_s": 0}`) is a per-sample
//!   noise variance: each sample keeps σ_s² = max(σ_n², its `noise_var`) and never expires.
//!   Its factors never go stale, so there is no refresh thread and no per-slot buffer, the
//!   pool grows as without drift, and SkyGP-Dense keeps K (with each sample's σ_s²) and
//!   updates a replaced row in O(N̄²) as without drift. RCaGP's experts layout uses it.
//!
//! Without the `drift` key (or with `"drift": null` or `{"model": "none"}`) the model is
//! exactly the one described above: predictions, saved states and memory are bit for bit
//! those of the model before the key existed (tested).
//!
//! # Memory bound
//!
//! At most `max_experts` experts exist. When a new expert is needed and the pool is full,
//! the least recently selected expert (`lru`) or the oldest one (`fifo`) that is not among
//! the current step's selection is removed from the list and its buffers are reused.
//! Each expert holds X (N̄×d), y and α (N̄ per output), one packed factor (N̄(N̄+1)/2) per
//! factor group and, for Dense, a packed copy of K per group so that a replacement
//! recomputes one row of kernel values instead of all of them.
#![warn(missing_docs)]

mod adopt;
pub mod config;
mod expert;
mod groups;
mod grow;
mod insert;
mod model;
mod persist;
mod plugin;
mod pool;
mod predict;
mod refresh;
mod replace;
mod ring;
mod runtime;
mod schema;
mod select;
mod shared;
mod update;
mod window;

pub use adopt::{ADOPT_PER_CALL, DriftStats, SYNC_PER_CALL};
pub use config::{Config, ValidConfig};
pub use model::SkyGp;
pub use schema::config_schema;
