//! Refitting fitted hyperparameters as the stream grows, as the node's learner does
//! (`learn.refit_after_samples`, `learn.max_refits`).
//!
//! When `gp-node eval` fits the hyperparameters itself (none given), the first fit uses the
//! first `first` samples. Refit k (from 1) is due before step `first`·2^k. It fits on an
//! evenly spaced subset of every sample streamed so far (at most `max_points`, the node's
//! rule too), starting from the default start and from the values in use (the better
//! likelihood wins). The result must then predict better than the values in use: the mean
//! negative log predictive density of up to `max_points`/2 of the other samples so far,
//! each set conditioned on the fitted subset, must be lower. The likelihood of a subset
//! has several optima in many dimensions, and the best of them on one subset can predict
//! worse (PUMA-32nm: SMSE 0.0586 → 0.0648 without this check). If it passes, a fresh model
//! with the new hyperparameters is taught every sample so far (`update` in stream order,
//! the node's warm start). The work runs on a background thread while the stream goes on
//! with the old model:
//! - with [`RefitPlan::background`] off (the default pacing, which waits for the model at
//!   every step) the new model is adopted at the step the refit was due, so results do
//!   not depend on timing;
//! - with it on (a wall-clock rate, what a robot gets) it is adopted at the first step
//!   after it is ready, taught the samples that came meanwhile first.
//!
//! A model that learns in the background (its `readiness` says samples are behind) takes
//! over only once it has taken in what it was taught. A refit that fails (the fit, the
//! plugin refusing the model, or that wait timing out) is reported and the old model
//! stays, as on the node.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gpn_gp_core::hyperfit::{FitMode, held_out_nlpd, held_out_rows};
use gpn_gp_core::kernel::{ArdKernel, KernelKind};
use gpn_gp_core::model::OnlineModel;
use gpn_plugin_host::{Plugin, PluginModel};
use serde_json::Value;

use super::EvalError;
use super::config::{fit_hyper, hyper_outputs, merge_hyper, noise_vars};
use super::dataset::Dataset;
use super::runner::{ModelSlot, wait_ready};

/// When and how to refit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefitPlan {
    /// Samples of the first fit; refit k is due before step first·2^k.
    pub first: usize,
    /// Refits at most.
    pub max_refits: usize,
    /// Samples a fit uses at most (evenly spaced over those streamed so far).
    pub max_points: usize,
    /// The kernel fitted.
    pub kind: KernelKind,
    /// Shared lengthscales or one set per target.
    pub mode: FitMode,
    /// Adopt when ready instead of at the step it was due (see the module doc).
    pub background: bool,
    /// Time between samples given to `update` (s).
    pub dt_secs: f64,
    /// Longest wait for a refitted model's own background work to take in the samples it
    /// was taught (`--wait-timeout`); the refit fails past it.
    pub ready_timeout: Duration,
}

impl RefitPlan {
    /// The step before which refit `k` (from 1) is due; `None` past `usize`.
    pub fn due(&self, k: u32) -> Option<usize> {
        self.first.checked_mul(1usize.checked_shl(k)?)
    }
}

/// One refit, as reported.
#[derive(Debug, Clone, PartialEq)]
pub struct RefitSummary {
    /// The step before which it started (= samples streamed then): its due step, or later
    /// at a rate if the refit before was still running.
    pub due: usize,
    /// The step from which the new model was used (`None`: failed, the old model stayed).
    pub adopted: Option<usize>,
    /// Samples the fit used.
    pub points: usize,
    /// Wall time of fit, model creation and teaching (s).
    pub seconds: f64,
    /// NLML summed over targets at the fit's start and end.
    pub nlml_init: f64,
    /// See `nlml_init`.
    pub nlml: f64,
    /// The hyperparameters fitted (the config's `hyper` format).
    pub hyper: Value,
    /// Mean negative log predictive density of held-out samples (the samples so far not
    /// fitted on, evenly spaced) under the values in use and under the refitted ones, each
    /// conditioned on the fitted samples. The refit takes over only if it is lower.
    pub held_out_nlpd: Option<(f64, f64)>,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

impl RefitSummary {
    /// Neither failed nor adopted: the held-out check kept the values in use.
    pub fn kept(&self) -> bool {
        self.error.is_none() && self.adopted.is_none()
    }
}

/// A refitted model, taught the samples up to its due step.
struct Ready {
    model: PluginModel,
    cfg: Value,
    noise_var: Vec<f64>,
    summary: RefitSummary,
}

struct Pending {
    due: usize,
    handle: JoinHandle<Result<Ready, Box<RefitSummary>>>,
}

/// A [`ModelSlot`] whose model is replaced by refits (see the module doc).
pub struct Refitting {
    model: PluginModel,
    plugin: Plugin,
    cfg: Value,
    plan: RefitPlan,
    started: u32,
    pending: Option<Pending>,
    log: Vec<RefitSummary>,
}

impl Refitting {
    /// Starts with `model`, created by `plugin` from `cfg` (which holds the first fit's
    /// hyperparameters).
    pub fn new(model: PluginModel, plugin: Plugin, cfg: Value, plan: RefitPlan) -> Self {
        Self {
            model,
            plugin,
            cfg,
            plan,
            started: 0,
            pending: None,
            log: Vec::new(),
        }
    }

    /// The model in use now.
    pub fn current(&self) -> &PluginModel {
        &self.model
    }

    /// The config of the model in use (its hyperparameters).
    pub fn config(&self) -> &Value {
        &self.cfg
    }

    /// The refits so far. A refit still running at the end of the stream is not listed.
    pub fn log(&self) -> &[RefitSummary] {
        &self.log
    }

    fn start(&mut self, due: usize, data: &Dataset) {
        let n_pts = self.plan.max_points.clamp(2, due.max(2)).min(due);
        let rows: Vec<usize> = (0..n_pts)
            .map(|i| i * (due - 1) / (n_pts - 1).max(1))
            .collect();
        let held_out = held_out_rows(due, &rows, n_pts.div_ceil(2));
        let subset = data.streamed_rows(&rows);
        let held_out = data.streamed_rows(&held_out);
        let taught = data.streamed_rows(&(0..due).collect::<Vec<_>>());
        eprintln!(
            "eval: refit {} of {} due at step {due}: fitting on {n_pts} of the samples so far{}…",
            self.started,
            self.plan.max_refits,
            if self.plan.background {
                " in the background"
            } else {
                ""
            }
        );
        let (plugin, cfg, plan) = (self.plugin.clone(), self.cfg.clone(), self.plan);
        let spawned = std::thread::Builder::new()
            .name("eval-refit".into())
            .spawn(move || refit(&plugin, cfg, &plan, [&subset, &held_out, &taught], due));
        match spawned {
            Ok(handle) => self.pending = Some(Pending { due, handle }),
            Err(e) => {
                let error = format!("cannot start the refit thread: {e}");
                eprintln!("eval: refit due at step {due} failed, the model stays: {error}");
                self.log.push(*failed(due, error));
            }
        }
    }

    /// Adopts the pending refit at step `i`, teaching it the samples since its due step.
    fn adopt(
        &mut self,
        pending: Pending,
        i: usize,
        data: &Dataset,
        noise_var: &mut Vec<f64>,
    ) -> Result<bool, EvalError> {
        let outcome = pending
            .handle
            .join()
            .unwrap_or_else(|_| Err(failed(pending.due, "the refit thread panicked".into())));
        let mut ready = match outcome {
            Ok(ready) => ready,
            Err(summary) => {
                match (&summary.error, summary.held_out_nlpd) {
                    (Some(error), _) => eprintln!(
                        "eval: refit due at step {} failed, the model stays: {error}",
                        pending.due
                    ),
                    (None, Some((in_use, refit))) => eprintln!(
                        "eval: refit due at step {} kept the values in use (held-out NLPD {refit:.3} against {in_use:.3})",
                        pending.due
                    ),
                    (None, None) => eprintln!(
                        "eval: refit due at step {} kept the values in use (no held-out check possible)",
                        pending.due
                    ),
                }
                self.log.push(*summary);
                return Ok(false);
            }
        };
        for j in (pending.due..i).flat_map(|j| std::iter::repeat_n(j, data.update_count(j))) {
            let t = j as f64 * self.plan.dt_secs;
            ready
                .model
                .update(
                    data.x_update_row(j),
                    data.y_update_row(j),
                    t,
                    &ready.noise_var,
                )
                .map_err(|source| EvalError::Model {
                    step: j,
                    phase: "update (refitted model)",
                    source,
                })?;
        }
        ready.summary.adopted = Some(i);
        eprintln!(
            "eval: refit due at step {} in use from step {i} ({:.1} s): {}",
            pending.due, ready.summary.seconds, ready.summary.hyper
        );
        self.log.push(ready.summary);
        self.model = ready.model;
        self.cfg = ready.cfg;
        *noise_var = ready.noise_var;
        Ok(true)
    }
}

impl ModelSlot for Refitting {
    fn model(&mut self) -> &mut dyn OnlineModel {
        &mut self.model
    }

    fn before_step(
        &mut self,
        i: usize,
        data: &Dataset,
        noise_var: &mut Vec<f64>,
    ) -> Result<bool, EvalError> {
        // At a rate a refit may still run when the next is due: that one starts when the
        // first is done, on the samples there are by then.
        if self.pending.is_none()
            && (self.started as usize) < self.plan.max_refits
            && self.plan.due(self.started + 1).is_some_and(|due| i >= due)
        {
            self.started += 1;
            self.start(i, data);
        }
        let ready = self
            .pending
            .as_ref()
            .is_some_and(|p| !self.plan.background || p.handle.is_finished());
        match self.pending.take() {
            Some(pending) if ready => self.adopt(pending, i, data, noise_var),
            other => {
                self.pending = other;
                Ok(false)
            }
        }
    }
}

fn failed(due: usize, error: String) -> Box<RefitSummary> {
    Box::new(RefitSummary {
        due,
        adopted: None,
        points: 0,
        seconds: 0.0,
        nlml_init: f64::NAN,
        nlml: f64::NAN,
        hyper: Value::Null,
        held_out_nlpd: None,
        error: Some(error),
    })
}

/// Mean held-out NLPD summed over targets of the hyperparameters `hyper` (config format),
/// conditioned on `fitted`; `None` when they cannot be read or evaluated.
fn held_out_score(
    hyper_cfg: &Value,
    kind: KernelKind,
    fitted: &Dataset,
    held_out: &Dataset,
) -> Option<f64> {
    let p = fitted.output_dim();
    let outputs = hyper_outputs(hyper_cfg, p)?;
    let column = |data: &Dataset, o: usize| -> Vec<f64> {
        data.y.iter().skip(o).step_by(p).copied().collect()
    };
    outputs.iter().enumerate().try_fold(0.0, |sum, (o, h)| {
        let kernel = ArdKernel::new(kind, h.sigma_f, &h.lengthscales).ok()?;
        let nlpd = held_out_nlpd(
            &kernel,
            h.sigma_n,
            &fitted.x,
            &column(fitted, o),
            &held_out.x,
            &column(held_out, o),
        )
        .ok()?;
        nlpd.is_finite().then_some(sum + nlpd)
    })
}

/// The background work: fit on `subset`, check on `held_out` against the values in use,
/// create the model, teach it `taught`.
fn refit(
    plugin: &Plugin,
    mut cfg: Value,
    plan: &RefitPlan,
    [subset, held_out, taught]: [&Dataset; 3],
    due: usize,
) -> Result<Ready, Box<RefitSummary>> {
    let start = Instant::now();
    // Warm-started from the values in use: more data should refine them, and a fresh
    // start alone can land in another optimum of a multimodal likelihood.
    let warm = hyper_outputs(&cfg, subset.output_dim());
    let (hyper, fit) = fit_hyper(subset, plan.kind, subset.len(), plan.mode, warm)
        .map_err(|e| failed(due, e.to_string()))?;
    let in_use = cfg.clone();
    merge_hyper(&mut cfg, hyper.clone()).map_err(|e| failed(due, e.to_string()))?;
    let held_out_nlpd = match (
        held_out_score(&in_use, plan.kind, subset, held_out),
        held_out_score(&cfg, plan.kind, subset, held_out),
    ) {
        (Some(old), Some(new)) => Some((old, new)),
        _ => None,
    };
    let summary = RefitSummary {
        due,
        adopted: None,
        points: fit.n_used,
        seconds: 0.0,
        nlml_init: fit.nlml_init,
        nlml: fit.nlml,
        hyper,
        held_out_nlpd,
        error: None,
    };
    // Kept unless the refit predicts the samples it did not see better.
    if !held_out.is_empty() && held_out_nlpd.is_none_or(|(old, new)| new >= old) {
        return Err(Box::new(RefitSummary {
            seconds: start.elapsed().as_secs_f64(),
            ..summary
        }));
    }
    let (d, p) = (taught.input_dim(), taught.output_dim());
    let noise_var = noise_vars(&cfg, p).map_err(|e| failed(due, e.to_string()))?;
    let mut model = plugin
        .create_json(&cfg, d, p)
        .map_err(|e| failed(due, e.to_string()))?;
    for j in 0..taught.len() {
        let t = j as f64 * plan.dt_secs;
        model
            .update(taught.x_row(j), taught.y_row(j), t, &noise_var)
            .map_err(|e| failed(due, format!("teaching the refitted model sample {j}: {e}")))?;
    }
    // A model that learns in the background takes over once it has caught up, so that it
    // does not answer from the prior after the swap.
    let mut flags = vec![false; p];
    wait_ready(
        &mut model,
        &mut flags,
        due,
        plan.ready_timeout,
        &mut |_, _, _| {},
    )
    .map_err(|e| failed(due, e.to_string()))?;
    Ok(Ready {
        model,
        cfg,
        noise_var,
        summary: RefitSummary {
            seconds: start.elapsed().as_secs_f64(),
            ..summary
        },
    })
}
