//! Configuration of the streaming model: JSON-deserialisable [`Config`] (every key optional
//! except `hyper`) → [`Config::check`] → [`ValidConfig`] (every value resolved and checked).
//!
//! Keys, types, defaults and meanings are declared once in `schema.rs` (`config_schema`).

use serde::Deserialize;

use gpn_gp_core::drift::Drift;
use gpn_gp_core::hyper_config::HYPER_MISSING;
use gpn_gp_core::model::ModelError;

use crate::kernel::KernelKind;
use crate::weights::{Beta, WeightProfile};

/// Hyperparameters of one output (`gpn_gp_core::hyper_config`); its `kernel` must agree
/// with the top-level `kernel` if given.
pub type HyperEntry = gpn_gp_core::hyper_config::HyperEntry<String>;

/// The `hyper` key: one entry for every output, or one per output.
pub type Hyper = gpn_gp_core::hyper_config::Hyper<String>;

/// The `beta` key: a number or `"normalized"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum BetaValue {
    /// A fixed β.
    Number(f64),
    /// `"normalized"` (β² = σ²/2 per point).
    Name(String),
}

/// The `prior_mean` key: one constant or one per output.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum PriorMean {
    /// The same constant for every output.
    Shared(f64),
    /// One constant per output.
    PerOutput(Vec<f64>),
}

/// Where the IMQ weights are centred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightCenter {
    /// The prior mean (the paper).
    Prior,
    /// The model's own prediction at the sample's input just before the sample is learned,
    /// with the threshold widened by that prediction's latent variance (spec §6.4; a
    /// documented deviation).
    Predictive,
}

/// Which model the robust weights are applied in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// The computation-aware block window (the paper's model, spec §6).
    Window,
    /// SkyGP's local experts, each sample weighted before it is learned
    /// (`crate::experts`; ADR 0018). The default: on the robot it tracks within 1.2× of
    /// SkyGP-Dense at its cost, where the window misses (`docs/results/models-in-the-loop.md`).
    #[default]
    Experts,
}

/// How the action entries of a new block are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionInit {
    /// s_l ∝ relative precision, unit norm per block (spec §6.2).
    WeightAware,
    /// N(0, 1/k_b) (the paper's init).
    Random,
    /// All entries 1/√k_b (a plain block average).
    Uniform,
}

/// Which noise variance a sample gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// σ_l² = κ · `noise_var` given to `update` (the general per-point path).
    Sample,
    /// σ_l² = κ · σ_n² of the hyperparameters.
    Hyper,
}

/// Least time between admitted samples by default, s: the spec's suggestion for a robot
/// (§6.7: at 1 kHz consecutive samples are nearly identical, and every 5 ms the window of
/// 1024 holds about 5 s of motion). A stream whose samples are further apart (`gp-node
/// eval` steps 1 s) admits every sample.
pub const DEFAULT_ADMIT_INTERVAL_S: f64 = 0.005;

/// The raw configuration. Unknown keys are rejected.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)] // Keys are documented in the schema (schema.rs).
pub struct Config {
    pub hyper: Option<Hyper>,
    pub kernel: Option<String>,
    pub blocks: Option<usize>,
    pub block_size: Option<usize>,
    pub admit_every: Option<usize>,
    pub admit_interval_s: Option<f64>,
    pub epsilon: Option<f64>,
    pub beta: Option<BetaValue>,
    pub c_floor_sigmas: Option<f64>,
    pub c_min: Option<f64>,
    pub weight_center: Option<WeightCenter>,
    pub weight_profile: Option<WeightProfile>,
    pub prior_mean: Option<PriorMean>,
    pub actions: Option<ActionInit>,
    pub seed: Option<u64>,
    pub noise: Option<NoiseSource>,
    pub background: Option<bool>,
    pub queue_capacity: Option<usize>,
    pub threshold_refresh_blocks: Option<usize>,
    pub refit_every_blocks: Option<usize>,
    pub refit_steps: Option<usize>,
    pub refit_blocks: Option<usize>,
    pub refit_lr: Option<f64>,
    pub refit_lengthscales: Option<bool>,
    pub refit_outputscale: Option<bool>,
    pub refit_noise: Option<bool>,
    pub refit_max_duty: Option<f64>,
    /// The shared drift configuration (`gpn_gp_core::drift`), parsed in [`Config::check`].
    pub drift: Option<serde_json::Value>,
    /// Where the weights are applied (`crate::experts` for `experts`); [`Config::check`]
    /// resolves the window's keys only.
    pub layout: Option<Layout>,
    /// `layout: experts`: the local experts' SkyGP keys (without `hyper` and `drift`).
    pub experts: Option<gpn_skygp_model::Config>,
    /// `layout: experts`: samples whose |t| the thresholds are the quantile of.
    pub threshold_window: Option<usize>,
    /// `layout: experts`: samples between threshold refreshes.
    pub threshold_refresh_samples: Option<usize>,
}

/// A checked configuration.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // Fields mirror the keys of the schema (schema.rs).
pub struct ValidConfig {
    pub input_dim: usize,
    pub output_dim: usize,
    pub kind: KernelKind,
    /// Shared lengthscales (d).
    pub lengthscales: Vec<f64>,
    /// s_f,o² per output.
    pub outputscale: Vec<f64>,
    /// σ_n,o² per output.
    pub noise_var: Vec<f64>,
    pub blocks: usize,
    pub block_size: usize,
    pub admit_every: usize,
    /// Least time between admitted samples, s (0: every one `admit_every` lets through).
    pub admit_interval_s: f64,
    pub epsilon: f64,
    pub beta: Beta,
    pub c_floor_sigmas: f64,
    pub c_min: f64,
    pub weight_center: WeightCenter,
    pub weight_profile: WeightProfile,
    pub prior_mean: Vec<f64>,
    pub actions: ActionInit,
    pub seed: u64,
    pub noise: NoiseSource,
    pub background: bool,
    pub queue_capacity: usize,
    /// Full rebuilds (new thresholds c_o) every this many committed blocks; between them a
    /// commit updates the factors in O(i²).
    pub threshold_refresh_blocks: usize,
    pub refit_every_blocks: usize,
    pub refit_steps: usize,
    /// Newest blocks a refit sees (0: the whole window).
    pub refit_blocks: usize,
    pub refit_lr: f64,
    pub refit_lengthscales: bool,
    pub refit_outputscale: bool,
    pub refit_noise: bool,
    pub refit_max_duty: f64,
    /// Uncertainty injection (the `drift` key); None: none.
    pub drift: Option<Drift>,
}

/// Largest window (blocks × block size) the config accepts.
pub const MAX_WINDOW: usize = 1 << 16;
/// Most blocks the config accepts.
pub const MAX_BLOCKS: usize = 2048;

fn bad(msg: String) -> ModelError {
    ModelError::Config(format!("rcagp: {msg}"))
}

/// The keys of `layout: window` only (the block window and its background path).
pub const WINDOW_ONLY: &[&str] = &[
    "blocks",
    "block_size",
    "admit_every",
    "admit_interval_s",
    "beta",
    "actions",
    "seed",
    "background",
    "queue_capacity",
    "threshold_refresh_blocks",
    "refit_every_blocks",
    "refit_steps",
    "refit_blocks",
    "refit_lr",
    "refit_lengthscales",
    "refit_outputscale",
    "refit_noise",
    "refit_max_duty",
];

/// The keys of `layout: experts` only.
pub const EXPERTS_ONLY: &[&str] = &["experts", "threshold_window", "threshold_refresh_samples"];

impl Config {
    /// Parses JSON; unknown keys and wrongly typed values are rejected.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, ModelError> {
        Self::deserialize(value).map_err(|e| bad(e.to_string()))
    }

    /// Resolves defaults and validates for `input_dim` inputs and `output_dim` outputs.
    pub fn check(&self, input_dim: usize, output_dim: usize) -> Result<ValidConfig, ModelError> {
        let (d, p) = (input_dim, output_dim);
        if d == 0 || p == 0 {
            return Err(bad(format!(
                "input_dim and output_dim must be ≥ 1, got {d} and {p}"
            )));
        }
        if self.layout.unwrap_or_default() == Layout::Window {
            let given = [
                self.experts.is_some(),
                self.threshold_window.is_some(),
                self.threshold_refresh_samples.is_some(),
            ];
            if let Some(key) = EXPERTS_ONLY
                .iter()
                .zip(given)
                .find_map(|(k, set)| set.then_some(k))
            {
                return Err(bad(format!(
                    "{key} belongs to layout \"experts\"; this configuration's layout is \"window\""
                )));
            }
        }
        let (kernel_name, kind) = self.resolve_kernel()?;
        let hyper = self.resolve_hyper(d, p, kernel_name, kind)?;
        let beta = self.resolve_beta()?;
        let prior_mean = self.resolve_prior_mean(p)?;
        let blocks = self.blocks.unwrap_or(64);
        let block_size = self.block_size.unwrap_or(16);
        let v = ValidConfig {
            input_dim: d,
            output_dim: p,
            kind,
            lengthscales: hyper.lengthscales,
            outputscale: hyper.outputscale,
            noise_var: hyper.noise_var,
            blocks,
            block_size,
            admit_every: self.admit_every.unwrap_or(1),
            admit_interval_s: self.admit_interval_s.unwrap_or(DEFAULT_ADMIT_INTERVAL_S),
            epsilon: self.epsilon.unwrap_or(0.15),
            beta,
            c_floor_sigmas: self.c_floor_sigmas.unwrap_or(3.0),
            c_min: self.c_min.unwrap_or(1e-6),
            weight_center: self.weight_center.unwrap_or(WeightCenter::Prior),
            weight_profile: self.weight_profile.unwrap_or_default(),
            prior_mean,
            actions: self.actions.unwrap_or(ActionInit::WeightAware),
            seed: self.seed.unwrap_or(0),
            noise: self.noise.unwrap_or(NoiseSource::Sample),
            background: self.background.unwrap_or(true),
            // More than a window's worth of waiting samples is useless (the window would
            // evict them); a shorter queue bounds the worker's catch-up after a burst.
            queue_capacity: self
                .queue_capacity
                .unwrap_or(blocks.saturating_mul(block_size).saturating_add(block_size)),
            threshold_refresh_blocks: self.threshold_refresh_blocks.unwrap_or(1),
            refit_every_blocks: self.refit_every_blocks.unwrap_or(64),
            refit_steps: self.refit_steps.unwrap_or(10),
            refit_blocks: self.refit_blocks.unwrap_or(0),
            refit_lr: self.refit_lr.unwrap_or(0.01),
            refit_lengthscales: self.refit_lengthscales.unwrap_or(true),
            refit_outputscale: self.refit_outputscale.unwrap_or(true),
            refit_noise: self.refit_noise.unwrap_or(true),
            refit_max_duty: self.refit_max_duty.unwrap_or(0.25),
            drift: self.resolve_drift()?,
        };
        v.validate()?;
        Ok(v)
    }

    /// `kernel` (default se): its name as given and its kind.
    fn resolve_kernel(&self) -> Result<(&str, KernelKind), ModelError> {
        let kernel_name = self.kernel.as_deref().unwrap_or("se");
        let kind = KernelKind::from_name(kernel_name).ok_or_else(|| {
            bad(format!(
                "kernel \"{kernel_name}\" unknown; expected se, rbf, matern12, matern32 or matern52"
            ))
        })?;
        Ok((kernel_name, kind))
    }

    /// `hyper`: one entry per output, all with the same `d` lengthscales and a kernel that
    /// agrees with `kind`, squared into variances.
    fn resolve_hyper(
        &self,
        d: usize,
        p: usize,
        kernel_name: &str,
        kind: KernelKind,
    ) -> Result<ResolvedHyper, ModelError> {
        let entries: Vec<&HyperEntry> = self
            .hyper
            .as_ref()
            .ok_or_else(|| bad(HYPER_MISSING.into()))?
            .per_output(p)
            .map_err(bad)?;
        let lengthscales = entries[0].lengthscales.clone();
        let (mut outputscale, mut noise_var) = (Vec::with_capacity(p), Vec::with_capacity(p));
        for (o, e) in entries.iter().enumerate() {
            check_hyper_entry(o, e, d, &lengthscales, kernel_name, kind)?;
            outputscale.push(e.sigma_f * e.sigma_f);
            noise_var.push(e.sigma_n * e.sigma_n);
        }
        if let Some((j, l)) = lengthscales
            .iter()
            .enumerate()
            .find(|(_, l)| !(l.is_finite() && **l > 0.0))
        {
            return Err(bad(format!(
                "hyper.lengthscales[{j}] must be finite and > 0, found {l}"
            )));
        }
        Ok(ResolvedHyper {
            lengthscales,
            outputscale,
            noise_var,
        })
    }

    /// `beta`: normalized (default) or a finite positive number.
    fn resolve_beta(&self) -> Result<Beta, ModelError> {
        match &self.beta {
            None => Ok(Beta::Normalized),
            Some(BetaValue::Name(s)) if s == "normalized" => Ok(Beta::Normalized),
            Some(BetaValue::Name(s)) => Err(bad(format!(
                "beta must be a positive number or \"normalized\", found \"{s}\""
            ))),
            Some(BetaValue::Number(b)) if b.is_finite() && *b > 0.0 => Ok(Beta::Fixed(*b)),
            Some(BetaValue::Number(b)) => {
                Err(bad(format!("beta must be finite and > 0, found {b}")))
            }
        }
    }

    /// `prior_mean`: zeros, one shared constant or one per output, all finite.
    fn resolve_prior_mean(&self, p: usize) -> Result<Vec<f64>, ModelError> {
        let prior_mean = match &self.prior_mean {
            None => vec![0.0; p],
            Some(PriorMean::Shared(m)) => vec![*m; p],
            Some(PriorMean::PerOutput(v)) => {
                if v.len() != p {
                    return Err(bad(format!(
                        "prior_mean has {} entries, expected {p}",
                        v.len()
                    )));
                }
                v.clone()
            }
        };
        if prior_mean.iter().any(|m| !m.is_finite()) {
            return Err(bad("prior_mean must be finite".into()));
        }
        Ok(prior_mean)
    }

    /// `drift`, parsed by `gpn_gp_core::drift`.
    fn resolve_drift(&self) -> Result<Option<Drift>, ModelError> {
        match &self.drift {
            None => Ok(None),
            Some(v) => Drift::from_config(&serde_json::json!({ "drift": v }))
                .map_err(|e| bad(e.to_string())),
        }
    }
}

/// The per-output hyperparameters of `hyper`, squared.
struct ResolvedHyper {
    lengthscales: Vec<f64>,
    outputscale: Vec<f64>,
    noise_var: Vec<f64>,
}

/// Checks `hyper[o]` against the shared `lengthscales` (hyper[0]'s), `d` and the model's
/// kernel `kind` (named `kernel_name`).
fn check_hyper_entry(
    o: usize,
    e: &HyperEntry,
    d: usize,
    lengthscales: &[f64],
    kernel_name: &str,
    kind: KernelKind,
) -> Result<(), ModelError> {
    if e.lengthscales.len() != d {
        return Err(bad(format!(
            "hyper[{o}].lengthscales has {} values, expected input_dim = {d}",
            e.lengthscales.len()
        )));
    }
    if e.lengthscales != lengthscales {
        return Err(bad(format!(
            "hyper[{o}].lengthscales differ from hyper[0]'s: the outputs share the inputs, the lengthscales and the action blocks (fit with shared lengthscales)"
        )));
    }
    if let Some(k) = &e.kernel
        && KernelKind::from_name(k) != Some(kind)
    {
        return Err(bad(format!(
            "hyper[{o}].kernel \"{k}\" differs from the model's kernel \"{kernel_name}\""
        )));
    }
    if !(e.sigma_f.is_finite() && e.sigma_f > 0.0) {
        return Err(bad(format!(
            "hyper[{o}].sigma_f must be finite and > 0, found {}",
            e.sigma_f
        )));
    }
    if !(e.sigma_n.is_finite() && e.sigma_n > 0.0) {
        return Err(bad(format!(
            "hyper[{o}].sigma_n must be finite and > 0, found {}",
            e.sigma_n
        )));
    }
    Ok(())
}

impl ValidConfig {
    fn validate(&self) -> Result<(), ModelError> {
        if self.blocks < 1 || self.blocks > MAX_BLOCKS {
            return Err(bad(format!(
                "blocks must be in 1..={MAX_BLOCKS} (G is blocks² and the factors p·blocks²/2), found {}",
                self.blocks
            )));
        }
        if self.block_size < 1 {
            return Err(bad("block_size must be ≥ 1".into()));
        }
        let window = self.blocks.saturating_mul(self.block_size);
        if window > MAX_WINDOW {
            return Err(bad(format!(
                "window blocks × block_size = {window} exceeds {MAX_WINDOW}"
            )));
        }
        if self.admit_every < 1 {
            return Err(bad("admit_every must be ≥ 1".into()));
        }
        if !(self.admit_interval_s.is_finite() && self.admit_interval_s >= 0.0) {
            return Err(bad(format!(
                "admit_interval_s must be finite and ≥ 0, found {}",
                self.admit_interval_s
            )));
        }
        if !(self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(bad(format!(
                "epsilon must be in (0, 1), found {}",
                self.epsilon
            )));
        }
        for (name, v) in [
            ("c_floor_sigmas", self.c_floor_sigmas),
            ("c_min", self.c_min),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(format!("{name} must be finite and ≥ 0, found {v}")));
            }
        }
        if self.c_floor_sigmas == 0.0 && self.c_min == 0.0 {
            return Err(bad(
                "c_floor_sigmas and c_min cannot both be 0 (c could collapse to 0)".into(),
            ));
        }
        if self.queue_capacity < 1 || self.queue_capacity > 1 << 20 {
            return Err(bad(format!(
                "queue_capacity must be in 1..=1048576, found {}",
                self.queue_capacity
            )));
        }
        if self.threshold_refresh_blocks < 1 {
            return Err(bad("threshold_refresh_blocks must be ≥ 1".into()));
        }
        if self.refit_every_blocks > 0 && self.refit_steps == 0 {
            return Err(bad(
                "refit_steps must be ≥ 1 when refit_every_blocks > 0".into()
            ));
        }
        if !(self.refit_max_duty > 0.0 && self.refit_max_duty <= 1.0) {
            return Err(bad(format!(
                "refit_max_duty must be in (0, 1], found {}",
                self.refit_max_duty
            )));
        }
        if !(self.refit_lr.is_finite() && self.refit_lr > 0.0) {
            return Err(bad(format!(
                "refit_lr must be finite and > 0, found {}",
                self.refit_lr
            )));
        }
        Ok(())
    }

    /// Window capacity n = blocks × block_size.
    pub fn window(&self) -> usize {
        self.blocks * self.block_size
    }
}
