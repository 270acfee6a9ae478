//! The [`SkyGp`] model: construction, introspection and the
//! [`OnlineModel`](gpn_gp_core::model::OnlineModel) implementation. The algorithm steps
//! live in `select.rs` (P1–P5), `predict.rs` (P6–P7) and `update.rs` (U1–U3).

use crate::config::{Config, DecayClock, Preset, ValidConfig};
use crate::groups::{self, Group, OutputMap};
use crate::grow::ExpertShape;
use crate::pool::Pool;
use crate::refresh::WorkerParams;
use crate::runtime::DriftRuntime;
use gpn_gp_core::cholesky::PackedCholesky;
use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel, Readiness, check_finite, check_len};

/// What the last prediction computed, reused by the following update at the same x
/// (spec §2.3 "optional cache", §2.4).
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    /// Input of the last selection.
    pub x: Vec<f64>,
    /// The next `update` may reuse this selection (same x, no structural change since).
    pub valid: bool,
    /// k and v below hold κ(X_i, x) and L_i⁻¹k for every selected expert and group.
    pub kv_ready: bool,
    /// I_agg: list positions of the selected experts, most similar first.
    pub sel: Vec<usize>,
    /// Selection scratch: candidate positions and scores (sorted).
    pub cand_pos: Vec<usize>,
    pub cand_score: Vec<f64>,
    /// Selection scratch: the kernel distance r² of every candidate of the window (NaN
    /// for a stale one), reserved for the largest window (2·W̄ + 1).
    pub cand_r2: Vec<f64>,
    /// k and v per (selected expert j, group g), at offset (j·G + g)·N̄.
    pub k: Vec<f64>,
    pub v: Vec<f64>,
    /// The shape of each group ([`groups::shapes`]), and one row of scaled squared
    /// distances per shape (at shape·N̄), shared by the groups of that shape; empty when
    /// every group has a shape of its own.
    pub shape_of: Vec<usize>,
    pub r2: Vec<f64>,
    /// Per output o and selected expert j, at o·Ncal + j: μ_i, σ_i² and ω_i.
    pub mu: Vec<f64>,
    pub var: Vec<f64>,
    pub w: Vec<f64>,
    /// Number of experts that entered the last aggregation.
    pub n_agg: usize,
}

/// Buffers for update steps.
#[derive(Debug, Clone)]
pub(crate) struct Scratch {
    pub b: Vec<f64>,
    /// A Dense row update's column and work space, 3·N̄.
    pub row: Vec<f64>,
    pub x_old: Vec<f64>,
    pub y_old: Vec<f64>,
    pub center: Vec<f64>,
    pub center_off: Vec<f64>,
    pub chol: PackedCholesky,
    pub protected: Vec<usize>,
    /// Drift: stamp and base variances (per group) of a replaced row, for an undo.
    pub t_old: f64,
    pub base_old: Vec<f64>,
}

/// SkyGP-Fast / SkyGP-Dense: a streaming mixture of local GP experts with p outputs
/// sharing one expert structure. See the crate root doc for the configuration.
#[derive(Debug, Clone)]
pub struct SkyGp {
    pub(crate) cfg: ValidConfig,
    pub(crate) groups: Vec<Group>,
    pub(crate) outputs: Vec<OutputMap>,
    /// Group of each output.
    pub(crate) out_group: Vec<usize>,
    pub(crate) pool: Pool,
    /// Position of the previous step's nearest expert, ν_prev.
    pub(crate) nu_prev: Option<usize>,
    /// Input of the previous selection, x_prev.
    pub(crate) x_prev: Vec<f64>,
    /// Decay clock (seconds or steps); ϑ_i = ρ^(clock − stamp_i).
    pub(crate) clock: f64,
    /// ln ρ (0 when decay is off).
    pub(crate) ln_rho: f64,
    /// ln ϑ̄.
    pub(crate) ln_theta: f64,
    pub(crate) cache: Cache,
    pub(crate) scratch: Scratch,
    pub(crate) samples_seen: u64,
    pub(crate) replacements: u64,
    /// Uncertainty injection (the `drift` key): refresh thread and its bookkeeping.
    pub(crate) drift: Option<DriftRuntime>,
}

impl SkyGp {
    /// Builds a model from a JSON config (see the crate root table) for inputs of
    /// dimension `input_dim` and `output_dim` outputs. Allocates every buffer the model
    /// will ever use.
    pub fn from_json(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        Self::new(Config::from_json(config)?.check(input_dim, output_dim)?).started()
    }

    /// Builds a model from a typed config.
    pub fn from_config(
        config: &Config,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        Self::new(config.check(input_dim, output_dim)?).started()
    }

    /// The model, or the error of a drift refresh thread that did not start.
    pub(crate) fn started(self) -> Result<Self, ModelError> {
        match self.drift.as_ref().and_then(|rt| rt.start_error.clone()) {
            Some(e) => Err(ModelError::Other(e)),
            None => Ok(self),
        }
    }

    /// Builds a model from a checked config. **Allocates** the whole expert pool and, with
    /// drift, spawns the refresh thread (which `Drop` stops and joins; if it cannot start,
    /// `predict` and `update` return that error).
    pub fn new(cfg: ValidConfig) -> Self {
        let (d, p, n_bar, n_cal) = (cfg.input_dim, cfg.output_dim, cfg.n_bar, cfg.n_cal);
        let (groups, outputs) = groups::build(&cfg.hyper, cfg.drift.is_some());
        let g = groups.len();
        let shape_of = groups::shapes(&groups);
        let n_shapes = shape_of.iter().max().map_or(0, |s| s + 1);
        let out_group = outputs.iter().map(|m| m.group).collect();
        let decay = cfg.use_time_decay && cfg.rho_decay < 1.0;
        let drift = cfg.drift.map(|drift| {
            DriftRuntime::start(
                WorkerParams {
                    drift,
                    groups: groups.clone(),
                    out_group: outputs.iter().map(|m| m.group).collect(),
                    n_bar,
                    d,
                    p,
                },
                cfg.max_experts,
            )
        });
        Self {
            drift,
            pool: Pool::new(
                cfg.max_experts,
                ExpertShape {
                    n_bar,
                    d,
                    p,
                    n_groups: g,
                    // With a growing drift the Dense refactor recomputes K with the inflated
                    // diagonal; a drift that adds nothing keeps K with each sample's noise.
                    keep_k: cfg.variant == crate::config::Variant::Dense
                        && cfg.drift.is_none_or(|d| !d.grows()),
                    drift: cfg.drift.is_some(),
                    all_at_once: cfg.drift.is_some_and(|d| d.grows()),
                },
            ),
            nu_prev: None,
            x_prev: vec![0.0; d],
            clock: 0.0,
            ln_rho: if decay { cfg.rho_decay.ln() } else { 0.0 },
            ln_theta: cfg.theta_bar.ln(),
            cache: Cache {
                x: vec![0.0; d],
                valid: false,
                kv_ready: false,
                sel: Vec::with_capacity(n_cal),
                cand_pos: Vec::with_capacity(n_cal + 1),
                cand_score: Vec::with_capacity(n_cal + 1),
                cand_r2: Vec::with_capacity(2 * cfg.w_bar + 1),
                k: vec![0.0; n_cal * g * n_bar],
                v: vec![0.0; n_cal * g * n_bar],
                r2: vec![0.0; if n_shapes < g { n_shapes * n_bar } else { 0 }],
                shape_of,
                mu: vec![0.0; n_cal * p],
                var: vec![0.0; n_cal * p],
                w: vec![0.0; n_cal * p],
                n_agg: 0,
            },
            scratch: Scratch {
                b: vec![0.0; n_bar],
                row: vec![0.0; 3 * n_bar],
                x_old: vec![0.0; d],
                y_old: vec![0.0; p],
                center: vec![0.0; d],
                center_off: vec![0.0; d],
                chol: PackedCholesky::with_capacity(n_bar),
                protected: Vec::with_capacity(n_cal),
                t_old: 0.0,
                base_old: vec![0.0; if cfg.drift.is_some() { g } else { 0 }],
            },
            samples_seen: 0,
            replacements: 0,
            groups,
            outputs,
            out_group,
            cfg,
        }
    }

    /// The resolved configuration.
    pub fn config(&self) -> &ValidConfig {
        &self.cfg
    }

    /// Number of experts in the list 𝒯.
    pub fn n_experts(&self) -> usize {
        self.pool.len()
    }

    /// Number of distinct factorisations per expert (1 when all outputs share one).
    pub fn n_factor_groups(&self) -> usize {
        self.groups.len()
    }

    /// List positions of the experts chosen by the last selection (the last `predict`,
    /// or an `update` without a preceding `predict` at its x), most similar first.
    pub fn last_selected(&self) -> &[usize] {
        &self.cache.sel
    }

    /// Per-expert means μ_i of output `o` in the last prediction (order of
    /// [`Self::last_selected`]; empty if the last prediction was a prior).
    pub fn last_expert_means(&self, o: usize) -> &[f64] {
        self.per_output(&self.cache.mu, o)
    }

    /// Per-expert latent variances σ_i² of output `o` in the last prediction.
    pub fn last_expert_vars(&self, o: usize) -> &[f64] {
        self.per_output(&self.cache.var, o)
    }

    /// Aggregation weights ω_i (μ̃ = Σ ω_i μ_i) of output `o` in the last prediction. For
    /// the error bound σ(x) = Σ ω_i σ_i use these with [`Self::last_expert_vars`].
    pub fn last_weights(&self, o: usize) -> &[f64] {
        self.per_output(&self.cache.w, o)
    }

    fn per_output<'a>(&self, buf: &'a [f64], o: usize) -> &'a [f64] {
        let n_cal = self.cfg.n_cal;
        &buf[o * n_cal..o * n_cal + self.cache.n_agg]
    }

    /// Dense replacements accepted so far.
    pub fn replacements(&self) -> u64 {
        self.replacements
    }

    /// Experts recycled because the pool (`max_experts`) was full.
    pub fn evictions(&self) -> u64 {
        self.pool.evictions
    }

    /// Bytes of one expert's buffers (data, factors, cached K, centers).
    pub fn bytes_per_expert(&self) -> usize {
        self.pool.bytes_per_expert()
    }

    /// Experts made so far (the pool grows in chunks up to `max_experts`).
    pub fn experts_made(&self) -> usize {
        self.pool.experts.len()
    }

    /// Experts the pool made on the calling thread because its grower thread was late
    /// (each an allocation in `update`; 0 when the grower keeps up).
    pub fn grown_late(&self) -> u64 {
        self.pool.grown_late
    }

    /// Points held by the expert at list position `pos` (None past the end).
    pub fn expert_len(&self, pos: usize) -> Option<usize> {
        (pos < self.pool.len()).then(|| self.pool.at(pos).n)
    }

    /// Inputs (row-major, n×d) and targets of output `o` held by the expert at list
    /// position `pos`, and its center. For tests and diagnostics.
    pub fn expert_data(&self, pos: usize, o: usize) -> Option<(&[f64], &[f64], &[f64])> {
        if pos >= self.pool.len() || o >= self.cfg.output_dim {
            return None;
        }
        let e = self.pool.at(pos);
        let (d, nb) = (self.cfg.input_dim, self.cfg.n_bar);
        Some((&e.x[..e.n * d], &e.y[o * nb..o * nb + e.n], &e.center))
    }

    /// Cholesky factor of output group `g` of the expert at list position `pos`. For
    /// tests and diagnostics.
    pub fn expert_factor(&self, pos: usize, g: usize) -> Option<&PackedCholesky> {
        if pos >= self.pool.len() || g >= self.groups.len() {
            return None;
        }
        Some(&self.pool.at(pos).chol[g])
    }

    fn check_x(&self, x: &[f64]) -> Result<(), ModelError> {
        check_len("x", x, self.cfg.input_dim)?;
        check_finite("x", x)
    }

    pub(crate) fn check_drift_started(&self) -> Result<(), ModelError> {
        match self.drift.as_ref().and_then(|rt| rt.start_error.as_ref()) {
            Some(e) => Err(ModelError::Other(e.clone())),
            None => Ok(()),
        }
    }

    fn check_p(&self, what: &'static str, s: &[f64]) -> Result<(), ModelError> {
        check_len(what, s, self.cfg.output_dim)
    }
}

impl OnlineModel for SkyGp {
    fn input_dim(&self) -> usize {
        self.cfg.input_dim
    }

    fn output_dim(&self) -> usize {
        self.cfg.output_dim
    }

    /// Real-time: no allocation, lock or I/O.
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.check_x(x)?;
        self.check_p("mean", mean)?;
        self.check_p("var", var)?;
        self.check_drift_started()?;
        self.predict_impl(x, mean, var);
        Ok(())
    }

    /// Real-time: no allocation, lock or I/O. Without drift `noise_var` is checked for
    /// length and otherwise ignored (the configured σ_n² is used); with drift it must be
    /// finite and ≥ 0 and sets the sample's base variance (crate doc, "Drift"). `t_secs`
    /// drives the time decay when `decay_clock = "seconds"` and, with drift, the ages.
    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        self.check_x(x)?;
        self.check_p("y", y)?;
        check_finite("y", y)?;
        self.check_p("noise_var", noise_var)?;
        if (self.cfg.decay_clock == DecayClock::Seconds || self.drift.is_some())
            && !t_secs.is_finite()
        {
            return Err(ModelError::NonFinite {
                what: "t_secs",
                index: 0,
            });
        }
        if self.drift.is_some() {
            self.check_drift_started()?;
            check_finite("noise_var", noise_var)?;
            if noise_var.iter().any(|&v| v < 0.0) {
                return Err(ModelError::Other("skygp: noise_var must be ≥ 0".into()));
            }
        }
        self.update_impl(x, y, t_secs, noise_var)
    }

    fn stats(&self) -> ModelStats {
        let c = &self.cache;
        let s = &self.scratch;
        let extra = 8
            * (c.x.len()
                + c.k.len()
                + c.v.len()
                + c.mu.len()
                + c.var.len()
                + c.w.len()
                + s.b.len()
                + s.row.len())
            + s.chol.memory_bytes()
            + 8 * s.base_old.len()
            + self.drift.as_ref().map_or(0, |rt| rt.shared_bytes);
        ModelStats {
            samples_seen: self.samples_seen,
            samples_stored: self.pool.points_stored(),
            experts: self.pool.len() as u64,
            memory_bytes: (self.pool.memory_bytes() + extra) as u64,
        }
    }

    /// Every output answers from the prior until a sample is stored (and again after drift
    /// expired them all); SkyGP learns in `update`, so it is never behind. Real-time.
    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        from_prior.fill(self.pool.points_stored() == 0);
        Some(Readiness { samples_behind: 0 })
    }
}

impl SkyGp {
    /// True for the reference preset (ties → higher list position first).
    pub(crate) fn reference_ties(&self) -> bool {
        self.cfg.preset == Preset::Reference
    }
}
