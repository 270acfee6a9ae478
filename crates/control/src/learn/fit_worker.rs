//! The learner's background thread: fits hyperparameters on the first admitted samples,
//! creates the model, warms it on those samples, and hands it to the control thread; it
//! also drops models the control thread retires, so no model is freed on the tick.
//!
//! Messages move buffers that already exist (`Vec`s, boxed models) through bounded
//! channels; the control thread only `try_send`s and `try_recv`s, never waits.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Instant;

use gpn_gp_core::hyperfit::{FitMode, FitOptions, OutputHyper, fit, held_out_nlpds, held_out_rows};
use gpn_gp_core::kernel::ArdKernel;
use gpn_gp_core::model::OnlineModel;

use super::branches::{Part, create_model, parse_parts, parts_hyper};
use super::change::{WarmNormaliser, standardised_innovation};
use super::gate::InnovationGate;
use super::noise_groups;
use super::probe::{ProbeOffer, ProbeParams, ProbeStart, plan_probe, stale_poses};
use super::sample_noise::base_noise_var;
use super::standardize::Standardizer;

/// Creates a model of `d` inputs and `p` outputs (the 2nd and 3rd arguments) from its
/// hyperparameters (the model config's `"hyper"` value: an array with one
/// `{sigma_f, sigma_n, lengthscales}` object per output). A split model
/// ([`super::branches`]) calls it once per part, with the part's dimensions. Runs off the
/// control thread.
pub type ModelFactory =
    Box<dyn FnMut(&serde_json::Value, usize, usize) -> Result<Box<dyn OnlineModel>, String> + Send>;

/// How fitted hyperparameters are shared across outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HyperSharing {
    /// Lengthscales shared, (σ_f, σ_n) per output (maximum likelihood).
    SharedLengthscales,
    /// As `SharedLengthscales`, then the noise-to-signal ratios σ_n²/σ_f² pooled into at
    /// most `max_noise_groups` groups (ratios within a factor 4 share one; each output keeps
    /// its σ_f): a model keeps one factorisation per group (`super::noise_groups`).
    Grouped,
    /// Lengthscales shared by maximum likelihood, then σ_f and σ_n replaced by their
    /// geometric means over the (standardised) outputs, so all outputs share one kernel and
    /// noise ratio and a model can keep one factorisation for all of them.
    Tied,
}

/// Sample buffers of a fit (allocated once by the learner, moved to the worker and back).
pub(super) struct FitBuffers {
    /// Inputs, row-major n×d.
    pub x: Vec<f64>,
    /// Raw targets, row-major n×p.
    pub y: Vec<f64>,
    /// Time stamps, n.
    pub t_secs: Vec<f64>,
    /// Raw noise variances, row-major n×p.
    pub noise_var: Vec<f64>,
    /// Innovations y − μ of the model that learned each sample (raw, NaN without), n×p.
    pub innovation: Vec<f64>,
}

impl FitBuffers {
    pub(super) fn with_capacity(n: usize, d: usize, p: usize) -> Self {
        Self {
            x: Vec::with_capacity(n * d),
            y: Vec::with_capacity(n * p),
            t_secs: Vec::with_capacity(n),
            noise_var: Vec::with_capacity(n * p),
            innovation: Vec::with_capacity(n * p),
        }
    }

    pub(super) fn clear(&mut self) {
        self.x.clear();
        self.y.clear();
        self.t_secs.clear();
        self.noise_var.clear();
        self.innovation.clear();
    }

    pub(super) fn push(
        &mut self,
        x: &[f64],
        y: &[f64],
        noise_var: &[f64],
        innovation: &[f64],
        t_secs: f64,
    ) {
        self.x.extend_from_slice(x);
        self.y.extend_from_slice(y);
        self.noise_var.extend_from_slice(noise_var);
        self.innovation.extend_from_slice(innovation);
        self.t_secs.push(t_secs);
    }

    pub(super) fn len(&self) -> usize {
        self.t_secs.len()
    }
}

/// Samples to fit on, moved to the worker.
pub(super) struct FitJob {
    pub samples: FitBuffers,
    pub d: usize,
    pub p: usize,
    /// At most this many samples (evenly spaced) enter the likelihood.
    pub max_points: usize,
    pub sharing: HyperSharing,
    /// Most groups of `HyperSharing::Grouped`.
    pub max_noise_groups: usize,
    /// Measure the change detector's normaliser while warming the model (None: detection off).
    pub normaliser: Option<WarmNormaliser>,
}

/// A model ready for adoption.
pub struct FitOutcome {
    /// The warmed model (learns standardised targets).
    pub model: Box<dyn OnlineModel>,
    /// The output map it was trained with.
    pub standardizer: Standardizer,
    /// The hyperparameters used, as the model config's `"hyper"` value.
    pub hyper: serde_json::Value,
    /// Wall time of fit + create + warm, s.
    pub fit_secs: f64,
    /// A loaded model's q̈ range per joint (empty: the samples the learner formed say it).
    pub accel_range: Vec<(f64, f64)>,
    /// The change detector's normaliser ν per output, measured while warming
    /// ([`WarmNormaliser`]); None: the detector warms up on the live samples.
    pub normaliser: Option<Vec<f64>>,
}

/// What a reply answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelChange {
    /// The first hyperparameter fit.
    Fit,
    /// A refit on the replay buffer.
    Refit,
    /// A swap to another plugin or configuration, warmed on the replay buffer.
    Swap,
    /// A model loaded from a file.
    Load,
    /// A fresh model with the current hyperparameters (reset keeping them).
    Fresh,
    /// The model rebuilt after a change of the dynamics (old samples inflated, dropped or
    /// corrected).
    Rebuild,
    /// The plugin for the first fit was changed (no model yet).
    FactorySet,
}

/// Identity and timing of a reply.
#[derive(Debug, Clone, Copy)]
pub struct ReplyMeta {
    /// What it answers.
    pub change: ModelChange,
    /// The caller's request id (0 for the learner's own fits).
    pub id: u64,
    /// When the worker finished.
    pub ready_at: Instant,
    /// Payload mass change identified by a `reidentify` rebuild, kg (NaN otherwise).
    pub reidentified_mass_kg: f64,
}

/// What a rebuild does to the samples older than a change's onset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Injection {
    /// Add this raw variance (N·m²) to their noise.
    Jump { before_t: f64, add_var: f64 },
    /// Leave them out.
    Drop { before_t: f64 },
    /// Correct them by the payload change identified on the samples after the onset.
    Reidentify { before_t: f64 },
}

impl Injection {
    /// The change's onset: samples before it are the stale ones.
    fn onset(self) -> f64 {
        match self {
            Injection::Jump { before_t, .. }
            | Injection::Drop { before_t }
            | Injection::Reidentify { before_t } => before_t,
        }
    }
}

/// What the worker needs to plan a probe after a rebuild, and where the offers go.
pub(super) struct Prober {
    pub robot: std::sync::Arc<crate::robot::Model>,
    /// How the model's input is formed from the plan's [q, q̇, q̈].
    pub layout: super::features::InputLayout,
    pub params: ProbeParams,
    pub offers: SyncSender<ProbeOffer>,
}

/// What a probe is planned from, taken before the injection drops or corrects the samples.
struct ProbeInput {
    stale: Vec<f64>,
    start_q: Vec<f64>,
    t_secs: f64,
    onset_secs: f64,
}

impl Prober {
    fn input(&self, samples: &FitBuffers, onset_secs: f64) -> Option<ProbeInput> {
        let n = samples.len();
        let d = samples.x.len().checked_div(n)?;
        let nv = self.robot.nv();
        let last = n.checked_sub(1)?;
        let rows = (0..n).map(|i| (samples.t_secs[i], &samples.x[i * d..(i + 1) * d]));
        Some(ProbeInput {
            stale: stale_poses(rows, nv, onset_secs, 10),
            start_q: samples.x[last * d..last * d + nv].to_vec(),
            t_secs: samples.t_secs[last],
            onset_secs,
        })
    }

    /// Plans from the newest pose, at rest, through the stale poses and back, checked with
    /// the rebuilt model (whose σ is large where the data went stale, so the pessimistic
    /// torque check is honest there), and offers the outcome. An offer nobody has taken yet
    /// is kept; a newer one is then dropped.
    fn offer(&self, input: ProbeInput, model: &mut dyn OnlineModel, standardizer: &Standardizer) {
        let clock = Instant::now();
        let nv = self.robot.nv();
        let rest = vec![0.0; nv];
        let start = ProbeStart {
            q: &input.start_q,
            v: &rest,
            a: &rest,
        };
        let mut var = vec![0.0; nv];
        let mut full = vec![0.0; self.layout.dim()];
        let mut predict = |x: &[f64], mu: &mut [f64], sigma: &mut [f64]| {
            self.layout.fill(x, &mut full);
            model
                .predict(&full, mu, &mut var)
                .map_err(|e| e.to_string())?;
            standardizer.inverse_mut(mu, &mut var);
            for (s, v) in sigma.iter_mut().zip(&var) {
                *s = v.max(0.0).sqrt();
            }
            Ok(())
        };
        let plan = plan_probe(&self.robot, start, &input.stale, &self.params, &mut predict);
        let _ = self.offers.try_send(ProbeOffer {
            t_secs: input.t_secs,
            onset_secs: input.onset_secs,
            plan,
            plan_ms: clock.elapsed().as_secs_f64() * 1e3,
        });
    }
}

/// What the worker needs to re-identify a payload: the nominal robot and the payload body.
pub(super) struct Reidentifier {
    pub robot: std::sync::Arc<crate::robot::Model>,
    pub data: crate::robot::Data,
    pub body: usize,
}

impl Reidentifier {
    /// The payload body's regressor at the sample input `x` = [q, q̇, q̈] of `nv` joints each.
    fn regressor_at(&mut self, x: &[f64], nv: usize) -> Result<&nalgebra::DMatrix<f64>, String> {
        crate::robot::regressor(
            &self.robot,
            &mut self.data,
            self.body,
            &x[..nv],
            &x[nv..2 * nv],
            &x[2 * nv..3 * nv],
        )
        .map_err(|e| e.to_string())
    }
}

/// Things the control thread hands over to be dropped here, never on the tick (the fields
/// are only ever dropped).
#[derive(Default)]
#[allow(dead_code)]
pub(super) struct Retired {
    pub model: Option<Box<dyn OnlineModel>>,
    pub standardizer: Option<Standardizer>,
    pub hyper: Option<serde_json::Value>,
    pub message: Option<String>,
    pub factory: Option<ModelFactory>,
    pub normaliser: Option<Vec<f64>>,
}

/// A model built elsewhere (a loaded file), to be adopted as it is.
pub struct ReadyModel {
    /// The model (learns standardised targets).
    pub model: Box<dyn OnlineModel>,
    /// Its output map.
    pub standardizer: Standardizer,
    /// Its hyperparameters.
    pub hyper: serde_json::Value,
    /// The q̈ range per joint of what it learned (empty: unknown).
    pub accel_range: Vec<(f64, f64)>,
}

pub(super) enum Job {
    Fit(FitJob, ModelChange),
    /// Create a model with `factory` (or the current one) and the current hyperparameters,
    /// warm it on `samples`.
    Warm {
        factory: Option<ModelFactory>,
        samples: FitBuffers,
        change: ModelChange,
        id: u64,
        injection: Option<Injection>,
        normaliser: Option<WarmNormaliser>,
    },
    Adopt(Box<ReadyModel>, u64),
    SetFactory(ModelFactory, u64),
    /// The caller's change `id` was cancelled: undo what handling it changed here (the
    /// factory and the hyperparameters in use), so a later rebuild uses the old ones.
    Cancel(u64),
    /// Plan a probe after every rebuild from now on.
    SetProber(Box<Prober>),
    Retire(Retired),
}

// Unboxed on purpose: the control thread takes the outcome apart, and freeing a box there
// would be a deallocation on the tick.
#[allow(clippy::large_enum_variant)]
pub(super) enum Reply {
    Ready(FitOutcome, Option<FitBuffers>, ReplyMeta),
    Failed(String, Option<FitBuffers>, ReplyMeta),
    /// A refit predicted the samples it did not see no better than the values in use,
    /// which stay (held-out NLPD: in use, refit).
    Kept((f64, f64), Option<FitBuffers>, ReplyMeta),
    FactorySet(ReplyMeta),
}

/// Handle of the worker thread; dropping it stops and joins the thread.
pub(super) struct FitWorker {
    jobs: Option<SyncSender<Job>>,
    replies: Receiver<Reply>,
    handle: Option<JoinHandle<()>>,
}

/// What a caller's change replaced on the worker.
struct Undo {
    id: u64,
    factory: Option<ModelFactory>,
    current: Option<(serde_json::Value, Standardizer)>,
}

/// The worker's side: the factory in use and the hyperparameters and output map of the
/// model in use (a swap reuses them).
struct WorkerState {
    factory: ModelFactory,
    /// Inputs and outputs of the learner's models.
    dims: (usize, usize),
    /// Base noise variance (N·m²) of an output whose σ_n the hyperparameters do not state.
    noise_fallback: f64,
    /// The kinematic split a fit builds (one part: a single model).
    parts: Vec<Part>,
    current: Option<(serde_json::Value, Standardizer)>,
    /// What the last caller's change replaced here, until a later one replaces it.
    undo: Option<Undo>,
    reidentifier: Option<Reidentifier>,
    prober: Option<Box<Prober>>,
}

impl WorkerState {
    /// Remembers what the caller's change `id` is about to replace (the factory, if it
    /// replaces it, and the hyperparameters in use), for [`Job::Cancel`].
    fn remember(&mut self, id: u64, factory: Option<ModelFactory>) {
        self.undo = Some(Undo {
            id,
            factory,
            current: self.current.clone(),
        });
    }

    fn handle(&mut self, job: Job) -> Option<Reply> {
        match job {
            Job::Retire(retired) => {
                drop(retired);
                None
            }
            Job::Fit(job, change) => Some(self.handle_fit(job, change)),
            Job::Warm {
                factory,
                samples,
                change,
                id,
                injection,
                normaliser,
            } => Some(self.handle_warm(factory, samples, (change, id), injection, normaliser)),
            Job::Adopt(ready, id) => Some(self.handle_adopt(*ready, id)),
            Job::SetProber(prober) => {
                self.prober = Some(prober);
                None
            }
            Job::SetFactory(factory, id) => {
                let old = std::mem::replace(&mut self.factory, factory);
                self.remember(id, Some(old));
                Some(Reply::FactorySet(meta(ModelChange::FactorySet, id)))
            }
            Job::Cancel(id) => {
                if let Some(undo) = self.undo.take_if(|u| u.id == id) {
                    if let Some(factory) = undo.factory {
                        self.factory = factory;
                    }
                    self.current = undo.current;
                }
                None
            }
        }
    }

    /// Fits hyperparameters on the job's samples and creates and warms a model.
    /// A refit starts also from the values in use and takes over only if it predicts the
    /// samples it was not fitted on better than they do.
    fn handle_fit(&mut self, job: FitJob, change: ModelChange) -> Reply {
        let in_use = match change {
            ModelChange::Refit => self.current.as_ref(),
            _ => None,
        };
        let fit = run_fit(
            &job,
            &mut self.factory,
            &self.parts,
            in_use,
            self.noise_fallback,
        );
        match fit {
            Ok(FitRun::New(outcome)) => {
                self.current = Some((outcome.hyper.clone(), outcome.standardizer.clone()));
                Reply::Ready(outcome, Some(job.samples), meta(change, 0))
            }
            Ok(FitRun::Kept(nlpd)) => Reply::Kept(nlpd, Some(job.samples), meta(change, 0)),
            Err(message) => Reply::Failed(message, Some(job.samples), meta(change, 0)),
        }
    }

    /// Creates a model with the current hyperparameters (and `factory`, if given, which then
    /// replaces the one in use) and warms it on `samples`, after applying `injection`; then
    /// offers a probe, if one is to be planned.
    fn handle_warm(
        &mut self,
        factory: Option<ModelFactory>,
        mut samples: FitBuffers,
        (change, id): (ModelChange, u64),
        injection: Option<Injection>,
        normaliser: Option<WarmNormaliser>,
    ) -> Reply {
        let Some((hyper, standardizer)) = self.current.clone() else {
            return Reply::Failed(
                "no hyperparameters yet: the first fit has not finished".into(),
                Some(samples),
                meta(change, id),
            );
        };
        let mut reidentified_mass_kg = f64::NAN;
        let probe_input = injection
            .zip(self.prober.as_ref())
            .and_then(|(injection, prober)| prober.input(&samples, injection.onset()));
        if let Some(injection) = injection {
            match apply_injection(&mut samples, injection, self.reidentifier.as_mut()) {
                Ok(mass) => reidentified_mass_kg = mass,
                Err(message) => {
                    return Reply::Failed(message, Some(samples), meta(change, id));
                }
            }
        }
        let built = self.warm_with(
            factory,
            id,
            (&hyper, &standardizer),
            &samples,
            normaliser.as_ref(),
        );
        match built {
            Ok(Warmed {
                mut model,
                secs,
                normaliser,
            }) => {
                if let (Some(prober), Some(input)) = (&self.prober, probe_input) {
                    prober.offer(input, model.as_mut(), &standardizer);
                }
                Reply::Ready(
                    FitOutcome {
                        model,
                        standardizer,
                        hyper,
                        fit_secs: secs,
                        accel_range: Vec::new(),
                        normaliser,
                    },
                    Some(samples),
                    ReplyMeta {
                        reidentified_mass_kg,
                        ..meta(change, id)
                    },
                )
            }
            Err(message) => Reply::Failed(message, Some(samples), meta(change, id)),
        }
    }

    /// Warms a model created by `factory` (which, if that succeeds, replaces the one in use,
    /// remembered for a cancel of `id`) or else by the factory in use.
    fn warm_with(
        &mut self,
        factory: Option<ModelFactory>,
        id: u64,
        (hyper, standardizer): (&serde_json::Value, &Standardizer),
        samples: &FitBuffers,
        normaliser: Option<&WarmNormaliser>,
    ) -> Result<Warmed, String> {
        match factory {
            Some(mut new) => {
                let built = warm(
                    &mut new,
                    (hyper, standardizer),
                    (self.dims, self.noise_fallback),
                    samples,
                    normaliser,
                );
                if built.is_ok() {
                    // The old factory is kept until a cancel or the next change
                    // (then dropped here, with its library handle).
                    let old = std::mem::replace(&mut self.factory, new);
                    self.remember(id, Some(old));
                }
                built
            }
            None => warm(
                &mut self.factory,
                (hyper, standardizer),
                (self.dims, self.noise_fallback),
                samples,
                normaliser,
            ),
        }
    }

    /// Adopts a model built elsewhere as it is.
    fn handle_adopt(&mut self, ready: ReadyModel, id: u64) -> Reply {
        let ReadyModel {
            model,
            standardizer,
            hyper,
            accel_range,
        } = ready;
        self.remember(id, None);
        self.current = Some((hyper.clone(), standardizer.clone()));
        Reply::Ready(
            FitOutcome {
                model,
                standardizer,
                hyper,
                fit_secs: 0.0,
                accel_range,
                normaliser: None,
            },
            None,
            meta(ModelChange::Load, id),
        )
    }
}

/// The identity of a reply, stamped now.
fn meta(change: ModelChange, id: u64) -> ReplyMeta {
    ReplyMeta {
        change,
        id,
        ready_at: Instant::now(),
        reidentified_mass_kg: f64::NAN,
    }
}

impl FitWorker {
    /// Starts the worker with `factory` for models of `dims` (inputs, outputs) whose outputs
    /// have the base noise variance `noise_fallback` (N·m²) where the hyperparameters state
    /// none, fitted split into `parts`; `current` are the hyperparameters and output map of
    /// a model the learner created itself (given hyperparameters).
    pub(super) fn spawn(
        factory: ModelFactory,
        (dims, noise_fallback): ((usize, usize), f64),
        parts: Vec<Part>,
        current: Option<(serde_json::Value, Standardizer)>,
        reidentifier: Option<Reidentifier>,
    ) -> std::io::Result<Self> {
        let (jobs, job_rx) = sync_channel::<Job>(8);
        let (reply_tx, replies) = sync_channel::<Reply>(4);
        let mut state = WorkerState {
            factory,
            dims,
            noise_fallback,
            parts,
            current,
            undo: None,
            reidentifier,
            prober: None,
        };
        let handle = std::thread::Builder::new()
            .name("gpn-fit".into())
            .spawn(move || {
                while let Ok(job) = job_rx.recv() {
                    if let Some(reply) = state.handle(job)
                        && reply_tx.send(reply).is_err()
                    {
                        break;
                    }
                }
            })?;
        Ok(Self {
            jobs: Some(jobs),
            replies,
            handle: Some(handle),
        })
    }

    /// Queues a job without waiting; gives it back if the queue is full (the job is moved,
    /// not copied, so its size does not matter).
    #[allow(clippy::result_large_err)]
    pub(super) fn try_send(&self, job: Job) -> Result<(), Job> {
        match &self.jobs {
            Some(tx) => tx.try_send(job).map_err(|e| match e {
                TrySendError::Full(j) | TrySendError::Disconnected(j) => j,
            }),
            None => Err(job),
        }
    }

    /// Waits up to `timeout` for a finished job (not real-time: for simulation and tests).
    /// Polls instead of blocking: a blocking receive registers a waker, an allocation on the
    /// control thread of a simulated-time loop.
    pub(super) fn recv_timeout(&self, timeout: std::time::Duration) -> Option<Reply> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.replies.try_recv() {
                Ok(reply) => return Some(reply),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => return None,
                Err(std::sync::mpsc::TryRecvError::Empty) if Instant::now() >= deadline => {
                    return None;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
        }
    }

    /// A finished job, if any, without waiting.
    pub(super) fn try_recv(&self) -> Option<Reply> {
        self.replies.try_recv().ok()
    }
}

impl Drop for FitWorker {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// Applies a rebuild's injection to the samples (raw units). Returns the identified payload
/// mass change for `Reidentify` (NaN otherwise).
fn apply_injection(
    samples: &mut FitBuffers,
    injection: Injection,
    reidentifier: Option<&mut Reidentifier>,
) -> Result<f64, String> {
    let n = samples.len();
    let p = samples.y.len().checked_div(n).unwrap_or(0);
    match injection {
        Injection::Jump { before_t, add_var } => {
            for i in (0..n).filter(|&i| samples.t_secs[i] < before_t) {
                for v in &mut samples.noise_var[i * p..(i + 1) * p] {
                    *v += add_var;
                }
            }
            Ok(f64::NAN)
        }
        Injection::Drop { before_t } => {
            retain(samples, |t| t >= before_t);
            Ok(f64::NAN)
        }
        Injection::Reidentify { before_t } => {
            let Some(reid) = reidentifier else {
                retain(samples, |t| t >= before_t);
                return Err("no payload link to re-identify (learn.change.payload_link is not a link of the robot)".into());
            };
            let (delta, residual_var) = identify(samples, before_t, reid)?;
            let d = samples.x.len() / n.max(1);
            let nv = p;
            for i in (0..n).filter(|&i| samples.t_secs[i] < before_t) {
                let x = &samples.x[i * d..(i + 1) * d];
                let y_reg = reid.regressor_at(x, nv)?;
                for j in 0..nv {
                    let correction: f64 = (0..10).map(|c| y_reg[(j, c)] * delta[c]).sum();
                    samples.y[i * p + j] += correction;
                    samples.noise_var[i * p + j] += residual_var[j];
                }
            }
            Ok(delta[0])
        }
    }
}

/// Least squares of the link regressor on the innovations after `before_t`: the change Δπ of
/// the payload body's ten inertial parameters (a small ridge keeps it defined when the
/// motion does not excite all of them), and the residual variance per joint.
fn identify(
    samples: &FitBuffers,
    before_t: f64,
    reid: &mut Reidentifier,
) -> Result<([f64; 10], Vec<f64>), String> {
    let n = samples.len();
    let p = samples.y.len() / n.max(1);
    let d = samples.x.len() / n.max(1);
    let nv = p;
    let mut ata = nalgebra::SMatrix::<f64, 10, 10>::zeros();
    let mut atb = nalgebra::SVector::<f64, 10>::zeros();
    let mut rows = Vec::new();
    for i in (0..n).filter(|&i| samples.t_secs[i] >= before_t) {
        let e = &samples.innovation[i * p..(i + 1) * p];
        if !e.iter().all(|v| v.is_finite()) {
            continue;
        }
        let x = &samples.x[i * d..(i + 1) * d];
        let y_reg = reid.regressor_at(x, nv)?;
        for j in 0..nv {
            let row = nalgebra::SVector::<f64, 10>::from_fn(|c, _| y_reg[(j, c)]);
            ata += row * row.transpose();
            atb += row * e[j];
            rows.push((j, row, e[j]));
        }
    }
    if rows.len() < 10 * nv {
        return Err(format!(
            "too few samples after the change to re-identify the payload ({} rows)",
            rows.len()
        ));
    }
    let ridge = 1e-6 * ata.trace() / 10.0 + 1e-12;
    let delta = (ata + nalgebra::SMatrix::<f64, 10, 10>::identity() * ridge)
        .cholesky()
        .ok_or("the re-identification's normal equations are singular")?
        .solve(&atb);
    let mut sum = vec![0.0; nv];
    let mut count = vec![0usize; nv];
    for (j, row, e) in &rows {
        sum[*j] += (e - (row.transpose() * delta)[(0, 0)]).powi(2);
        count[*j] += 1;
    }
    let residual_var = sum
        .iter()
        .zip(&count)
        .map(|(s, c)| s / (*c).max(1) as f64)
        .collect();
    let mut out = [0.0; 10];
    out.copy_from_slice(delta.as_slice());
    Ok((out, residual_var))
}

/// Keeps the samples whose time passes `keep`.
fn retain(samples: &mut FitBuffers, keep: impl Fn(f64) -> bool) {
    let n = samples.len();
    if n == 0 {
        return;
    }
    let (d, p) = (samples.x.len() / n, samples.y.len() / n);
    let mut w = 0;
    for i in 0..n {
        if !keep(samples.t_secs[i]) {
            continue;
        }
        if w != i {
            samples.x.copy_within(i * d..(i + 1) * d, w * d);
            samples.y.copy_within(i * p..(i + 1) * p, w * p);
            samples.noise_var.copy_within(i * p..(i + 1) * p, w * p);
            samples.innovation.copy_within(i * p..(i + 1) * p, w * p);
            samples.t_secs[w] = samples.t_secs[i];
        }
        w += 1;
    }
    samples.x.truncate(w * d);
    samples.y.truncate(w * p);
    samples.noise_var.truncate(w * p);
    samples.innovation.truncate(w * p);
    samples.t_secs.truncate(w);
}

/// A model warmed on samples.
struct Warmed {
    model: Box<dyn OnlineModel>,
    /// Wall time of create + warm, s.
    secs: f64,
    /// The change detector's normaliser measured on the way, if asked for and measurable.
    normaliser: Option<Vec<f64>>,
}

/// Creates a model with `factory` and `hyper` and teaches it `samples` in order (raw
/// targets, mapped through `standardizer`); with `normaliser`, the last of them are
/// predicted before they are learned, as the learner does, to measure ν
/// ([`WarmNormaliser`]).
fn warm(
    factory: &mut ModelFactory,
    (hyper, standardizer): (&serde_json::Value, &Standardizer),
    ((d, p), noise_fallback): ((usize, usize), f64),
    samples: &FitBuffers,
    normaliser: Option<&WarmNormaliser>,
) -> Result<Warmed, String> {
    let start = Instant::now();
    let mut model = create_model(hyper, d, p, |h, d, p| factory(h, d, p))?;
    let (mut y, mut var, mut base) = (vec![0.0; p], vec![0.0; p], vec![0.0; p]);
    base_noise_var(Some(hyper), standardizer.std(), noise_fallback, &mut base);
    let n = samples.len();
    let mut innovations = normaliser.and_then(|m| {
        m.first_measured(n)
            .map(|from| InnovationMeans::new(p, m, from))
    });
    for i in 0..n {
        let (Some(x), Some(y_raw), Some(nv)) = (
            samples.x.get(i * d..(i + 1) * d),
            samples.y.get(i * p..(i + 1) * p),
            samples.noise_var.get(i * p..(i + 1) * p),
        ) else {
            return Err(format!(
                "the new model's dimensions ({d} in, {p} out) do not match the samples"
            ));
        };
        y.copy_from_slice(y_raw);
        standardizer.forward_mut(&mut y);
        var.copy_from_slice(nv);
        standardizer.forward_var_mut(&mut var);
        for (v, b) in var.iter_mut().zip(&base) {
            *v += b;
        }
        if let Some(means) = innovations.as_mut()
            && i >= means.from
        {
            means.observe(model.as_mut(), x, (&y, &var), standardizer.std());
        }
        model
            .update(x, &y, samples.t_secs[i], &var)
            .map_err(|e| format!("warming the new model failed at sample {i}: {e}"))?;
    }
    Ok(Warmed {
        model,
        secs: start.elapsed().as_secs_f64(),
        normaliser: innovations.and_then(InnovationMeans::finish),
    })
}

/// Mean z² per output of the samples a model predicts before learning them, those the
/// learner's innovation gate would refuse left out, and those predicted while the model is
/// not ready (an output answering from the prior, or samples its background has not taken
/// in: its predictions will change when it has, as VBKS's do after its offline phase).
struct InnovationMeans<'a> {
    spec: &'a WarmNormaliser,
    /// The first sample measured.
    from: usize,
    gate: InnovationGate,
    sum: Vec<f64>,
    count: Vec<usize>,
    mu: Vec<f64>,
    var: Vec<f64>,
    from_prior: Vec<bool>,
}

impl<'a> InnovationMeans<'a> {
    fn new(p: usize, spec: &'a WarmNormaliser, from: usize) -> Self {
        Self {
            spec,
            from,
            gate: InnovationGate::default(),
            sum: vec![0.0; p],
            count: vec![0; p],
            mu: vec![0.0; p],
            var: vec![0.0; p],
            from_prior: vec![false; p],
        }
    }

    /// Predicts the sample (standardised target and noise variance) and adds its z².
    fn observe(
        &mut self,
        model: &mut dyn OnlineModel,
        x: &[f64],
        (y, noise_var): (&[f64], &[f64]),
        scale: &[f64],
    ) {
        self.from_prior.fill(false);
        let behind = model
            .readiness(&mut self.from_prior)
            .is_some_and(|r| r.samples_behind > 0);
        if behind || self.from_prior.contains(&true) {
            return;
        }
        let predicted = model.predict(x, &mut self.mu, &mut self.var);
        if predicted.is_err() || !self.mu.iter().chain(&self.var).all(|v| v.is_finite()) {
            return;
        }
        let (mu, var) = (&self.mu, &self.var);
        if self
            .gate
            .refuses(&self.spec.gate, scale, (y, mu), (var, noise_var))
        {
            return;
        }
        for j in 0..y.len() {
            let z2 = standardised_innovation(y[j] - mu[j], var[j], noise_var[j]).powi(2);
            if z2.is_finite() {
                self.sum[j] += z2;
                self.count[j] += 1;
            }
        }
    }

    /// ν per output, if at least half the window was measured for every output.
    fn finish(self) -> Option<Vec<f64>> {
        if self
            .count
            .iter()
            .any(|&c| c == 0 || 2 * c < self.spec.window)
        {
            return None;
        }
        Some(
            self.sum
                .iter()
                .zip(&self.count)
                .map(|(s, &c)| s / c as f64)
                .collect(),
        )
    }
}

fn per_output_json(outputs: &[OutputHyper]) -> serde_json::Value {
    serde_json::Value::Array(outputs.iter().map(OutputHyper::to_json).collect())
}

/// What a fit ended with.
enum FitRun {
    New(FitOutcome),
    /// A refit lost the held-out check (NLPD of the values in use, of the refit).
    Kept((f64, f64)),
}

/// What the hyperparameter fit chose.
enum FitChoice {
    /// These values (the config's `"hyper"`), fitted in this output map.
    New(serde_json::Value, Standardizer),
    /// The values in use stay (held-out NLPD of the values in use, of the refit).
    Kept((f64, f64)),
}

/// The values in use, when a refit is checked against them: their `"hyper"` value and the
/// output map they were fitted in.
type InUse<'a> = Option<&'a (serde_json::Value, Standardizer)>;

fn run_fit(
    job: &FitJob,
    factory: &mut ModelFactory,
    parts: &[Part],
    in_use: InUse<'_>,
    noise_fallback: f64,
) -> Result<FitRun, String> {
    let start = Instant::now();
    let (hyper, standardizer) = match fit_hyper(job, parts, in_use)? {
        FitChoice::New(hyper, standardizer) => (hyper, standardizer),
        FitChoice::Kept(nlpd) => return Ok(FitRun::Kept(nlpd)),
    };
    let dims = ((job.d, job.p), noise_fallback);
    let warmed = warm(
        factory,
        (&hyper, &standardizer),
        dims,
        &job.samples,
        job.normaliser.as_ref(),
    )?;
    Ok(FitRun::New(FitOutcome {
        model: warmed.model,
        standardizer,
        hyper,
        fit_secs: start.elapsed().as_secs_f64(),
        accel_range: Vec::new(),
        normaliser: warmed.normaliser,
    }))
}

/// Fits the hyperparameters of every part on an evenly spaced subset of the job's samples;
/// a refit (`in_use` given) also starts from the values in use and is kept out unless it
/// predicts the other samples better.
fn fit_hyper(job: &FitJob, parts: &[Part], in_use: InUse<'_>) -> Result<FitChoice, String> {
    let (d, p) = (job.d, job.p);
    let samples = &job.samples;
    let n = samples.len();
    if n < 2 {
        return Err(format!(
            "need at least 2 samples to fit hyperparameters, have {n}"
        ));
    }
    let standardizer = Standardizer::fit(&samples.y, p);
    let mut y_std = samples.y.clone();
    for row in y_std.chunks_mut(p) {
        standardizer.forward_mut(row);
    }
    // Evenly spaced subset: consecutive samples of a 1 kHz stream are nearly identical and
    // the likelihood costs O(n³).
    let m = job.max_points.clamp(2, n);
    let rows: Vec<usize> = (0..m).map(|i| i * (n - 1) / (m - 1).max(1)).collect();
    let whole = [Part::whole(d, p)];
    let fit_parts = if parts.len() > 1 { parts } else { &whole[..] };
    let old = in_use.and_then(|(hyper, old_std)| Some((by_part(hyper, d, p)?, old_std)));
    let mut per_part = Vec::with_capacity(fit_parts.len());
    for (k, part) in fit_parts.iter().enumerate() {
        let warm = old
            .as_ref()
            .and_then(|(old, old_std)| warm_start(old, old_std, &standardizer, part));
        let outputs = fit_outputs(job, &rows, &y_std, part, warm).map_err(|e| {
            if fit_parts.len() > 1 {
                format!("part {k} (outputs {:?}): {e}", part.outputs)
            } else {
                e
            }
        })?;
        per_part.push(outputs);
    }
    if let Some((old, old_std)) = &old {
        let held = held_out_rows(n, &rows, m);
        let new: Vec<(Part, Vec<OutputHyper>)> = fit_parts
            .iter()
            .cloned()
            .zip(per_part.iter().cloned())
            .collect();
        let score = |by_part: &[(Part, Vec<OutputHyper>)], map: &Standardizer| {
            held_out_scores(by_part, map, samples, (d, p), &rows, &held)
        };
        if let (Some(before), Some(after)) = (score(old, old_std), score(&new, &standardizer))
            && significantly_worse(&after, &before)
        {
            return Ok(FitChoice::Kept((mean(&before), mean(&after))));
        }
    }
    let hyper = if parts.len() > 1 {
        parts_hyper(parts, per_part.iter().map(|o| per_output_json(o)).collect())
    } else {
        per_output_json(&per_part[0])
    };
    Ok(FitChoice::New(hyper, standardizer))
}

/// A `"hyper"` value as per-output hyperparameters by part (a plain one: one part of all
/// inputs and outputs); `None` if it is not in the format a fit writes.
fn by_part(hyper: &serde_json::Value, d: usize, p: usize) -> Option<Vec<(Part, Vec<OutputHyper>)>> {
    let outputs = |list: &serde_json::Value| -> Option<Vec<OutputHyper>> {
        list.as_array()?
            .iter()
            .map(OutputHyper::from_json)
            .collect()
    };
    match parse_parts(hyper, d, p) {
        Some(parts) => parts
            .ok()?
            .into_iter()
            .map(|(part, h)| Some((part, outputs(&h)?)))
            .collect(),
        None => Some(vec![(Part::whole(d, p), outputs(hyper)?)]),
    }
}

/// The values in use for `part`, with σ_f and σ_n moved from the output map they were
/// fitted in to the new one: a refit's second start.
fn warm_start(
    old: &[(Part, Vec<OutputHyper>)],
    old_std: &Standardizer,
    new_std: &Standardizer,
    part: &Part,
) -> Option<Vec<OutputHyper>> {
    let (_, outputs) = old.iter().find(|(p, _)| p == part)?;
    Some(
        part.outputs
            .iter()
            .zip(outputs)
            .map(|(&o, h)| {
                let scale = old_std.std()[o] / new_std.std()[o];
                OutputHyper {
                    sigma_f: h.sigma_f * scale,
                    sigma_n: h.sigma_n * scale,
                    lengthscales: h.lengthscales.clone(),
                }
            })
            .collect(),
    )
}

/// Whether the refit's held-out scores `after` are worse than `before` (the values in use)
/// beyond the scatter of the comparison: the mean paired difference more than two standard
/// errors above zero. The two fits of a robot's first seconds differ by up to a few tenths
/// of a nat per sample (summed over the outputs), either way (measured in
/// `docs/results/models-in-the-loop.md`, item 2);
/// a tie keeps the refit, which has seen the later motion. A clearly worse refit (a
/// likelihood optimum that predicts badly, as on PUMA) stays out.
fn significantly_worse(after: &[f64], before: &[f64]) -> bool {
    let diff: Vec<f64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
    let n = diff.len();
    let m = mean(&diff);
    if n < 2 {
        return m > 0.0;
    }
    let var = diff.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
    m > 2.0 * (var / n as f64).sqrt()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// The NLPD of the raw targets at each of the `held` rows, summed over outputs, under
/// per-part hyperparameters fitted in the output map `map`, each output conditioned on the
/// `fitted` rows. In raw units (the map's ln σ_y added), so that values fitted in different
/// maps compare. `None` when there is nothing to check or a value cannot be evaluated.
fn held_out_scores(
    by_part: &[(Part, Vec<OutputHyper>)],
    map: &Standardizer,
    samples: &FitBuffers,
    (d, p): (usize, usize),
    fitted: &[usize],
    held: &[usize],
) -> Option<Vec<f64>> {
    if held.is_empty() {
        return None;
    }
    let inputs_at = |rows: &[usize], inputs: &[usize]| -> Vec<f64> {
        rows.iter()
            .flat_map(|&r| inputs.iter().map(move |&i| samples.x[r * d + i]))
            .collect()
    };
    let target_at = |rows: &[usize], o: usize| -> Vec<f64> {
        rows.iter()
            .map(|&r| (samples.y[r * p + o] - map.mean()[o]) / map.std()[o])
            .collect()
    };
    let mut total = vec![0.0; held.len()];
    for (part, outputs) in by_part {
        let (x, x_held) = (
            inputs_at(fitted, &part.inputs),
            inputs_at(held, &part.inputs),
        );
        for (&o, h) in part.outputs.iter().zip(outputs) {
            let kernel = ArdKernel::se(h.sigma_f, &h.lengthscales).ok()?;
            let each = held_out_nlpds(
                &kernel,
                h.sigma_n,
                &x,
                &target_at(fitted, o),
                &x_held,
                &target_at(held, o),
            )
            .ok()?;
            for (t, v) in total.iter_mut().zip(each) {
                *t += v + map.std()[o].ln();
            }
        }
    }
    total.iter().all(|t| t.is_finite()).then_some(total)
}

/// Fits the hyperparameters of `part`'s outputs on its inputs at the sample `rows`, shared
/// as `job.sharing` says.
fn fit_outputs(
    job: &FitJob,
    rows: &[usize],
    y_std: &[f64],
    part: &Part,
    warm: Option<Vec<OutputHyper>>,
) -> Result<Vec<OutputHyper>, String> {
    let (d, p) = (job.d, job.p);
    let (inputs, outputs) = (&part.inputs, &part.outputs);
    let (di, pi) = (inputs.len(), outputs.len());
    let (mut xs, mut ys) = (
        Vec::with_capacity(rows.len() * di),
        Vec::with_capacity(rows.len() * pi),
    );
    for &k in rows {
        xs.extend(inputs.iter().map(|&i| job.samples.x[k * d + i]));
        ys.extend(outputs.iter().map(|&o| y_std[k * p + o]));
    }
    let kernel = ArdKernel::se(1.0, &vec![1.0; di]).map_err(|e| e.to_string())?;
    let opts = FitOptions {
        mode: FitMode::SharedLengthscales,
        max_samples: rows.len(),
        warm_start: warm,
        ..FitOptions::default()
    };
    let mut result = fit(&kernel, &xs, &ys, di, pi, &opts)
        .map_err(|e| format!("hyperparameter fit failed: {e}"))?;
    match job.sharing {
        HyperSharing::SharedLengthscales => {}
        HyperSharing::Tied => {
            let geo = |f: &dyn Fn(&OutputHyper) -> f64| {
                (result.outputs.iter().map(|o| f(o).ln()).sum::<f64>() / pi as f64).exp()
            };
            let (sf, sn) = (geo(&|o| o.sigma_f), geo(&|o| o.sigma_n));
            for o in &mut result.outputs {
                o.sigma_f = sf;
                o.sigma_n = sn;
            }
        }
        HyperSharing::Grouped => {
            let ratios: Vec<f64> = result
                .outputs
                .iter()
                .map(|o| (o.sigma_n / o.sigma_f).powi(2))
                .collect();
            let groups = noise_groups::partition(&ratios, job.max_noise_groups);
            let pooled = noise_groups::pooled_ratios(&ratios, &groups);
            for (o, ratio) in result.outputs.iter_mut().zip(pooled) {
                o.sigma_n = o.sigma_f * ratio.sqrt();
            }
        }
    }
    Ok(result.outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 400 samples of two outputs over two inputs: y_0 = 3 sin(x_0) + 10, y_1 = x_1² − 2,
    /// with a small deterministic ripple for noise.
    fn samples() -> FitBuffers {
        let mut s = FitBuffers::with_capacity(400, 2, 2);
        for i in 0..400 {
            let t = i as f64 / 400.0;
            let x = [6.0 * t - 3.0, (17.0 * t).sin()];
            let ripple = 0.01 * (97.0 * t).sin();
            let y = [3.0 * x[0].sin() + 10.0 + ripple, x[1] * x[1] - 2.0 - ripple];
            s.push(&x, &y, &[0.0; 2], &[f64::NAN; 2], t);
        }
        s
    }

    /// The mean of [`held_out_scores`] (what a kept-out refit reports).
    fn held_out_score(
        by_part: &[(Part, Vec<OutputHyper>)],
        map: &Standardizer,
        samples: &FitBuffers,
        dims: (usize, usize),
        fitted: &[usize],
        held: &[usize],
    ) -> Option<f64> {
        held_out_scores(by_part, map, samples, dims, fitted, held).map(|s| mean(&s))
    }

    #[test]
    fn a_refit_stays_out_only_when_it_is_worse_beyond_the_comparison_scatter() {
        // Paired differences that scatter around a small mean (a tie) keep the refit.
        let before: Vec<f64> = (0..150).map(|i| (i as f64 * 0.37).sin()).collect();
        let tie: Vec<f64> = before
            .iter()
            .enumerate()
            .map(|(i, b)| b + 0.02 + 0.3 * (i as f64 * 1.3).cos())
            .collect();
        assert!(!significantly_worse(&tie, &before));
        // Worse on every sample by more than the scatter: it stays out.
        let worse: Vec<f64> = tie.iter().map(|t| t + 0.2).collect();
        assert!(significantly_worse(&worse, &before));
        // Better is never worse; one sample decides by its sign.
        let better: Vec<f64> = before.iter().map(|b| b - 0.5).collect();
        assert!(!significantly_worse(&better, &before));
        assert!(significantly_worse(&[1.0], &[0.5]) && !significantly_worse(&[0.5], &[1.0]));
    }

    fn hyper(sigma_f: f64, sigma_n: f64, lengthscale: f64) -> OutputHyper {
        OutputHyper {
            sigma_f,
            sigma_n,
            lengthscales: vec![lengthscale; 2],
        }
    }

    #[test]
    fn the_held_out_score_is_in_raw_units() {
        // The same values expressed in two output maps score the same: a refit fitted in a
        // new map compares with the values in use fitted in the old one.
        let s = samples();
        let rows: Vec<usize> = (0..400).step_by(8).collect();
        let held = held_out_rows(400, &rows, 50);
        let first = Standardizer::fit(&s.y, 2);
        let other = Standardizer::from_parts(vec![1.0, -4.0], vec![0.5, 7.0]).unwrap();
        let in_first = vec![(
            Part::whole(2, 2),
            vec![hyper(1.0, 0.05, 1.0), hyper(1.2, 0.1, 0.8)],
        )];
        let moved = warm_start(&in_first, &first, &other, &Part::whole(2, 2)).unwrap();
        let in_other = vec![(Part::whole(2, 2), moved)];
        let a = held_out_score(&in_first, &first, &s, (2, 2), &rows, &held).unwrap();
        let b = held_out_score(&in_other, &other, &s, (2, 2), &rows, &held).unwrap();
        // Not equal: the means differ between the maps, and a GP's prior mean is 0.
        assert!((a - b).abs() < 0.5, "{a} vs {b}");
        let c = held_out_score(&in_first, &other, &s, (2, 2), &rows, &held).unwrap();
        assert!(
            c > a + 1.0,
            "values fitted in one map scored in another: {c} vs {a}"
        );
    }

    #[test]
    fn a_refit_takes_over_only_when_it_predicts_the_unseen_samples_better() {
        let job = |max_points| FitJob {
            samples: samples(),
            d: 2,
            p: 2,
            max_points,
            sharing: HyperSharing::SharedLengthscales,
            max_noise_groups: 4,
            normaliser: None,
        };
        let map = Standardizer::fit(&samples().y, 2);
        // Values in use that predict nothing (lengthscales far below the data's spacing):
        // the refit takes over.
        let useless = serde_json::json!([
            hyper(1.0, 0.05, 1e-3).to_json(),
            hyper(1.0, 0.05, 1e-3).to_json()
        ]);
        let refit = fit_hyper(&job(40), &[], Some(&(useless, map.clone()))).unwrap();
        let FitChoice::New(fitted, fitted_map) = refit else {
            panic!("a refit lost against useless values");
        };
        // Values in use fitted on every sample against a refit on 6 of them.
        let FitChoice::New(good, good_map) = fit_hyper(&job(400), &[], None).unwrap() else {
            unreachable!("a first fit has nothing to lose against");
        };
        let small = job(6);
        let choice = fit_hyper(&small, &[], Some(&(good.clone(), good_map.clone()))).unwrap();
        let rows: Vec<usize> = (0..6).map(|i| i * 399 / 5).collect();
        let held = held_out_rows(400, &rows, 6);
        let score = |h: &serde_json::Value, m: &Standardizer| {
            held_out_score(
                &by_part(h, 2, 2).unwrap(),
                m,
                &small.samples,
                (2, 2),
                &rows,
                &held,
            )
            .unwrap()
        };
        // Six points cannot identify the lengthscales: the refit predicts the held-out
        // samples far worse, and the values in use stay.
        let FitChoice::Kept((before, after)) = choice else {
            panic!("a refit on 6 samples took over from values fitted on 400");
        };
        assert_eq!(before, score(&good, &good_map));
        assert!(after > before + 1.0, "{after} vs {before}");
        assert!(score(&fitted, &fitted_map).is_finite());
    }

    /// Predicts the last target it learned, with latent variance 0.25 (a persistence model:
    /// its innovations are the targets' increments).
    struct Persistence {
        last: Vec<f64>,
        /// What `readiness` reports as behind from this many updates on (None: never).
        behind_after: Option<usize>,
        seen: usize,
    }

    impl OnlineModel for Persistence {
        fn input_dim(&self) -> usize {
            1
        }
        fn output_dim(&self) -> usize {
            self.last.len()
        }
        fn predict(
            &mut self,
            _: &[f64],
            mean: &mut [f64],
            var: &mut [f64],
        ) -> Result<(), gpn_gp_core::model::ModelError> {
            mean.copy_from_slice(&self.last);
            var.fill(0.25);
            Ok(())
        }
        fn update(
            &mut self,
            _: &[f64],
            y: &[f64],
            _: f64,
            _: &[f64],
        ) -> Result<(), gpn_gp_core::model::ModelError> {
            self.last.copy_from_slice(y);
            self.seen += 1;
            Ok(())
        }
        fn readiness(&self, _: &mut [bool]) -> Option<gpn_gp_core::model::Readiness> {
            let behind = self.behind_after.is_some_and(|b| self.seen >= b);
            Some(gpn_gp_core::model::Readiness {
                samples_behind: u64::from(behind),
            })
        }
        fn stats(&self) -> gpn_gp_core::model::ModelStats {
            gpn_gp_core::model::ModelStats {
                samples_seen: 0,
                samples_stored: 0,
                experts: 1,
                memory_bytes: 0,
            }
        }
        fn state_bytes(&self) -> Result<Vec<u8>, gpn_gp_core::model::ModelError> {
            Ok(Vec::new())
        }
        fn restore_state_bytes(&mut self, _: &[u8]) -> Result<(), gpn_gp_core::model::ModelError> {
            Ok(())
        }
    }

    #[test]
    fn warming_measures_the_detectors_normaliser_on_the_last_samples_without_the_gated_ones() {
        // Targets whose increments vary, each sample with its own noise, one torque spike
        // (refused by the innovation gate going in and coming out) in the measured window.
        let n = 400;
        let mut s = FitBuffers::with_capacity(n, 1, 2);
        let target = |i: usize| {
            let t = i as f64;
            let spike = if i == 350 { 50.0 } else { 0.0 };
            [(0.3 * t).sin() + spike, 0.5 * (0.11 * t).cos()]
        };
        let noise = |i: usize| [0.01 * (i % 7) as f64, 0.02];
        for i in 0..n {
            s.push(
                &[0.0],
                &target(i),
                &noise(i),
                &[f64::NAN; 2],
                i as f64 * 1e-3,
            );
        }
        let fallback = 0.04; // the base noise variance (no σ_n in the hyperparameters)
        let persistence = |behind_after| {
            let factory: ModelFactory = Box::new(move |_, _, p| {
                Ok(Box::new(Persistence {
                    last: vec![0.0; p],
                    behind_after,
                    seen: 0,
                }) as Box<dyn OnlineModel>)
            });
            factory
        };
        let mut factory = persistence(None);
        let map = Standardizer::identity(2);
        let spec = WarmNormaliser {
            window: 100,
            gate: super::super::gate::GateParams::default(),
        };
        let hyper = serde_json::Value::Null;
        let warmed = warm(
            &mut factory,
            (&hyper, &map),
            ((1, 2), fallback),
            &s,
            Some(&spec),
        )
        .unwrap();
        let nu = warmed.normaliser.expect("measured");
        // Independently: z² = (y_i − y_{i−1})² / (0.25 + v_i + base) over samples 300..400,
        // without 350 and 351.
        for (j, got) in nu.iter().enumerate() {
            let kept: Vec<f64> = (300..n)
                .filter(|i| *i != 350 && *i != 351)
                .map(|i| {
                    let e = target(i)[j] - target(i - 1)[j];
                    e * e / (0.25 + noise(i)[j] + fallback)
                })
                .collect();
            let want = kept.iter().sum::<f64>() / kept.len() as f64;
            assert!(
                (got - want).abs() <= 1e-12 * want,
                "output {j}: {got} vs {want}"
            );
        }
        // Too few samples before the window (a model still learning), or no detector:
        // nothing measured.
        let spec_long = WarmNormaliser {
            window: 201,
            ..spec.clone()
        };
        let warmed = warm(
            &mut factory,
            (&hyper, &map),
            ((1, 2), fallback),
            &s,
            Some(&spec_long),
        )
        .unwrap();
        assert!(warmed.normaliser.is_none());
        let warmed = warm(&mut factory, (&hyper, &map), ((1, 2), fallback), &s, None).unwrap();
        assert!(warmed.normaliser.is_none());
        // A model whose background is behind predicts what it will not predict later: its
        // samples are not measured, and with fewer than half the window nothing is.
        let warmed = warm(
            &mut persistence(Some(340)),
            (&hyper, &map),
            ((1, 2), fallback),
            &s,
            Some(&spec),
        )
        .unwrap();
        assert!(warmed.normaliser.is_none());
        let warmed = warm(
            &mut persistence(Some(380)),
            (&hyper, &map),
            ((1, 2), fallback),
            &s,
            Some(&spec),
        )
        .unwrap();
        let nu = warmed.normaliser.expect("78 of 100 measured");
        assert!(nu.iter().all(|v| v.is_finite() && *v > 0.0));
    }
}
