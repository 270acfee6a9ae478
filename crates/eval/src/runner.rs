//! The evaluation loop: stream a [`Dataset`] through an [`OnlineModel`] in file order,
//! predict then update, and collect metrics, timings and (with truth) the calibrated-bound
//! coverage.
//!
//! Protocol (anchors/README.md §1.4): step 0 is not predicted and enters the metrics as
//! SMSE_0 = 1, NLL_0 = 0; every step i ≥ 1 calls `predict(x_i)` then `update(x_i, y_i)`.
//! Each call is timed alone with `Instant` (ns, into buffers preallocated for the stream);
//! the reported mean and p99 (nearest rank) are over the N − 1 predict calls and the update
//! calls (N, unless a `drop` or `duplicate` contamination changes how many). `update` gets `t_secs = i · dt_secs` and σ_n² of each target.
//!
//! Contaminated streams ([`super::contaminate`]): `predict` is called at the clean input, the
//! metrics compare with the clean target, and `update` gets the contaminated input and
//! target ([`Dataset::x_update_row`], [`Dataset::y_update_row`]).
//!
//! With truth columns (one per target):
//! * `truth_rmse`: RMSE of μ against the truth over the predicted steps i = 1..N−1;
//! * bound coverage: a [`CalibratedBound`] per target records r = |y − μ|/σ, σ = sqrt(latent
//!   variance), at the predicted steps of the first half (1 ≤ i < ⌊N/2⌋; y = the observed
//!   target by default, the truth with [`CalibrateOn::Truth`]), then freezes β_cal at the
//!   `bound_level` quantile; coverage is the fraction of the second half (i ≥ ⌊N/2⌋) with
//!   |truth − μ| ≤ η_cal = β_cal·σ. Calibrating on the observed targets is what a deployed
//!   robot can do; it includes the noise, so coverage of the truth tends to exceed the level.
//!
//! Pacing ([`Pacing`]): by default, after every update the loop waits until the model has
//! taken in every sample (its `readiness` reports none behind), so a background learner is
//! scored on what it learned; with [`Pacing::Rate`] it feeds samples at a wall-clock rate
//! and never waits. Either way every prediction is tallied as from the prior or from data
//! ([`super::readiness`]).

use std::time::{Duration, Instant};

use gpn_gp_core::bound::CalibratedBound;
use gpn_gp_core::metrics::{MetricsConfig, Prequential};
use gpn_gp_core::model::OnlineModel;

use super::EvalError;
use super::dataset::Dataset;
use super::readiness::ReadinessTally;
use super::report::{EvalReport, Timing, TruthReport};

/// What the calibrated bound is calibrated on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CalibrateOn {
    /// The observed (noisy) targets, as in deployment.
    #[default]
    Target,
    /// The truth columns.
    Truth,
}

/// How the stream is fed to a model whose learning runs partly in the background.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// After every update, wait until the model has taken in every sample given (its
    /// background caught up), so that each prediction reflects all earlier samples, as the
    /// prequential protocol assumes. Fails if one wait exceeds `timeout`.
    WaitReady {
        /// Longest wait at one step.
        timeout: Duration,
    },
    /// One sample per 1/`hz` seconds of wall-clock time, never waiting for the model: what a
    /// robot sampling at that rate gets.
    Rate {
        /// Samples per second.
        hz: f64,
    },
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing::WaitReady {
            timeout: Duration::from_secs(600),
        }
    }
}

/// Called while waiting for the model at a step: (step, samples behind, time waited there).
pub type WaitObserver<'a> = dyn FnMut(usize, u64, Duration) + 'a;

/// Settings of [`run_stream`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    /// σ_n² per target (MSLL and `update`'s `noise_var`).
    pub noise_var: Vec<f64>,
    /// Variance floor of the MSLL (1e-3 in the reference), in target units² unless
    /// `var_floor_relative`.
    pub var_floor: f64,
    /// `var_floor` is a fraction of each target's variance over the stream (for targets in
    /// physical units, where one absolute floor can dwarf a small target's variance).
    pub var_floor_relative: bool,
    /// Time between samples, for `update`'s `t_secs`.
    pub dt_secs: f64,
    /// Quantile level of the calibrated bound (0.95).
    pub bound_level: f64,
    /// What the calibrated bound is calibrated on.
    pub calibrate_on: CalibrateOn,
    /// Waiting for the model's background work, or a wall-clock rate.
    pub pacing: Pacing,
}

impl RunOptions {
    /// Reference settings with the given σ_n² per target.
    pub fn new(noise_var: Vec<f64>) -> Self {
        Self {
            noise_var,
            var_floor: 1e-3,
            var_floor_relative: false,
            dt_secs: 1.0,
            bound_level: 0.95,
            calibrate_on: CalibrateOn::Target,
            pacing: Pacing::default(),
        }
    }
}

/// Called with (step, mean, latent variance) after every prediction.
pub type PredictionObserver<'a> = dyn FnMut(usize, &[f64], &[f64]) + 'a;

/// How often (in samples) the progress callback is called.
pub const PROGRESS_EVERY: usize = 256;

/// Streams `data` through `model` (see the module doc) and reports under the name `plugin`.
/// `progress` is called with the number of samples done every [`PROGRESS_EVERY`] samples and
/// at the end.
pub fn run_stream(
    plugin: &str,
    model: &mut dyn OnlineModel,
    data: &Dataset,
    opts: &RunOptions,
    progress: &mut dyn FnMut(usize),
) -> Result<EvalReport, EvalError> {
    run_stream_observed(
        plugin,
        model,
        data,
        opts,
        progress,
        &mut |_, _, _| {},
        &mut |_, _, _| {},
    )
}

/// [`run_stream`], calling `on_prediction(step, mean, var)` after every prediction (outside
/// the timed calls), e.g. to write them out ([`super::predictions`]), and `on_wait` about
/// every [`WAIT_SLICE`] while waiting for the model ([`Pacing::WaitReady`]).
pub fn run_stream_observed(
    plugin: &str,
    mut model: &mut dyn OnlineModel,
    data: &Dataset,
    opts: &RunOptions,
    progress: &mut dyn FnMut(usize),
    on_prediction: &mut PredictionObserver<'_>,
    on_wait: &mut WaitObserver<'_>,
) -> Result<EvalReport, EvalError> {
    run_stream_in_slot(
        plugin,
        &mut model,
        data,
        opts,
        progress,
        on_prediction,
        on_wait,
    )
}

/// Where the runner finds the model at each step: one model for the whole stream, or one
/// that a [`ModelSlot::before_step`] may replace between steps (e.g. refitted
/// hyperparameters, [`super::refit`]).
pub trait ModelSlot {
    /// The model in use.
    fn model(&mut self) -> &mut dyn OnlineModel;
    /// Called before step i (its prediction), outside the timed calls, with the σ_n² per
    /// target in use: may put another model in the slot and change `noise_var` for the
    /// steps that follow; returns whether it did.
    fn before_step(
        &mut self,
        _i: usize,
        _data: &Dataset,
        _noise_var: &mut Vec<f64>,
    ) -> Result<bool, EvalError> {
        Ok(false)
    }
}

impl ModelSlot for &mut dyn OnlineModel {
    fn model(&mut self) -> &mut dyn OnlineModel {
        &mut **self
    }
}

/// [`run_stream_observed`] with the model in a [`ModelSlot`]. The report's `stats` are
/// the last model's.
pub fn run_stream_in_slot(
    plugin: &str,
    slot: &mut dyn ModelSlot,
    data: &Dataset,
    opts: &RunOptions,
    progress: &mut dyn FnMut(usize),
    on_prediction: &mut PredictionObserver<'_>,
    on_wait: &mut WaitObserver<'_>,
) -> Result<EvalReport, EvalError> {
    let n = data.len();
    let p = data.output_dim();
    check_dimensions(plugin, slot.model(), data, opts)?;
    let mut noise_var = opts.noise_var.clone();
    let mut metrics_config =
        MetricsConfig::new(opts.noise_var.clone()).with_var_floor(opts.var_floor);
    if opts.var_floor_relative {
        metrics_config = metrics_config.with_target_var_floors(
            data.target_variances()
                .into_iter()
                .map(|v| opts.var_floor * v)
                .collect(),
        );
    }
    let mut metrics = Prequential::new(metrics_config);
    metrics.check()?;
    let mut predict_ns: Vec<u64> = Vec::with_capacity(n.saturating_sub(1));
    let mut update_ns: Vec<u64> = Vec::with_capacity(2 * n);
    let (mut mean, mut var) = (vec![0.0; p], vec![0.0; p]);
    let mut tally = TruthTally::new(data, opts)?;
    let mut readiness = ReadinessTally::new(p);
    let mut waited = Duration::ZERO;
    let mut flags = vec![false; p];

    let wall = Instant::now();
    for i in 0..n {
        if let Pacing::Rate { hz } = opts.pacing {
            sleep_until(wall + Duration::from_secs_f64(i as f64 / hz));
        }
        if slot.before_step(i, data, &mut noise_var)? {
            metrics.set_noise_var(&noise_var)?;
        }
        let model = slot.model();
        let x = data.x_row(i);
        let y = data.y_row(i);
        if i == 0 {
            metrics.push(y, None)?;
        } else {
            let t0 = Instant::now();
            model
                .predict(x, &mut mean, &mut var)
                .map_err(|e| EvalError::Model {
                    step: i,
                    phase: "predict",
                    source: e,
                })?;
            predict_ns.push(elapsed_ns(t0));
            readiness.observe(i, model);
            on_prediction(i, &mean, &var);
            metrics
                .push(y, Some((&mean, &var)))
                .map_err(|e| EvalError::Prediction { step: i, source: e })?;
            if let Some(truth) = data.truth_row(i) {
                tally.observe(i, truth, &mean, &var, data, opts.calibrate_on);
            }
        }
        // Once, or not at all (dropped) or twice (duplicated) for such a contamination.
        for _ in 0..data.update_count(i) {
            let t0 = Instant::now();
            model
                .update(
                    data.x_update_row(i),
                    data.y_update_row(i),
                    i as f64 * opts.dt_secs,
                    &noise_var,
                )
                .map_err(|e| EvalError::Model {
                    step: i,
                    phase: "update",
                    source: e,
                })?;
            update_ns.push(elapsed_ns(t0));
        }
        if let Pacing::WaitReady { timeout } = opts.pacing {
            waited += wait_ready(model, &mut flags, i, timeout, on_wait)?;
        }
        if (i + 1) % PROGRESS_EVERY == 0 {
            progress(i + 1);
        }
    }
    progress(n);
    let wall_s = wall.elapsed().as_secs_f64();
    let report = metrics.finish()?;
    let truth = data.truth.is_some().then(|| tally.report(n));
    let stats = slot.model().stats();
    Ok(EvalReport {
        plugin: plugin.to_string(),
        n_samples: n,
        targets: data.target_names.clone(),
        metrics: report.targets,
        predict: Timing::from_ns(&mut predict_ns),
        update: Timing::from_ns(&mut update_ns),
        truth,
        stats,
        wall_s,
        contamination: data.contamination.clone(),
        model_info: None,
        readiness: readiness.report(),
        pacing: opts.pacing,
        wait_s: waited.as_secs_f64(),
        config: None,
        hyper: None,
        fit: None,
        refits: Vec::new(),
        var_floor: opts.var_floor,
        var_floor_relative: opts.var_floor_relative,
    })
}

/// How long one wait call lasts before `on_wait` is told (and the time-out checked).
pub const WAIT_SLICE: Duration = Duration::from_millis(100);

/// Waits until the model reports no sample behind (at once for a model that does not say);
/// returns the time waited. Fails after `timeout` at this step. `flags`: p entries of
/// scratch for `readiness`.
pub(crate) fn wait_ready(
    model: &mut dyn OnlineModel,
    flags: &mut [bool],
    step: usize,
    timeout: Duration,
    on_wait: &mut WaitObserver<'_>,
) -> Result<Duration, EvalError> {
    let start = Instant::now();
    loop {
        let behind = match model.readiness(flags) {
            Some(r) => r.samples_behind,
            None => return Ok(Duration::ZERO),
        };
        if behind == 0 {
            return Ok(start.elapsed());
        }
        let so_far = start.elapsed();
        if so_far > timeout {
            return Err(EvalError::Model {
                step,
                phase: "wait for readiness",
                source: gpn_gp_core::model::ModelError::Other(format!(
                    "the model's background work is still {behind} samples behind after {:.0} s; raise --wait-timeout or stream at a rate (--rate HZ)",
                    so_far.as_secs_f64()
                )),
            });
        }
        on_wait(step, behind, so_far);
        model
            .wait_ready(WAIT_SLICE)
            .map_err(|source| EvalError::Model {
                step,
                phase: "wait for readiness",
                source,
            })?;
    }
}

/// Sleeps until `deadline` (at once if it has passed).
fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}

/// The model must map the data's inputs to its targets, with one noise variance per target.
fn check_dimensions(
    plugin: &str,
    model: &dyn OnlineModel,
    data: &Dataset,
    opts: &RunOptions,
) -> Result<(), EvalError> {
    let d = data.input_dim();
    let p = data.output_dim();
    if model.input_dim() != d || model.output_dim() != p {
        return Err(EvalError::Config(format!(
            "model {plugin} has dimensions {}→{}, the data {d}→{p}",
            model.input_dim(),
            model.output_dim()
        )));
    }
    if opts.noise_var.len() != p {
        return Err(EvalError::Config(format!(
            "{} noise variances for {p} targets",
            opts.noise_var.len()
        )));
    }
    Ok(())
}

/// With truth columns: the error against the truth and the calibrated bound per target
/// (calibrated over the first half of the stream, tested over the second).
struct TruthTally {
    half: usize,
    /// Per target; empty without truth.
    calib: Vec<CalibratedBound>,
    sq_err: Vec<f64>,
    covered: Vec<usize>,
    /// Predicted steps of the second half.
    tested: usize,
}

impl TruthTally {
    fn new(data: &Dataset, opts: &RunOptions) -> Result<Self, EvalError> {
        let (n, p) = (data.len(), data.output_dim());
        let half = n / 2;
        let mut calib: Vec<CalibratedBound> = Vec::new();
        if data.truth.is_some() {
            for _ in 0..p {
                calib.push(CalibratedBound::new(
                    half.saturating_sub(1).max(1),
                    opts.bound_level,
                )?);
            }
        }
        Ok(Self {
            half,
            calib,
            sq_err: vec![0.0; p],
            covered: vec![0usize; p],
            tested: 0,
        })
    }

    /// Step `i`'s prediction against its truth: calibrates before the half, then freezes
    /// and counts coverage.
    fn observe(
        &mut self,
        i: usize,
        truth: &[f64],
        mean: &[f64],
        var: &[f64],
        data: &Dataset,
        calibrate_on: CalibrateOn,
    ) {
        for t in 0..mean.len() {
            let err = truth[t] - mean[t];
            self.sq_err[t] += err * err;
            let sigma = var[t].max(0.0).sqrt();
            // A dropped sample never reached the robot's learner: nothing to calibrate on.
            if i < self.half && data.update_count(i) > 0 {
                let observed = match calibrate_on {
                    CalibrateOn::Target => data.y_update_row(i)[t],
                    CalibrateOn::Truth => truth[t],
                };
                self.calib[t].observe(observed, mean[t], sigma);
            } else if i >= self.half {
                if i == self.half {
                    self.calib[t].freeze();
                }
                if self.calib[t].eta(sigma).is_some_and(|eta| err.abs() <= eta) {
                    self.covered[t] += 1;
                }
            }
        }
        if i >= self.half {
            self.tested += 1;
        }
    }

    /// RMSE against the truth over the `n` − 1 predicted steps, coverage, β_cal.
    fn report(&self, n: usize) -> TruthReport {
        let n_pred = n.saturating_sub(1).max(1) as f64;
        let tested = self.tested;
        TruthReport {
            rmse: self.sq_err.iter().map(|s| (s / n_pred).sqrt()).collect(),
            coverage: self
                .covered
                .iter()
                .zip(&self.calib)
                .map(|(&c, cb)| {
                    if tested > 0 && cb.beta_cal().is_some() {
                        c as f64 / tested as f64
                    } else {
                        f64::NAN
                    }
                })
                .collect(),
            beta_cal: self
                .calib
                .iter()
                .map(|c| c.beta_cal().unwrap_or(f64::NAN))
                .collect(),
            n_tested: tested,
        }
    }
}

fn elapsed_ns(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
