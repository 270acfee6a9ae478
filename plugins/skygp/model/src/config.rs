//! Configuration: JSON-deserialisable [`Config`] (every key optional, on top of a preset)
//! → [`Config::check`] → [`ValidConfig`] (every value resolved and validated).
//!
//! Key names, types, defaults and meanings are declared once in `schema.rs` (`config_schema`).

use gpn_gp_core::aggregate::Aggregation;
use gpn_gp_core::drift::Drift;
use gpn_gp_core::kernel::{ArdKernel, KernelKind};
use gpn_gp_core::model::ModelError;
use serde::Deserialize;

use gpn_gp_core::hyper_config::HYPER_MISSING;

/// SkyGP-Fast (never evicts data) or SkyGP-Dense (full experts may swap a point in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Rank-one extensions only; a new expert when the Ncal nearest are full.
    Fast,
    /// Full experts may replace a stored point (spec §3.6.1), with an O(N̄³) refactor.
    Dense,
}

/// Which set of defaults the unset keys take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// The spec's [R] choices.
    #[default]
    Recommended,
    /// The public reference code's rules, bit for bit where observable (anchors §3.1).
    Reference,
}

/// Candidate-window formula (spec §3.4 P2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowMode {
    /// W = min(W̄, ⌊exp((1/κ(x_prev, x))/ϱ)⌋), candidates ν ± W.
    Paper,
    /// s = ⌊min(W̄, exp(‖(x − x_prev) ⊘ ℓ‖/ϱ))⌋, candidates [ν − s/2, ν + s/2] (integer halves).
    Reference,
}

/// SkyGP-Dense replacement test (spec §3.6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplaceRule {
    /// Kernel form of the reference logic: evict argmin Δ(s) if Δ < 0 (farthest point
    /// before the first drop).
    KernelMin,
    /// Eq. 6 literally: D_temp gate, max-Δ test, evict the farthest point.
    PaperLiteral,
    /// The reference code: unscaled Euclidean distances, argmax of (d_keep − d_drop).
    EuclidRef,
}

/// Similarity used to rank experts and to place new ones (ablation KD/ED).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Distance {
    /// κ(x, c): nearest = largest kernel value.
    Kernel,
    /// Unscaled Euclidean ‖x − c‖.
    Euclid,
}

/// Side on which a new expert is inserted next to the nearest one (spec §3.6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsertSide {
    /// Between ν_nr and its more similar neighbour.
    Paper,
    /// The reference code's mirror image.
    RefMirror,
}

/// ν_prev after a new expert was created (spec §3.5 U3, A6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NuPrevRule {
    /// [R] ν_prev ← the new expert's position.
    NewExpert,
    /// [C] keep the (possibly shifted) index.
    Stale,
}

/// Behaviour when the staleness filter leaves no candidate (spec §3.4 P4, A8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmptyCandidates {
    /// [R] predict the prior (0, σ_f²) and create a new expert for the point.
    Prior,
    /// [C] predict (0, 10) and let the update reuse the previous selection (its list
    /// positions; k and v are recomputed, never reused from another input).
    Reference,
}

/// What "one step" of time decay is (ϑ ← ρ^Δt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecayClock {
    /// Δt in seconds from the `t_secs` passed to `update`.
    Seconds,
    /// One step per prediction (per selection), as the reference code does.
    Steps,
}

/// Which expert is recycled when the pool is full and a new expert is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Eviction {
    /// Least recently selected (or created); ties → older creation.
    Lru,
    /// Oldest created.
    Fifo,
}

/// Kernel formula name in the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelName {
    /// ARD squared exponential.
    Se,
    /// ARD Matérn 3/2.
    Matern32,
    /// ARD Matérn 5/2.
    Matern52,
}

impl From<KernelName> for KernelKind {
    fn from(k: KernelName) -> Self {
        match k {
            KernelName::Se => KernelKind::SquaredExponential,
            KernelName::Matern32 => KernelKind::Matern32,
            KernelName::Matern52 => KernelKind::Matern52,
        }
    }
}

/// Hyperparameters of one output (`gpn_gp_core::hyper_config`), with its own kernel formula
/// optionally (defaults to the top-level `kernel`).
pub type HyperEntry = gpn_gp_core::hyper_config::HyperEntry<KernelName>;

/// The `hyper` key: one entry shared by all outputs, or one per output.
pub type Hyper = gpn_gp_core::hyper_config::Hyper<KernelName>;

/// The raw configuration: every key optional; unset keys take the preset's value.
/// Unknown keys are rejected.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)] // Keys are documented in the schema (schema.rs).
pub struct Config {
    pub preset: Option<Preset>,
    pub variant: Option<Variant>,
    pub n_bar: Option<usize>,
    pub n_cal: Option<usize>,
    pub w_bar: Option<usize>,
    pub rho_window: Option<f64>,
    pub rho_decay: Option<f64>,
    pub theta_bar: Option<f64>,
    pub aggregation: Option<String>,
    pub window_mode: Option<WindowMode>,
    pub replace_rule: Option<ReplaceRule>,
    pub distance: Option<Distance>,
    pub insert_side: Option<InsertSide>,
    pub nu_prev_rule: Option<NuPrevRule>,
    pub empty_candidates: Option<EmptyCandidates>,
    pub decay_clock: Option<DecayClock>,
    pub use_drop_center: Option<bool>,
    pub use_adaptive_window: Option<bool>,
    pub use_time_decay: Option<bool>,
    pub max_experts: Option<usize>,
    pub eviction: Option<Eviction>,
    pub kernel: Option<KernelName>,
    pub hyper: Option<Hyper>,
    /// Uncertainty injection: the shared `drift` object of `gpn_gp_core::drift` (`null` or
    /// absent: off). Parsed by [`Drift::from_config`] in [`Config::check`].
    pub drift: Option<serde_json::Value>,
}

/// One output's resolved kernel and noise.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputHyper {
    /// The kernel (σ_f inside).
    pub kernel: ArdKernel,
    /// Noise variance σ_n².
    pub noise_var: f64,
}

/// A checked configuration with every value resolved. Build it with [`Config::check`].
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // Fields mirror the keys of the schema (schema.rs).
pub struct ValidConfig {
    pub input_dim: usize,
    pub output_dim: usize,
    pub preset: Preset,
    pub variant: Variant,
    pub n_bar: usize,
    pub n_cal: usize,
    pub w_bar: usize,
    pub rho_window: f64,
    pub rho_decay: f64,
    pub theta_bar: f64,
    pub aggregation: Aggregation,
    pub window_mode: WindowMode,
    pub replace_rule: ReplaceRule,
    pub distance: Distance,
    pub insert_side: InsertSide,
    pub nu_prev_rule: NuPrevRule,
    pub empty_candidates: EmptyCandidates,
    pub decay_clock: DecayClock,
    pub use_drop_center: bool,
    pub use_adaptive_window: bool,
    pub use_time_decay: bool,
    pub max_experts: usize,
    pub eviction: Eviction,
    /// Per output (length p).
    pub hyper: Vec<OutputHyper>,
    /// Lower clamp on an expert's latent variance: 1e-12 (recommended, spec A21) or none
    /// (−∞, reference). Not a key.
    pub expert_var_floor: f64,
    /// Uncertainty injection (the `drift` key), `None` when off. Kept last: a model without
    /// drift writes the same configuration text into its saved state as before the key
    /// existed (see `persist.rs`).
    pub drift: Option<Drift>,
}

/// Floor on the squared pivot of a rank-one extension (reference code).
pub const PIVOT_FLOOR: f64 = 1e-9;
/// Diagonal jitter added on a full refactorisation (reference code).
pub const REFACTOR_JITTER: f64 = 1e-6;
/// A Dense replacement updates the factor's row in O(N̄²) instead of refactoring in
/// O(N̄³); every this many replacements of an expert (counted by n_off, so a saved and
/// restored model decides alike) it refactors from K instead, so that rounding of the
/// updates does not accumulate.
pub const DENSE_REFACTOR_EVERY: usize = 16;
/// A row update whose new pivot² falls below this fraction of the old one is abandoned for
/// a full refactorisation (the downdate would lose accuracy there).
pub const ROW_UPDATE_MIN_PIVOT_RATIO: f64 = 1e-8;
/// Largest pool the config accepts, in bytes of expert buffers.
pub const MAX_POOL_BYTES: usize = 4 << 30;

/// `rec` for the recommended preset, `refr` for the reference preset.
fn pick<T>(reference: bool, rec: T, refr: T) -> T {
    if reference { refr } else { rec }
}

fn bad(msg: String) -> ModelError {
    ModelError::Config(msg)
}

impl Config {
    /// Parses JSON; unknown keys and wrongly typed values are rejected with serde's message.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, ModelError> {
        Self::deserialize(value).map_err(|e| bad(format!("skygp: {e}")))
    }

    /// Resolves the preset and validates every value for inputs of dimension
    /// `input_dim` and `output_dim` outputs.
    pub fn check(&self, input_dim: usize, output_dim: usize) -> Result<ValidConfig, ModelError> {
        if input_dim == 0 || output_dim == 0 {
            return Err(bad(format!(
                "skygp: input_dim and output_dim must be ≥ 1, got {input_dim} and {output_dim}"
            )));
        }
        let preset = self.preset.unwrap_or_default();
        let reference = preset == Preset::Reference;
        let variant = self.variant.unwrap_or(Variant::Fast);
        let aggregation = match &self.aggregation {
            None => Aggregation::BCMRef,
            Some(name) => Aggregation::from_name(name).ok_or_else(|| {
                bad(format!(
                    "skygp: aggregation \"{name}\" unknown; expected one of moe, poe, gpoe, bcm, rbcm, moe_ref, gpoe_ref, bcm_ref"
                ))
            })?,
        };
        let v = ValidConfig {
            input_dim,
            output_dim,
            preset,
            variant,
            n_bar: self.n_bar.unwrap_or(50),
            n_cal: self.n_cal.unwrap_or(4),
            w_bar: self.w_bar.unwrap_or(40),
            rho_window: self.rho_window.unwrap_or(match variant {
                Variant::Fast => 0.04,
                Variant::Dense => 0.03,
            }),
            rho_decay: self.rho_decay.unwrap_or(pick(reference, 0.995, 1.0)),
            theta_bar: self.theta_bar.unwrap_or(1e-3),
            aggregation,
            window_mode: self.window_mode.unwrap_or(WindowMode::Reference),
            replace_rule: self.replace_rule.unwrap_or(pick(
                reference,
                ReplaceRule::KernelMin,
                ReplaceRule::EuclidRef,
            )),
            distance: self.distance.unwrap_or(Distance::Kernel),
            insert_side: self.insert_side.unwrap_or(pick(
                reference,
                InsertSide::Paper,
                InsertSide::RefMirror,
            )),
            nu_prev_rule: self.nu_prev_rule.unwrap_or(pick(
                reference,
                NuPrevRule::NewExpert,
                NuPrevRule::Stale,
            )),
            empty_candidates: self.empty_candidates.unwrap_or(pick(
                reference,
                EmptyCandidates::Prior,
                EmptyCandidates::Reference,
            )),
            decay_clock: self.decay_clock.unwrap_or(pick(
                reference,
                DecayClock::Seconds,
                DecayClock::Steps,
            )),
            use_drop_center: self.use_drop_center.unwrap_or(true),
            use_adaptive_window: self.use_adaptive_window.unwrap_or(true),
            use_time_decay: self.use_time_decay.unwrap_or(true),
            max_experts: self.max_experts.unwrap_or(1024),
            eviction: self.eviction.unwrap_or(Eviction::Lru),
            hyper: self.resolve_hyper(input_dim, output_dim)?,
            expert_var_floor: pick(reference, 1e-12, f64::NEG_INFINITY),
            drift: self.resolve_drift()?,
        };
        v.validate()?;
        Ok(v)
    }

    fn resolve_drift(&self) -> Result<Option<Drift>, ModelError> {
        let Some(value) = &self.drift else {
            return Ok(None);
        };
        let mut wrapper = serde_json::Map::new();
        wrapper.insert("drift".into(), value.clone());
        Drift::from_config(&serde_json::Value::Object(wrapper))
            .map_err(|e| bad(format!("skygp: {e}")))
    }

    fn resolve_hyper(&self, d: usize, p: usize) -> Result<Vec<OutputHyper>, ModelError> {
        let default_kind = self.kernel.unwrap_or(KernelName::Se);
        let entries: Vec<&HyperEntry> = self
            .hyper
            .as_ref()
            .ok_or_else(|| bad(format!("skygp: {HYPER_MISSING}")))?
            .per_output(p)
            .map_err(|e| bad(format!("skygp: {e}")))?;
        let mut out = Vec::with_capacity(p);
        for (o, e) in entries.into_iter().enumerate() {
            if e.lengthscales.len() != d {
                return Err(bad(format!(
                    "skygp: hyper[{o}].lengthscales has {} values, expected input_dim = {d}",
                    e.lengthscales.len()
                )));
            }
            if !(e.sigma_n.is_finite() && e.sigma_n >= 0.0) {
                return Err(bad(format!(
                    "skygp: hyper[{o}].sigma_n must be finite and ≥ 0, found {}",
                    e.sigma_n
                )));
            }
            let kind = KernelKind::from(e.kernel.unwrap_or(default_kind));
            let kernel = ArdKernel::new(kind, e.sigma_f, &e.lengthscales)
                .map_err(|err| bad(format!("skygp: hyper[{o}]: {err}")))?;
            out.push(OutputHyper {
                kernel,
                noise_var: e.sigma_n * e.sigma_n,
            });
        }
        Ok(out)
    }
}

impl ValidConfig {
    fn validate(&self) -> Result<(), ModelError> {
        let positive = |name: &str, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(bad(format!(
                    "skygp: {name} must be finite and > 0, found {x}"
                )))
            }
        };
        if self.n_bar < 1 || self.n_bar > 4096 {
            return Err(bad(format!(
                "skygp: n_bar must be in 1..=4096, found {}",
                self.n_bar
            )));
        }
        if self.n_cal < 1 {
            return Err(bad("skygp: n_cal must be ≥ 1, found 0".into()));
        }
        if self.w_bar < 1 {
            return Err(bad("skygp: w_bar must be ≥ 1, found 0".into()));
        }
        positive("rho_window", self.rho_window)?;
        positive("rho_decay", self.rho_decay)?;
        if self.rho_decay > 1.0 {
            return Err(bad(format!(
                "skygp: rho_decay must be in (0, 1], found {}",
                self.rho_decay
            )));
        }
        if !(self.theta_bar > 0.0 && self.theta_bar < 1.0) {
            return Err(bad(format!(
                "skygp: theta_bar must be in (0, 1), found {}",
                self.theta_bar
            )));
        }
        if self.max_experts < 2 || self.max_experts <= self.n_cal {
            return Err(bad(format!(
                "skygp: max_experts must be ≥ 2 and > n_cal ({}), found {}",
                self.n_cal, self.max_experts
            )));
        }
        if self.drift.is_some()
            && let Some(o) = self.hyper.iter().position(|h| h.noise_var <= 0.0)
        {
            return Err(bad(format!(
                "skygp: drift needs sigma_n > 0 (the injected variance is relative to it), hyper[{o}].sigma_n is 0"
            )));
        }
        let bytes = self
            .max_experts
            .saturating_mul(self.expert_bytes_estimate());
        if bytes > MAX_POOL_BYTES {
            return Err(bad(format!(
                "skygp: the expert pool would need {bytes} bytes (max_experts {} × n_bar {}); limit is {MAX_POOL_BYTES}",
                self.max_experts, self.n_bar
            )));
        }
        Ok(())
    }

    /// Upper bound on one expert's buffer bytes (every output with its own factor). With
    /// drift, each sample's stamp and base variances and, for a drift that grows, each slot's
    /// shared input copy and result buffer (a second factor).
    fn expert_bytes_estimate(&self) -> usize {
        let (n, d, p) = (self.n_bar, self.input_dim, self.output_dim);
        let front = 8 * (n * d + 2 * n * p + p * n * (n + 1) / 2 + 2 * d);
        match self.drift {
            None => front,
            Some(dr) if !dr.grows() => front + 8 * (n + n * p),
            Some(_) => front + 8 * (n * d + 2 * n * p + 2 * n + 2 * p * n + p * n * (n + 1) / 2),
        }
    }
}
