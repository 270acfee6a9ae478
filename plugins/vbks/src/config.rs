//! Configuration: JSON-deserialisable [`Config`] (every key optional) → [`Config::check`]
//! → [`ValidConfig`] (every value resolved and validated). Keys, types, defaults and
//! meanings are declared once in `schema.rs` (`config_schema`).

use gpn_gp_core::model::ModelError;
use serde::Deserialize;

use crate::belief::{BeliefMode, BeliefSettings};
use crate::expr::{Base, Expr};
use crate::grammar;
use crate::local::LocalSettings;

/// Hyperparameters of one output as the node and `gp-node eval` pass them (an ARD-SE
/// fit, standard deviations, original units; `gpn_gp_core::hyper_config`; its `kernel` is
/// accepted, not used). Used only to seed initial values.
pub type HyperEntry = gpn_gp_core::hyper_config::HyperEntry<String>;

/// The `hyper` key: one entry for all outputs or one per output.
pub type Hyper = gpn_gp_core::hyper_config::Hyper<String>;

/// `kernels`: a named space or a list of expressions.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum KernelsKey {
    /// `"k12"`, `"level1"`, `"level2"` or `"level3"`.
    Named(String),
    /// Expressions such as `"(PER+RQ)*LIN"`.
    List(Vec<String>),
}

/// `predict`: the mixture, or one kept kernel alone.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum PredictKey {
    /// `"mixture"` (default) or `"top"` (VBKS-s: the highest-weight kept kernel).
    Named(String),
    /// Index into the kept kernels, in order of offline weight (0 = top).
    Component(usize),
}

/// Base kernels restricted to some inputs (spec gap #13, "active dimension groups").
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct BaseDims {
    #[serde(rename = "SE", alias = "se")]
    pub se: Option<Vec<usize>>,
    #[serde(rename = "RQ", alias = "rq")]
    pub rq: Option<Vec<usize>>,
    #[serde(rename = "LIN", alias = "lin")]
    pub lin: Option<Vec<usize>>,
    #[serde(rename = "PER", alias = "per")]
    pub per: Option<Vec<usize>>,
}

impl BaseDims {
    /// The coordinates of `base` (`None`: all).
    pub fn of(&self, base: Base) -> Option<Vec<usize>> {
        match base {
            Base::Se => self.se.clone(),
            Base::Rq => self.rq.clone(),
            Base::Lin => self.lin.clone(),
            Base::Per => self.per.clone(),
        }
    }
}

/// The raw configuration; unknown keys are rejected. Keys: `schema.rs` (`config_schema`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Config {
    pub kernels: Option<KernelsKey>,
    pub base_dims: Option<BaseDims>,
    pub offline_samples: Option<usize>,
    pub inducing: Option<usize>,
    pub inducing_select: Option<usize>,
    pub batch_size: Option<usize>,
    pub checkpoints: Option<usize>,
    pub epochs: Option<f64>,
    pub min_steps: Option<usize>,
    pub final_steps: Option<usize>,
    pub lr_hyper: Option<f64>,
    pub lr_hyper_final: Option<f64>,
    pub natgrad_step: Option<f64>,
    pub prior_log_sd: Option<f64>,
    pub init_candidates: Option<usize>,
    pub starts: Option<usize>,
    pub keep: Option<usize>,
    pub belief: Option<String>,
    pub temperature: Option<f64>,
    pub prior_scale: Option<f64>,
    pub prior_mean: Option<Vec<f64>>,
    pub belief_covariance: Option<String>,
    pub belief_lr: Option<f64>,
    pub belief_samples: Option<usize>,
    pub belief_steps: Option<usize>,
    pub belief_steps_warm: Option<usize>,
    pub posterior_samples: Option<usize>,
    pub trajectory: Option<bool>,
    pub forgetting: Option<f64>,
    pub refactor_every: Option<usize>,
    pub belief_refit_every: Option<usize>,
    pub wait_for_offline: Option<bool>,
    pub predict: Option<PredictKey>,
    pub variance: Option<String>,
    pub seed: Option<u64>,
    pub standardize_inputs: Option<bool>,
    pub center_targets: Option<bool>,
    pub jitter: Option<f64>,
    pub min_noise_var: Option<f64>,
    pub pending_capacity: Option<usize>,
    pub warmup_samples: Option<usize>,
    pub catchup_per_update: Option<usize>,
    pub replay_capacity: Option<usize>,
    pub threads: Option<usize>,
    pub hyper: Option<Hyper>,
    /// Uncertainty injection (`gpn_gp_core::drift`); parsed in `check`.
    pub drift: Option<serde_json::Value>,
    pub drift_window: Option<usize>,
    /// Accepted for compatibility with the node's model config; not used.
    pub kernel: Option<String>,
}

/// Which prediction the model returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredictWith {
    /// The belief-weighted mixture.
    Mixture,
    /// The kept kernel with this index alone (0 = highest offline weight).
    Component(usize),
}

/// A checked configuration with every default resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidConfig {
    /// Input dimension d.
    pub input_dim: usize,
    /// Outputs p.
    pub output_dim: usize,
    /// The candidate kernels.
    pub kernels: Vec<Expr>,
    /// Active coordinates per base kernel.
    pub base_dims: BaseDims,
    /// N: samples of the offline phase.
    pub offline_samples: usize,
    /// M of the online components.
    pub inducing: usize,
    /// M of the offline selection.
    pub inducing_select: usize,
    /// Minibatch |B|.
    pub batch_size: usize,
    /// Checkpoints T of the offline stream.
    pub checkpoints: usize,
    /// Passes over each new chunk per checkpoint (iterations = ⌈epochs·chunk/|B|⌉).
    pub epochs: f64,
    /// At least this many local steps per checkpoint.
    pub min_steps: usize,
    /// Local steps on all N samples after the last checkpoint.
    pub final_steps: usize,
    /// Adam step of the log-hyperparameters at the end (decays geometrically from
    /// `lr_hyper` over the whole offline phase).
    pub lr_hyper_final: f64,
    /// Adam step of the log-hyperparameters.
    pub lr_hyper: f64,
    /// Local-step settings.
    pub local: LocalSettings,
    /// Initial points scored per kernel.
    pub init_candidates: usize,
    /// Initial points optimised per kernel (best final bound wins).
    pub starts: usize,
    /// K̃: kernels kept.
    pub keep: usize,
    /// How weights are formed.
    pub belief_mode: BeliefMode,
    /// Belief settings.
    pub belief: BeliefSettings,
    /// Prior mean μ₀ of the logits (len K; zeros by default).
    pub prior_mean: Vec<f64>,
    /// Adam steps of a fresh belief fit.
    pub belief_steps: usize,
    /// Adam steps of a warm-started refit.
    pub belief_steps_warm: usize,
    /// Fit the belief at every checkpoint (trajectory) or only at the end.
    pub trajectory: bool,
    /// λ ∈ (0, 1].
    pub forgetting: f64,
    /// Background refactorisation period (samples), with λ < 1.
    pub refactor_every: usize,
    /// Online belief refit period (samples; 0 = never).
    pub belief_refit_every: usize,
    /// `update` blocks until the offline phase is done (reproducible evaluations).
    pub wait_for_offline: bool,
    /// Mixture or one component.
    pub predict: PredictWith,
    /// Add the learned noise in excess of the caller's `noise_var` to the variance.
    pub add_excess_noise: bool,
    /// RNG seed.
    pub seed: u64,
    /// Standardise inputs (else only targets).
    pub standardize_inputs: bool,
    /// Subtract the targets' mean before scaling them (else scale only).
    pub center_targets: bool,
    /// Capacity of the queue of samples that arrive during the offline phase.
    pub pending_capacity: usize,
    /// Samples after which a warm-up model (the first kernel at its initial parameters)
    /// predicts until the offline phase is done; 0: none, the running-mean fallback.
    pub warmup_samples: usize,
    /// Queued samples folded in per `update` once the ensemble is ready.
    pub catchup_per_update: usize,
    /// Recent samples kept for replay after a background refactorisation.
    pub replay_capacity: usize,
    /// Threads of the offline phase.
    pub threads: usize,
    /// Seed hyperparameters per output, if given.
    pub hyper: Option<Vec<HyperEntry>>,
    /// Uncertainty injection (`inject.rs`); `None` without the `drift` key.
    pub drift: Option<gpn_gp_core::drift::Drift>,
    /// Samples the drift window holds at most (oldest dropped early when full).
    pub drift_window: usize,
}

fn cfg_err(msg: impl Into<String>) -> ModelError {
    ModelError::Config(msg.into())
}

fn positive(name: &str, v: f64) -> Result<f64, ModelError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(cfg_err(format!("{name} must be finite and > 0, got {v}")))
    }
}

fn at_least(name: &str, v: usize, min: usize) -> Result<usize, ModelError> {
    if v >= min {
        Ok(v)
    } else {
        Err(cfg_err(format!("{name} must be at least {min}, got {v}")))
    }
}

/// Sample and inducing-point counts of the offline phase.
struct OfflineSizes {
    offline_samples: usize,
    inducing: usize,
    inducing_select: usize,
    batch_size: usize,
    checkpoints: usize,
}

/// The local optimiser: Adam schedule of the hyperparameters and the local-step settings.
struct Optimiser {
    epochs: f64,
    lr_hyper: f64,
    lr_hyper_final: f64,
    local: LocalSettings,
}

/// The kernel belief: how weights are formed, its settings and the prior mean μ₀.
struct BeliefKeys {
    mode: BeliefMode,
    settings: BeliefSettings,
    prior_mean: Vec<f64>,
}

/// Default of `warmup_samples`: enough for the k-means of the default 64 inducing inputs
/// and a first estimate of the scales, 0.2 s at 1 kHz.
pub const DEFAULT_WARMUP_SAMPLES: usize = 200;

/// The checked keys of the online phase resolved after `drift`.
struct OnlineKeys {
    refactor_every: usize,
    add_excess_noise: bool,
    catchup_per_update: usize,
    replay_capacity: usize,
}

impl Config {
    /// Parse the JSON object.
    pub fn from_json(v: &serde_json::Value) -> Result<Config, ModelError> {
        Config::deserialize(v).map_err(|e| cfg_err(e.to_string()))
    }

    /// Resolve defaults and validate for `d` inputs and `p` outputs. The keys are checked
    /// group by group in a fixed order, so the first invalid key reported is stable.
    pub fn check(&self, d: usize, p: usize) -> Result<ValidConfig, ModelError> {
        if d == 0 || p == 0 {
            return Err(cfg_err(format!(
                "dimensions must be at least 1, got d = {d}, p = {p}"
            )));
        }
        let kernels = self.resolve_kernels()?;
        let base_dims = self.resolve_base_dims(d)?;
        let sizes = self.resolve_sizes()?;
        let optimiser = self.resolve_optimiser()?;
        let (init_candidates, starts) = self.resolve_starts()?;
        let keep = at_least("keep", self.keep.unwrap_or(5), 1)?.min(kernels.len());
        let belief = self.resolve_belief(kernels.len())?;
        let forgetting = self.resolve_forgetting()?;
        let predict = self.resolve_predict(keep)?;
        let hyper = self.resolve_hyper(d, p)?;
        let threads = at_least("threads", self.threads.unwrap_or(1), 1)?;
        let (drift, drift_window) = self.resolve_drift(sizes.offline_samples)?;
        let online = self.resolve_online()?;
        Ok(ValidConfig {
            input_dim: d,
            output_dim: p,
            kernels,
            base_dims,
            offline_samples: sizes.offline_samples,
            inducing: sizes.inducing,
            inducing_select: sizes.inducing_select,
            batch_size: sizes.batch_size,
            checkpoints: sizes.checkpoints,
            epochs: optimiser.epochs,
            min_steps: self.min_steps.unwrap_or(30),
            final_steps: self.final_steps.unwrap_or(200),
            lr_hyper: optimiser.lr_hyper,
            lr_hyper_final: optimiser.lr_hyper_final,
            local: optimiser.local,
            init_candidates,
            starts,
            keep,
            belief_mode: belief.mode,
            belief: belief.settings,
            prior_mean: belief.prior_mean,
            belief_steps: self.belief_steps.unwrap_or(1000),
            belief_steps_warm: self.belief_steps_warm.unwrap_or(200),
            trajectory: self.trajectory.unwrap_or(true),
            forgetting,
            refactor_every: online.refactor_every,
            belief_refit_every: self.belief_refit_every.unwrap_or(200),
            wait_for_offline: self.wait_for_offline.unwrap_or(false),
            predict,
            add_excess_noise: online.add_excess_noise,
            seed: self.seed.unwrap_or(0),
            standardize_inputs: self.standardize_inputs.unwrap_or(true),
            center_targets: self.center_targets.unwrap_or(true),
            pending_capacity: self.pending_capacity.unwrap_or(10_000),
            warmup_samples: self.warmup_samples.unwrap_or(DEFAULT_WARMUP_SAMPLES),
            catchup_per_update: online.catchup_per_update,
            replay_capacity: online.replay_capacity,
            threads,
            hyper,
            drift,
            drift_window,
        })
    }

    /// `kernels`: a named space (default level2) or a list of distinct expressions.
    fn resolve_kernels(&self) -> Result<Vec<Expr>, ModelError> {
        let kernels = match &self.kernels {
            None => grammar::kernel_space(2),
            Some(KernelsKey::Named(name)) => match name.as_str() {
                "k12" => grammar::k12(),
                "level1" => grammar::kernel_space(1),
                "level2" => grammar::kernel_space(2),
                "level3" => grammar::kernel_space(3),
                other => {
                    return Err(cfg_err(format!(
                        "kernels \"{other}\" unknown; expected k12, level1, level2, level3 or a list of expressions"
                    )));
                }
            },
            Some(KernelsKey::List(list)) => {
                let mut out: Vec<Expr> = Vec::new();
                for s in list {
                    let e = Expr::parse(s).map_err(|e| cfg_err(format!("kernels: {e}")))?;
                    if out.contains(&e) {
                        return Err(cfg_err(format!("kernels: \"{s}\" is listed twice")));
                    }
                    out.push(e);
                }
                out
            }
        };
        if kernels.is_empty() {
            return Err(cfg_err("kernels: the list is empty"));
        }
        Ok(kernels)
    }

    /// `base_dims`: per base kernel, non-empty strictly increasing indices below `d`.
    fn resolve_base_dims(&self, d: usize) -> Result<BaseDims, ModelError> {
        let base_dims = self.base_dims.clone().unwrap_or_default();
        for b in Base::ALL {
            if let Some(list) = base_dims.of(b) {
                if list.is_empty() || list.iter().any(|&j| j >= d) {
                    return Err(cfg_err(format!(
                        "base_dims.{}: {list:?} must be non-empty with every index < {d}",
                        b.name()
                    )));
                }
                if list.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(cfg_err(format!(
                        "base_dims.{}: {list:?} must be strictly increasing",
                        b.name()
                    )));
                }
            }
        }
        Ok(base_dims)
    }

    /// `inducing`, `inducing_select`, `offline_samples`, `batch_size`, `checkpoints`.
    fn resolve_sizes(&self) -> Result<OfflineSizes, ModelError> {
        let inducing = at_least("inducing", self.inducing.unwrap_or(64), 1)?;
        let inducing_select = at_least(
            "inducing_select",
            self.inducing_select.unwrap_or(inducing.min(32)),
            1,
        )?;
        let offline_samples = self.offline_samples.unwrap_or(1000);
        if offline_samples < inducing.max(inducing_select).max(2) {
            return Err(cfg_err(format!(
                "offline_samples ({offline_samples}) must be at least the number of inducing inputs ({}) and 2",
                inducing.max(inducing_select)
            )));
        }
        let batch_size = at_least("batch_size", self.batch_size.unwrap_or(128), 1)?;
        let checkpoints = at_least("checkpoints", self.checkpoints.unwrap_or(10), 1)?;
        if checkpoints > offline_samples {
            return Err(cfg_err(format!(
                "checkpoints ({checkpoints}) cannot exceed offline_samples ({offline_samples})"
            )));
        }
        Ok(OfflineSizes {
            offline_samples,
            inducing,
            inducing_select,
            batch_size,
            checkpoints,
        })
    }

    /// `epochs`, `lr_hyper`, `lr_hyper_final`, `natgrad_step`, `prior_log_sd`, `jitter`,
    /// `min_noise_var`.
    fn resolve_optimiser(&self) -> Result<Optimiser, ModelError> {
        let epochs = positive("epochs", self.epochs.unwrap_or(10.0))?;
        let lr_hyper = positive("lr_hyper", self.lr_hyper.unwrap_or(0.05))?;
        let lr_hyper_final = positive("lr_hyper_final", self.lr_hyper_final.unwrap_or(0.005))?;
        let natgrad_step = positive("natgrad_step", self.natgrad_step.unwrap_or(0.1))?;
        if natgrad_step > 1.0 {
            return Err(cfg_err(format!(
                "natgrad_step must be in (0, 1], got {natgrad_step}"
            )));
        }
        let prior_log_sd = self.prior_log_sd.unwrap_or(1.0);
        if !(prior_log_sd.is_finite() && prior_log_sd >= 0.0) {
            return Err(cfg_err(format!(
                "prior_log_sd must be finite and >= 0 (0 = no prior), got {prior_log_sd}"
            )));
        }
        let jitter = positive("jitter", self.jitter.unwrap_or(1e-6))?;
        let min_noise_var = positive("min_noise_var", self.min_noise_var.unwrap_or(1e-6))?;
        Ok(Optimiser {
            epochs,
            lr_hyper,
            lr_hyper_final,
            local: LocalSettings {
                natgrad_step,
                prior_sd: prior_log_sd,
                min_noise_var,
                max_log_change: 8.0,
                jitter_rel: jitter,
            },
        })
    }

    /// `init_candidates` and `starts` (at most `init_candidates`).
    fn resolve_starts(&self) -> Result<(usize, usize), ModelError> {
        let init_candidates = at_least("init_candidates", self.init_candidates.unwrap_or(90), 1)?;
        let starts = at_least("starts", self.starts.unwrap_or(2), 1)?;
        if starts > init_candidates {
            return Err(cfg_err(format!(
                "starts ({starts}) cannot exceed init_candidates ({init_candidates})"
            )));
        }
        Ok((init_candidates, starts))
    }

    /// `belief` and `temperature`.
    fn resolve_belief_mode(&self) -> Result<BeliefMode, ModelError> {
        match self.belief.as_deref() {
            None | Some("logistic_normal") => {
                if self.temperature.is_some() {
                    return Err(cfg_err("temperature applies to belief = \"discrete\" only"));
                }
                Ok(BeliefMode::LogisticNormal)
            }
            Some("discrete") => Ok(BeliefMode::Discrete {
                tau: positive("temperature", self.temperature.unwrap_or(1.0))?,
            }),
            Some(other) => Err(cfg_err(format!(
                "belief \"{other}\" unknown; expected logistic_normal or discrete"
            ))),
        }
    }

    /// The belief keys (`belief` … `posterior_samples`) for `k` candidate kernels.
    fn resolve_belief(&self, k: usize) -> Result<BeliefKeys, ModelError> {
        let mode = self.resolve_belief_mode()?;
        let prior_scale = positive("prior_scale", self.prior_scale.unwrap_or(1.0))?;
        let prior_mean = match &self.prior_mean {
            None => vec![0.0; k],
            Some(v) if v.len() == k && v.iter().all(|x| x.is_finite()) => v.clone(),
            Some(v) => {
                return Err(cfg_err(format!(
                    "prior_mean must hold one finite value per kernel ({}), got {} values",
                    k,
                    v.len()
                )));
            }
        };
        let full_covariance = match self.belief_covariance.as_deref() {
            None | Some("auto") => k <= 64,
            Some("full") => true,
            Some("diagonal") => false,
            Some(other) => {
                return Err(cfg_err(format!(
                    "belief_covariance \"{other}\" unknown; expected auto, full or diagonal"
                )));
            }
        };
        let settings = BeliefSettings {
            prior_scale,
            full_covariance,
            lr: positive("belief_lr", self.belief_lr.unwrap_or(0.05))?,
            samples_per_step: at_least("belief_samples", self.belief_samples.unwrap_or(32), 1)?,
            posterior_samples: at_least(
                "posterior_samples",
                self.posterior_samples.unwrap_or(2000),
                1,
            )?,
        };
        Ok(BeliefKeys {
            mode,
            settings,
            prior_mean,
        })
    }

    /// `forgetting` λ ∈ (0, 1].
    fn resolve_forgetting(&self) -> Result<f64, ModelError> {
        let forgetting = self.forgetting.unwrap_or(1.0);
        if !(forgetting > 0.0 && forgetting <= 1.0) {
            return Err(cfg_err(format!(
                "forgetting must be in (0, 1], got {forgetting}"
            )));
        }
        Ok(forgetting)
    }

    /// `predict`: mixture, top or an index below `keep`.
    fn resolve_predict(&self, keep: usize) -> Result<PredictWith, ModelError> {
        match &self.predict {
            None => Ok(PredictWith::Mixture),
            Some(PredictKey::Named(s)) if s == "mixture" => Ok(PredictWith::Mixture),
            Some(PredictKey::Named(s)) if s == "top" => Ok(PredictWith::Component(0)),
            Some(PredictKey::Named(s)) => Err(cfg_err(format!(
                "predict \"{s}\" unknown; expected mixture, top or a kept-kernel index"
            ))),
            Some(PredictKey::Component(i)) if *i < keep => Ok(PredictWith::Component(*i)),
            Some(PredictKey::Component(i)) => Err(cfg_err(format!(
                "predict: index {i} is not below keep ({keep})"
            ))),
        }
    }

    /// `hyper`: one entry per output with `d` lengthscales, all finite and positive.
    fn resolve_hyper(&self, d: usize, p: usize) -> Result<Option<Vec<HyperEntry>>, ModelError> {
        let Some(hyper) = &self.hyper else {
            return Ok(None);
        };
        let list = hyper
            .per_output(p)
            .map_err(cfg_err)?
            .into_iter()
            .cloned()
            .collect::<Vec<_>>();
        for (o, h) in list.iter().enumerate() {
            if h.lengthscales.len() != d {
                return Err(cfg_err(format!(
                    "hyper[{o}].lengthscales has {} values, expected {d}",
                    h.lengthscales.len()
                )));
            }
            let ok = |v: f64| v.is_finite() && v > 0.0;
            if !(ok(h.sigma_f) && h.sigma_n.is_finite() && h.sigma_n >= 0.0) {
                return Err(cfg_err(format!(
                    "hyper[{o}]: sigma_f must be > 0 and sigma_n >= 0, finite"
                )));
            }
            if !h.lengthscales.iter().all(|&l| ok(l)) {
                return Err(cfg_err(format!(
                    "hyper[{o}].lengthscales must be finite and > 0"
                )));
            }
        }
        Ok(Some(list))
    }

    /// `drift` and `drift_window` (with drift, at least `offline_samples`).
    fn resolve_drift(
        &self,
        offline_samples: usize,
    ) -> Result<(Option<gpn_gp_core::drift::Drift>, usize), ModelError> {
        let drift = match &self.drift {
            None => None,
            Some(v) => gpn_gp_core::drift::Drift::from_config(&serde_json::json!({ "drift": v }))
                .map_err(cfg_err)?,
        };
        // The offline samples enter the statistics too, so the window must hold them all.
        let drift_window = at_least(
            "drift_window",
            self.drift_window.unwrap_or(10_000),
            if drift.is_some() { offline_samples } else { 1 },
        )?;
        Ok((drift, drift_window))
    }

    /// `refactor_every`, `variance`, `catchup_per_update`, `replay_capacity`.
    fn resolve_online(&self) -> Result<OnlineKeys, ModelError> {
        Ok(OnlineKeys {
            refactor_every: at_least("refactor_every", self.refactor_every.unwrap_or(200), 1)?,
            add_excess_noise: match self.variance.as_deref() {
                None | Some("latent_plus_excess_noise") => true,
                Some("latent") => false,
                Some(other) => {
                    return Err(cfg_err(format!(
                        "variance \"{other}\" unknown; expected latent_plus_excess_noise or latent"
                    )));
                }
            },
            catchup_per_update: at_least(
                "catchup_per_update",
                self.catchup_per_update.unwrap_or(4),
                1,
            )?,
            replay_capacity: at_least("replay_capacity", self.replay_capacity.unwrap_or(1024), 1)?,
        })
    }
}
