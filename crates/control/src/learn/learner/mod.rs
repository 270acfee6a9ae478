//! `Learner`: turns the joint-state stream into learning samples and owns the model.
//!
//! Per joint-state sample (t_k, q_k, q̇_k, τ_k), where τ_k is the torque that acted over the
//! interval [t_{k−1}, t_k] (the measured joint torque, or the command held over it):
//! 1. q̈ over the interval from the velocity difference ([`AccelEstimator`]);
//! 2. the sample of the *previous* tick: x = [q_{k−1}, q̇_{k−1}, q̈], y = τ_k − τ_RBD(x);
//! 3. the gate ([`Gate`]) refuses impossible samples; decimation admits every n-th;
//! 4. before a model exists, admitted samples are collected; when `fit_samples` are in,
//!    the background worker fits hyperparameters (shared lengthscales), creates and warms
//!    the model, and the control thread adopts it at a tick boundary ([`Learner::poll`]);
//! 5. with a model: predict at x (prequential: for the calibrated bound), then update.
//!
//! Targets are standardised per output; [`Learner::predict`] answers in N·m. Noise
//! variance per sample: σ_τ² + M_jj²·Var(q̈_j) — the torque noise plus the q̈ estimate's
//! variance seen through the diagonal of the nominal inertia matrix (larger where q̈ came
//! from a noisy difference); the second term is computed only when a velocity noise is
//! configured.
//!
//! Real-time: after construction, `observe`, `predict` and `poll` allocate nothing and
//! never wait (the worker is reached through bounded channels with `try_send`).

use std::time::Instant;

use gpn_gp_core::bound::CalibratedBound;
use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel};

use super::accel::{AccelEstimator, AccelParams, AccelUpdate};
use super::branches::{create_model, kinematic_parts};
use super::change::{ChangeAction, ChangeNotice, ChangeParams, CoverageMonitor, Cusum};
use super::features::InputLayout;
use super::fit_worker::{
    FitBuffers, FitWorker, HyperSharing, Injection, Job, ModelFactory, Reidentifier, Reply,
    ReplyMeta,
};
use super::gate::{Gate, GateCounts, GateParams, InnovationGate, Rejection};
use super::replay::ReplayBuffer;
use super::sample_noise::base_noise_var;
use super::standardize::Standardizer;
use super::swap::{Finished, SwapEvent, SwapRequest, SwapSource};
use crate::robot::{Data, Model, crba, rnea};

mod dynamics_change;
mod model_change;

/// Settings of the learning pipeline.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearnParams {
    /// Admit every n-th sample that passes the gate (1: all).
    pub admit_every: u32,
    /// Admitted samples collected before hyperparameters are fitted (if not given).
    pub fit_samples: usize,
    /// Evenly spaced samples of those that enter the likelihood (cost O(n³)).
    pub fit_max_points: usize,
    /// How hyperparameters are shared across outputs.
    pub hyper_sharing: HyperSharing,
    /// Most noise-ratio groups of `hyper_sharing: grouped` (factorisations per expert).
    pub max_noise_groups: usize,
    /// Fit one model per class of joints with the same kinematic support (ancestors and
    /// descendants) on a tree robot — each finger of a hand, each arm of a two-arm robot —
    /// with the inputs it depends on (`super::branches`). No effect on a serial robot or
    /// with given hyperparameters. On by default since the friction features: with them the
    /// split passes the Allegro hand on every seed (worst joint 6–8× → 15–19×) and keeps
    /// Baxter above 28× (`docs/results/any-robot.md`, fifth pass).
    pub split_branches: bool,
    /// v_f of the friction features tanh(q̇_j / v_f) among the model's inputs, rad/s (m/s
    /// for a prismatic joint); 0 leaves them out (`super::features`).
    pub friction_feature_velocity_rad_s: f64,
    /// Samples kept for warming a replacement model (and for refits).
    pub replay_capacity: usize,
    /// Refit the hyperparameters after the model has learned this many samples, on the
    /// replay buffer, and swap in a model warmed on it (0: never). The first fit sees only
    /// the nominal law's motion; a refit sees the motion the learned law produces. A refit
    /// starts also from the values in use and takes over only if it predicts the replay
    /// samples it was not fitted on better than they do (held-out NLPD).
    pub refit_after_samples: usize,
    /// How many refits at most. Each waits twice as long as the one before (after
    /// `refit_after_samples`·2^k samples of the model in use), so that refits follow the
    /// data as it grows. Three refits, measured on issue 22's robot set (seeds 1–3), changed
    /// the residual and tracking errors by 1 % on average (`docs/results/hyperfit.md`).
    pub max_refits: u32,
    /// Standard deviation of the torque measurement, N·m: the noise a model is told for an
    /// output whose σ_n its hyperparameters do not state (otherwise σ_n², `sample_noise`).
    pub torque_noise_std_nm: f64,
    /// Acceleration estimation.
    pub accel: AccelParams,
    /// Gating of impossible samples.
    pub gate: GateParams,
    /// Quantile of |y − μ|/σ that calibrates η_cal.
    pub calibration_level: f64,
    /// Admitted samples (with a model) that calibrate η_cal before it is frozen.
    pub calibration_samples: usize,
    /// Changes of the dynamics: detection, reaction, coverage monitor.
    pub change: ChangeParams,
    /// Side query (b): a probing trajectory through the stale region after a change.
    pub probe: super::probe::ProbeParams,
}

impl Default for LearnParams {
    fn default() -> Self {
        Self {
            admit_every: 1,
            fit_samples: 1000,
            fit_max_points: 300,
            hyper_sharing: HyperSharing::Grouped,
            max_noise_groups: 4,
            split_branches: true,
            friction_feature_velocity_rad_s: 0.03,
            replay_capacity: 10_000,
            refit_after_samples: 3000,
            max_refits: 1,
            torque_noise_std_nm: 0.05,
            accel: AccelParams::default(),
            gate: GateParams::default(),
            calibration_level: 0.95,
            calibration_samples: 5000,
            change: ChangeParams::default(),
            probe: super::probe::ProbeParams::default(),
        }
    }
}

impl LearnParams {
    /// The model input these settings form for `nv` joints: the one layout the learner and
    /// a model file to be loaded into it are checked against.
    pub fn input_layout(&self, nv: usize) -> InputLayout {
        InputLayout::new(nv, self.friction_feature_velocity_rad_s)
    }
}

/// Where the learner is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LearnPhase {
    /// Collecting samples for the hyperparameter fit; the nominal law runs.
    Collecting,
    /// The fit runs on the background thread; the nominal law runs.
    Fitting,
    /// A model is learning and predicting.
    Active,
    /// Fitting or creating the model failed (see [`Learner::failure`]); nominal law only.
    Failed,
}

/// Gives a refused job's request back to the caller.
fn give_back(job: Job) -> Option<SwapRequest> {
    match job {
        Job::SetFactory(factory, id) => Some(SwapRequest {
            id,
            source: SwapSource::Warm(factory),
        }),
        Job::Adopt(ready, id) => Some(SwapRequest {
            id,
            source: SwapSource::Ready(ready),
        }),
        _ => None,
    }
}

/// A running model's learned state and what is needed to rebuild it (a model file's content).
#[derive(Debug, Clone)]
pub struct ModelSnapshot {
    /// Plugin name.
    pub plugin: String,
    /// Plugin version.
    pub plugin_version: String,
    /// Hyperparameters (the model config's `"hyper"`).
    pub hyper: serde_json::Value,
    /// Output map: raw = mean + std · standardised.
    pub output_mean: Vec<f64>,
    /// See `output_mean`.
    pub output_std: Vec<f64>,
    /// Input dimension.
    pub input_dim: usize,
    /// v_f of the friction features among the inputs (0: none).
    pub friction_feature_velocity: f64,
    /// Output dimension.
    pub output_dim: usize,
    /// Counters at the time.
    pub stats: ModelStats,
    /// Range of each joint's q̈ among the samples learned, rad/s² (queries are clamped into
    /// it: the model knows nothing beyond).
    pub accel_range: Vec<(f64, f64)>,
    /// The plugin's opaque state.
    pub state: Vec<u8>,
}

/// What one `observe` call did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Observation {
    /// The stream is (re)starting or the stamp did not advance; nothing learned.
    NoSample(AccelUpdate),
    /// The sample was refused by the gate.
    Rejected(Rejection),
    /// Passed the gate, skipped by decimation.
    Decimated,
    /// Collected for the hyperparameter fit.
    Collected,
    /// Learned by the model.
    Learned,
    /// Formed but not learned: the learner holds samples out ([`Learner::hold_out`]).
    HeldOut,
    /// The model failed to learn it (error or non-finite output).
    ModelFailed,
    /// Kept (in the replay buffer, with its innovation) but not learned: a re-identification
    /// is waiting for post-change data measured against the pre-change model; the rebuild
    /// learns it.
    Held,
}

/// Counters of the learner.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LearnCounts {
    /// Gate counters.
    pub gate: GateCounts,
    /// Samples the model learned.
    pub learned: u64,
    /// Model calls that failed.
    pub model_failures: u64,
    /// Duration of the last model update, µs.
    pub last_update_micros: f64,
    /// Duration of the last prequential predict, µs.
    pub last_learn_predict_micros: f64,
    /// Wall time of the hyperparameter fit + warm-up, s (0 until done).
    pub fit_secs: f64,
    /// Refits that took over.
    pub refits_adopted: u64,
    /// Refits that predicted the samples they were not fitted on no better than the values
    /// in use, which stayed (held-out NLPD, raw units).
    pub refits_kept: u64,
    /// The last kept refit's held-out NLPD: the values in use, the refit.
    pub last_kept_nlpd: (f64, f64),
}

struct Previous {
    valid: bool,
    q: Vec<f64>,
    v: Vec<f64>,
}

/// The learning pipeline and its model. See the module doc.
pub struct Learner {
    nv: usize,
    /// The model input: [q, q̇, q̈] and the friction features.
    layout: InputLayout,
    params: LearnParams,
    /// The nominal robot, shared with the worker's re-identifier and prober (one copy).
    robot: std::sync::Arc<Model>,
    data: Data,
    accel: AccelEstimator,
    gate: Gate,
    previous: Previous,
    model: Option<Box<dyn OnlineModel>>,
    standardizer: Standardizer,
    worker: Option<FitWorker>,
    phase: LearnPhase,
    failure: Option<String>,
    hyper: Option<serde_json::Value>,
    /// Sample buffers of the fit (at the worker while a fit runs).
    fit_buffers: Option<FitBuffers>,
    /// Samples learned by the current model.
    learned_by_model: usize,
    refits_done: u32,
    replay: ReplayBuffer,
    calibration: Vec<CalibratedBound>,
    decimation: u32,
    counts: LearnCounts,
    // Scratch, one sample.
    x: Vec<f64>,
    y: Vec<f64>,
    /// The sample's own noise variance (raw; the base is added when a model learns it).
    noise_var: Vec<f64>,
    y_std: Vec<f64>,
    noise_var_std: Vec<f64>,
    /// The model's base noise variance per output, standardised (`super::sample_noise`).
    noise_base_std: Vec<f64>,
    mu: Vec<f64>,
    var: Vec<f64>,
    /// A learning sample was formed by the last `observe` (x, y hold it, raw units).
    sample_formed: bool,
    /// Samples are formed (and reported) but not learned: a held-out evaluation.
    holding_out: bool,
    /// Per joint, the least and largest q̈ of the samples formed (the query's box).
    accel_seen: Vec<(f64, f64)>,
    /// Scratch: the query point with q̈ inside `accel_seen`.
    query: Vec<f64>,
    /// A reply taken by `wait_for_model`, adopted by the next `poll`.
    pending: Option<Reply>,
    /// The innovation check with its run of outliers (see [`GateParams::check_innovation`]).
    innovation_gate: InnovationGate,
    /// The replay buffer being copied into the fit buffers, a chunk per tick.
    export: Option<Export>,
    /// Results of model changes for the caller (preallocated; drained by the loop).
    events: Vec<SwapEvent>,
    /// The last model adoption.
    last_adoption: Option<ReplyMeta>,
    /// A ready model (a loaded file) is on its way through the worker.
    pending_adopt: bool,
    /// The caller's change (swap, load, plugin for the first fit) in progress.
    user_change: Option<u64>,
    /// That change was cancelled: its result is retired, never adopted.
    cancelled: Option<u64>,
    /// A cancelled change whose undo still has to reach the worker.
    undo_pending: Option<u64>,
    /// The last caller's change that finished, and how.
    finished: Option<(u64, Finished)>,
    /// Hyperparameters were given in the config: never refitted.
    hyper_fixed: bool,
    /// Change detection.
    cusum: Cusum,
    /// Coverage of ±η_cal on recent samples.
    coverage: CoverageMonitor,
    /// A change waiting for its reaction (when no other change is in progress).
    pending_change: Option<ChangeNotice>,
    /// Changes for the caller (preallocated; drained by the loop).
    change_notices: Vec<ChangeNotice>,
    /// Changes detected or announced so far.
    changes: u64,
    /// The payload mass change the last re-identification found, kg.
    reidentified_mass_kg: f64,
    /// Newest sample time seen, s.
    last_sample_t: f64,
    /// Scratch: innovations (raw) and standardised innovations of one sample.
    innovation: Vec<f64>,
    z: Vec<f64>,
}

/// Samples copied from the replay buffer per tick while preparing a refit or swap: about
/// 140 kB of copying, a few tens of µs (the whole buffer at once would cost a tick).
const EXPORT_CHUNK: usize = 500;

/// Capacity of the event list (a caller drains it every tick).
const EVENT_CAPACITY: usize = 16;

/// What a replay-buffer copy is for.
enum ExportPurpose {
    Refit,
    Swap { factory: ModelFactory, id: u64 },
    Fresh { id: u64 },
    Rebuild { injection: Injection },
}

struct Export {
    next: usize,
    purpose: ExportPurpose,
}

/// Why a learner could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// A setting is out of range.
    #[error("invalid learning parameter `{key}`: {reason}")]
    Param {
        /// The key.
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The model could not be created from the given hyperparameters.
    #[error("creating the model failed: {0}")]
    Model(String),
    /// The background thread could not be started.
    #[error("starting the fit thread failed: {0}")]
    Thread(#[from] std::io::Error),
}

/// Checks the settings [`Learner::new`] needs in range, in a fixed order (the first
/// violation is the error).
fn check_params(params: &LearnParams) -> Result<(), LearnError> {
    if params.admit_every == 0 {
        return Err(LearnError::Param {
            key: "admit_every",
            reason: "must be ≥ 1".into(),
        });
    }
    if params.calibration_samples == 0 || params.calibration_samples > 10_000_000 {
        return Err(LearnError::Param {
            key: "calibration_samples",
            reason: "must be in 1..=10000000".into(),
        });
    }
    if params.fit_samples > 1_000_000 || params.replay_capacity > 10_000_000 {
        return Err(LearnError::Param {
            key: "fit_samples/replay_capacity",
            reason: "too large (≤ 1e6 / 1e7)".into(),
        });
    }
    params.change.check().map_err(|reason| LearnError::Param {
        key: "change",
        reason,
    })?;
    params.probe.check().map_err(|reason| LearnError::Param {
        key: "probe",
        reason,
    })?;
    let v_f = params.friction_feature_velocity_rad_s;
    if !(v_f.is_finite() && v_f >= 0.0) {
        return Err(LearnError::Param {
            key: "friction_feature_velocity_rad_s",
            reason: format!("must be finite and ≥ 0 (0: no friction features), got {v_f}"),
        });
    }
    if params.fit_samples < 2 {
        return Err(LearnError::Param {
            key: "fit_samples",
            reason: "must be ≥ 2".into(),
        });
    }
    Ok(())
}

/// One calibrated bound per output.
fn calibration_bounds(params: &LearnParams, p: usize) -> Result<Vec<CalibratedBound>, LearnError> {
    (0..p)
        .map(|_| CalibratedBound::new(params.calibration_samples.max(1), params.calibration_level))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| LearnError::Param {
            key: "calibration_level",
            reason: e.to_string(),
        })
}

/// The model, phase and the worker's current (hyperparameters, output map): created now
/// with `hyper`, else none yet (collecting for the first fit).
#[allow(clippy::type_complexity)]
fn initial_model(
    hyper: Option<&serde_json::Value>,
    factory: &mut ModelFactory,
    layout: InputLayout,
) -> Result<
    (
        Option<Box<dyn OnlineModel>>,
        LearnPhase,
        Option<(serde_json::Value, Standardizer)>,
    ),
    LearnError,
> {
    let (d, p) = (layout.dim(), layout.nv());
    // Given hyperparameters are the likeliest to be for another input (files written for
    // [q, q̇, q̈] before the friction features): say what the input is.
    let input = |e: String| {
        let features = if layout.blocks() > 3 {
            " and the friction features tanh(q̇/v_f); learn.friction_feature_velocity_rad_s: 0 \
             leaves them out"
        } else {
            ""
        };
        LearnError::Model(format!(
            "{e} (the model's input has {d} values: q, q̇, q̈ of {p} joints{features})"
        ))
    };
    Ok(match hyper {
        Some(h) => (
            Some(create_model(h, d, p, |h, d, p| factory(h, d, p)).map_err(input)?),
            LearnPhase::Active,
            Some((h.clone(), Standardizer::identity(p))),
        ),
        None => (None, LearnPhase::Collecting, None),
    })
}

/// The worker's payload re-identifier, when the change settings' payload link is on a body
/// of the robot.
fn payload_reidentifier(
    robot: &Model,
    params: &LearnParams,
    shared_robot: &std::sync::Arc<Model>,
) -> Option<Reidentifier> {
    robot
        .body_of_link(&params.change.payload_link)
        .and_then(|(body, _)| match body {
            crate::robot::BodyRef::Body(b) => Some(b),
            crate::robot::BodyRef::World => None,
        })
        .map(|body| Reidentifier {
            robot: shared_robot.clone(),
            data: Data::new(robot),
            body,
        })
}

impl Learner {
    /// A learner for `robot` (nominal model). With `hyper` (the model config's `"hyper"`
    /// value, for raw N·m targets) the model is created now; without, hyperparameters are
    /// fitted on the first `fit_samples` admitted samples by a background thread.
    pub fn new(
        robot: &Model,
        params: LearnParams,
        hyper: Option<serde_json::Value>,
        mut factory: ModelFactory,
    ) -> Result<Self, LearnError> {
        let nv = robot.nv();
        check_params(&params)?;
        let layout = params.input_layout(nv);
        let (d, p) = (layout.dim(), nv);
        let calibration = calibration_bounds(&params, p)?;
        // The worker always runs: fits, swaps and retired models all go through it.
        let (model, phase, current) = initial_model(hyper.as_ref(), &mut factory, layout)?;
        let shared_robot = std::sync::Arc::new(robot.clone());
        let reidentifier = payload_reidentifier(robot, &params, &shared_robot);
        let parts = if params.split_branches {
            kinematic_parts(robot, layout.blocks())
        } else {
            Vec::new()
        };
        let noise_fallback = params.torque_noise_std_nm.powi(2);
        let worker = Some(FitWorker::spawn(
            factory,
            ((d, p), noise_fallback),
            parts,
            current,
            reidentifier,
        )?);
        let hyper_fixed = hyper.is_some();
        let fit_n = params.fit_samples;
        // Given hyperparameters are for raw targets (the identity output map).
        let mut noise_base_std = vec![0.0; p];
        base_noise_var(
            hyper.as_ref(),
            &vec![1.0; p],
            noise_fallback,
            &mut noise_base_std,
        );
        Ok(Self {
            nv,
            layout,
            accel: AccelEstimator::new(nv, params.accel.clone()),
            gate: Gate::new(robot.limits(), params.gate.clone()),
            previous: Previous {
                valid: false,
                q: vec![0.0; nv],
                v: vec![0.0; nv],
            },
            model,
            standardizer: Standardizer::identity(p),
            worker,
            phase,
            failure: None,
            hyper,
            fit_buffers: Some(FitBuffers::with_capacity(
                fit_n.max(params.replay_capacity),
                d,
                p,
            )),
            learned_by_model: 0,
            refits_done: 0,
            replay: ReplayBuffer::new(d, p, params.replay_capacity),
            calibration,
            decimation: 0,
            counts: LearnCounts::default(),
            x: vec![0.0; d],
            y: vec![0.0; p],
            noise_var: vec![0.0; p],
            y_std: vec![0.0; p],
            noise_var_std: vec![0.0; p],
            noise_base_std,
            sample_formed: false,
            holding_out: false,
            accel_seen: vec![(f64::INFINITY, f64::NEG_INFINITY); p],
            query: vec![0.0; d],
            pending: None,
            innovation_gate: InnovationGate::default(),
            export: None,
            events: Vec::with_capacity(EVENT_CAPACITY),
            last_adoption: None,
            pending_adopt: false,
            user_change: None,
            cancelled: None,
            undo_pending: None,
            finished: None,
            hyper_fixed,
            cusum: Cusum::new(p),
            coverage: CoverageMonitor::new(params.change.coverage_window),
            pending_change: None,
            change_notices: Vec::with_capacity(EVENT_CAPACITY),
            changes: 0,
            reidentified_mass_kg: f64::NAN,
            last_sample_t: f64::NEG_INFINITY,
            innovation: vec![f64::NAN; p],
            z: vec![0.0; p],
            mu: vec![0.0; p],
            var: vec![0.0; p],
            data: Data::new(robot),
            robot: shared_robot,
            params,
        })
    }

    /// Learns from one joint-state sample; `tau` is the torque that acted since the previous
    /// sample. Real-time: no allocation, no waiting.
    pub fn observe(&mut self, t_secs: f64, q: &[f64], v: &[f64], tau: &[f64]) -> Observation {
        self.sample_formed = false;
        let update = self.accel.push(t_secs, v);
        if update != AccelUpdate::Estimate || !self.previous.valid {
            if update != AccelUpdate::StaleStamp {
                self.remember(q, v);
            }
            return Observation::NoSample(update);
        }
        let observation = self.learn_interval(q, v, tau, t_secs);
        self.remember(q, v);
        observation
    }

    fn remember(&mut self, q: &[f64], v: &[f64]) {
        self.previous.q.copy_from_slice(q);
        self.previous.v.copy_from_slice(v);
        self.previous.valid = q.iter().chain(v).all(|x| x.is_finite());
    }

    fn learn_interval(&mut self, q: &[f64], v: &[f64], tau: &[f64], t_secs: f64) -> Observation {
        let nv = self.nv;
        let a = self.accel.accel();
        if let Err(rejection) = self.gate.check(
            &self.previous.q,
            &self.previous.v,
            q,
            v,
            self.accel.dt_secs(),
            a,
            tau,
        ) {
            return Observation::Rejected(rejection);
        }
        self.decimation += 1;
        if self.decimation < self.params.admit_every {
            return Observation::Decimated;
        }
        self.decimation = 0;
        self.x[..nv].copy_from_slice(&self.previous.q);
        self.x[nv..2 * nv].copy_from_slice(&self.previous.v);
        self.x[2 * nv..3 * nv].copy_from_slice(a);
        self.layout.fill_features(&mut self.x);
        // Held-out samples are not learned: the query box stays what the model knows.
        if !self.holding_out {
            for (seen, &qdd) in self.accel_seen.iter_mut().zip(a) {
                *seen = (seen.0.min(qdd), seen.1.max(qdd));
            }
        }
        let Ok(tau_rbd) = rnea(
            &self.robot,
            &mut self.data,
            &self.previous.q,
            &self.previous.v,
            a,
        ) else {
            return Observation::Rejected(Rejection::NonFinite);
        };
        for j in 0..nv {
            self.y[j] = tau[j] - tau_rbd[j];
        }
        self.noise_var.fill(0.0);
        if self.params.accel.velocity_noise_std_rad_s > 0.0
            && let Ok(m) = crba(&self.robot, &mut self.data, &self.previous.q)
        {
            for (j, var) in self.noise_var.iter_mut().enumerate() {
                *var += (m[(j, j)]).powi(2) * self.accel.variance()[j];
            }
        }
        let sample_t = t_secs - self.accel.dt_secs();
        self.last_sample_t = sample_t;
        self.innovation.fill(f64::NAN);
        self.sample_formed = true;
        if self.holding_out {
            return Observation::HeldOut;
        }
        self.replay
            .push(&self.x, &self.y, &self.noise_var, sample_t);
        match self.phase {
            LearnPhase::Collecting => self.collect(sample_t),
            LearnPhase::Active => self.learn_sample(sample_t),
            LearnPhase::Fitting | LearnPhase::Failed => Observation::Decimated,
        }
    }

    fn collect(&mut self, t_secs: f64) -> Observation {
        let Some(buffers) = self.fit_buffers.as_mut() else {
            return Observation::Decimated;
        };
        buffers.push(&self.x, &self.y, &self.noise_var, &self.innovation, t_secs);
        if buffers.len() >= self.params.fit_samples {
            if self.send_fit() {
                self.phase = LearnPhase::Fitting;
            } else {
                self.phase = LearnPhase::Failed;
                self.failure = Some("the fit thread is not running".to_owned());
            }
        }
        Observation::Collected
    }

    fn learn_sample(&mut self, t_secs: f64) -> Observation {
        if self.model.is_none() {
            return Observation::Decimated;
        }
        self.y_std.copy_from_slice(&self.y);
        self.standardizer.forward_mut(&mut self.y_std);
        self.noise_var_std.copy_from_slice(&self.noise_var);
        self.standardizer.forward_var_mut(&mut self.noise_var_std);
        for (v, base) in self.noise_var_std.iter_mut().zip(&self.noise_base_std) {
            *v += base;
        }
        let start = Instant::now();
        let Some(model) = self.model.as_mut() else {
            return Observation::Decimated;
        };
        let predicted = model.predict(&self.x, &mut self.mu, &mut self.var);
        self.counts.last_learn_predict_micros = start.elapsed().as_secs_f64() * 1e6;
        let prediction_ok =
            predicted.is_ok() && self.mu.iter().chain(&self.var).all(|v| v.is_finite());
        if prediction_ok && self.is_isolated_outlier() {
            self.gate.count_innovation_rejection();
            return Observation::Rejected(Rejection::Innovation);
        }
        if prediction_ok {
            for (j, cal) in self.calibration.iter_mut().enumerate() {
                cal.observe(self.y_std[j], self.mu[j], self.var[j].max(0.0).sqrt());
            }
            self.watch_for_change(t_secs);
        }
        if self
            .pending_change
            .is_some_and(|c| c.action == ChangeAction::Reidentify)
        {
            return Observation::Held;
        }
        let start = Instant::now();
        let Some(model) = self.model.as_mut() else {
            return Observation::Decimated;
        };
        let updated = model.update(&self.x, &self.y_std, t_secs, &self.noise_var_std);
        self.counts.last_update_micros = start.elapsed().as_secs_f64() * 1e6;
        match updated {
            Ok(()) => {
                self.counts.learned += 1;
                self.learned_by_model += 1;
                self.maybe_refit();
                Observation::Learned
            }
            Err(_) => {
                self.counts.model_failures += 1;
                Observation::ModelFailed
            }
        }
    }

    /// Whether the current sample is an isolated outlier against the prediction in `mu`,
    /// `var` (standardised units); see [`GateParams::check_innovation`].
    fn is_isolated_outlier(&mut self) -> bool {
        self.innovation_gate.refuses(
            self.gate.params(),
            self.standardizer.std(),
            (&self.y_std, &self.mu),
            (&self.var, &self.noise_var_std),
        )
    }

    /// Posterior mean (N·m) and latent variance ((N·m)²) of the residual at `x` =
    /// [q, q̇, q̈], with each q̈ clamped into the range of the q̈ of the samples formed so
    /// far. `Ok(false)` (and zeros) while no model is active. Real-time.
    pub fn predict(
        &mut self,
        x: &[f64],
        mean: &mut [f64],
        var: &mut [f64],
    ) -> Result<bool, ModelError> {
        let Some(model) = self.model.as_mut() else {
            mean.fill(0.0);
            var.fill(0.0);
            return Ok(false);
        };
        // q̈ of the query is the law's command, not a measurement: under the nominal law a
        // joint whose true inertia exceeds the model's accelerates less than commanded, so
        // the commands reach beyond every q̈ learned. There an SE-kernel model bends back to
        // its mean, a negative slope in q̈ that can cancel the law's inertia; at the edge of
        // what was learned the slope is zero, as for the nominal law. (Extrapolating the
        // model's slope linearly instead — a rigid body's torque is affine in q̈ — was
        // measured worse on the robot set: `docs/results/any-robot.md`.)
        let nv = self.nv;
        let query = &mut self.query;
        if x.len() == 3 * nv {
            self.layout.fill(x, query);
            for (qdd, &(lo, hi)) in query[2 * nv..3 * nv].iter_mut().zip(&self.accel_seen) {
                if lo <= hi {
                    *qdd = qdd.clamp(lo, hi);
                }
            }
            model.predict(query, mean, var)?;
        } else {
            model.predict(x, mean, var)?;
        }
        self.standardizer.inverse_mut(mean, var);
        Ok(true)
    }

    /// η_cal = β_cal·σ of joint j, once calibrated (σ in N·m).
    pub fn calibrated_bound(&self, joint: usize, sigma_nm: f64) -> Option<f64> {
        let scale = self.standardizer.std()[joint];
        self.calibration[joint]
            .eta(sigma_nm / scale)
            .map(|eta| eta * scale)
    }

    /// From now on forms samples (reported with each output) but learns none of them, nor
    /// keeps them for refits: the rest of the stream is a held-out test set.
    pub fn hold_out(&mut self) {
        self.holding_out = true;
    }

    /// The observation-noise variance of each output in use, (N·m)² (σ_n² of the
    /// hyperparameters; with [`Learner::predict`]'s latent variance, the predictive variance).
    pub fn noise_var(&self) -> Vec<f64> {
        self.noise_base_std
            .iter()
            .zip(self.standardizer.std())
            .map(|(v, s)| v * s * s)
            .collect()
    }

    /// Freezes the calibrated bounds on what was recorded so far (e.g. at half the run).
    pub fn freeze_calibration(&mut self) {
        self.calibration
            .iter_mut()
            .for_each(CalibratedBound::freeze);
    }

    /// β_cal per joint once frozen.
    pub fn beta_cal(&self) -> Vec<Option<f64>> {
        self.calibration
            .iter()
            .map(CalibratedBound::beta_cal)
            .collect()
    }

    /// New gate settings. Real-time (the settings hold no heap data).
    pub fn set_gate_params(&mut self, params: &GateParams) {
        self.gate.set_params(params);
        self.params.gate.clone_from(params);
    }

    /// Learn every n-th admitted sample (n ≥ 1; 0 is taken as 1). Real-time.
    pub fn set_admit_every(&mut self, n: u32) {
        self.params.admit_every = n.max(1);
    }

    /// The learning settings in force.
    pub fn params(&self) -> &LearnParams {
        &self.params
    }

    /// Current phase.
    pub fn phase(&self) -> LearnPhase {
        self.phase
    }

    /// Why fitting or creating the model failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The model's counters, if a model is active.
    pub fn model_stats(&self) -> Option<ModelStats> {
        self.model.as_ref().map(|m| m.stats())
    }

    /// The hyperparameters in use (the model config's `"hyper"` value), once known.
    pub fn hyper(&self) -> Option<&serde_json::Value> {
        self.hyper.as_ref()
    }

    /// Counters.
    pub fn counts(&self) -> LearnCounts {
        LearnCounts {
            gate: self.gate.counts(),
            ..self.counts
        }
    }

    /// The replay buffer (recent admitted samples, raw units).
    pub fn replay(&self) -> &ReplayBuffer {
        &self.replay
    }

    /// The learning sample (x, y in raw units) formed by the last `observe`, if one was
    /// (it passed the gate and the decimation).
    pub fn last_sample(&self) -> Option<(&[f64], &[f64])> {
        self.sample_formed
            .then_some((&self.x[..3 * self.nv], self.y.as_slice()))
    }

    /// N·m per standardised unit, per output (1 without standardisation).
    pub fn output_scale(&self) -> &[f64] {
        self.standardizer.std()
    }

    /// Joints (outputs of the model).
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// Input dimension of the model: 3·nv, or 4·nv with the friction features.
    pub fn input_dim(&self) -> usize {
        self.layout.dim()
    }
}
