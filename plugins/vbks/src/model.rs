//! [`Vbks`]: the phases of the model and the [`OnlineModel`] implementation.
//!
//! Phases:
//!
//! 1. **Collecting** (the first N = `offline_samples` updates): samples are copied into
//!    buffers reserved at create.
//! 2. **Offline**: the N-th update hands the buffers to the background thread, which runs
//!    the offline phase (`offline.rs`). Later samples wait in a bounded queue
//!    (`pending_capacity`; when full the oldest is dropped and counted). With
//!    `wait_for_offline` the N-th update instead blocks until the phase is done, so an
//!    evaluation is reproducible.
//! 3. **Online**: the ensemble is adopted at the next call; queued samples are folded in,
//!    `catchup_per_update` per update, before the newest; then each update costs
//!    O(K̃ (M d + M²)) on the calling thread and predictions use the mixture.
//!
//! **What predict returns before the ensemble is ready** (phases 1–2): the warm-up model
//! ([`Warmup`]) once it is built; before that, or with `warmup_samples: 0`, the running mean and
//! population variance of each output over the samples seen so far (before any sample:
//! mean 0 and variance σ_f² of the `hyper` seed, else 1) — the prior of a GP on the
//! standardised targets. `stats().experts` is 0 and `describe` reports the phase, so a
//! caller can tell this fallback from the model.
//!
//! If the offline phase fails, the call that learns of it returns the error once; the
//! model then stays on the fallback.
//!
//! In the online phase the model also sends the components' online evidence (L_i* plus
//! the prequential log predictive density of the online samples, `component.rs`) to the
//! background thread every `belief_refit_every` samples for a warm-started belief refit,
//! and, with forgetting (λ < 1), a copy of one component's statistics every
//! `refactor_every` samples for an exact refactorisation; results are adopted at the next
//! call (the samples since the copy are replayed from a ring of recent samples).
//!
//! Real-time: in steady state `predict` and `update` allocate nothing and take no lock.

use std::time::{Duration, Instant};

use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel, Readiness, check_sample};

use crate::config::{Config, PredictWith, ValidConfig};
use crate::ensemble::Ensemble;
use crate::inject::DriftState;
use crate::offline::OfflineReport;
use crate::worker::{BeliefJob, Job, OfflineJob, Ready, RefactorJob, Reply, Worker};

/// Which phase the model is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Collecting the first N samples.
    Collecting,
    /// The offline phase runs in the background.
    Offline,
    /// The ensemble predicts.
    Online,
    /// The offline phase failed; predictions stay on the fallback.
    Failed,
}

impl Phase {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Collecting => "collecting",
            Phase::Offline => "offline",
            Phase::Online => "online",
            Phase::Failed => "failed",
        }
    }
}

/// A fixed-capacity FIFO of samples (x, y, weight, `extra` more values, sequence number),
/// allocated once. With drift the extras are the stamp and the caller's noise (1 + p).
#[derive(Debug, Clone)]
pub(crate) struct SampleRing {
    stride: usize,
    d: usize,
    p: usize,
    extra: usize,
    data: Vec<f64>,
    seq: Vec<u64>,
    head: usize,
    len: usize,
}

impl SampleRing {
    pub(crate) fn new(capacity: usize, d: usize, p: usize) -> SampleRing {
        SampleRing::with_extra(capacity, d, p, 0)
    }

    pub(crate) fn with_extra(capacity: usize, d: usize, p: usize, extra: usize) -> SampleRing {
        let stride = d + p + 1 + extra;
        SampleRing {
            stride,
            d,
            p,
            extra,
            data: vec![0.0; capacity * stride],
            seq: vec![0; capacity],
            head: 0,
            len: 0,
        }
    }

    fn capacity(&self) -> usize {
        self.seq.len()
    }

    /// Append; when full the oldest is overwritten. Returns true if one was dropped.
    pub(crate) fn push(&mut self, x: &[f64], y: &[f64], w: f64, seq: u64) -> bool {
        self.push_ext(x, y, w, seq, &[])
    }

    /// `push` with the extra values (`extra` of them; missing ones are 0).
    pub(crate) fn push_ext(&mut self, x: &[f64], y: &[f64], w: f64, seq: u64, ext: &[f64]) -> bool {
        let cap = self.capacity();
        if cap == 0 {
            return true;
        }
        let dropped = self.len == cap;
        let slot = (self.head + self.len) % cap;
        let row = &mut self.data[slot * self.stride..(slot + 1) * self.stride];
        row[..self.d].copy_from_slice(x);
        row[self.d..self.d + self.p].copy_from_slice(y);
        row[self.d + self.p] = w;
        let extra = &mut row[self.d + self.p + 1..];
        for (i, v) in extra.iter_mut().enumerate() {
            *v = ext.get(i).copied().unwrap_or(0.0);
        }
        self.seq[slot] = seq;
        if dropped {
            self.head = (self.head + 1) % cap;
        } else {
            self.len += 1;
        }
        dropped
    }

    /// The k-th oldest entry: (x, y, w, seq).
    pub(crate) fn get(&self, k: usize) -> (&[f64], &[f64], f64, u64) {
        let slot = (self.head + k) % self.capacity();
        let row = &self.data[slot * self.stride..(slot + 1) * self.stride];
        (
            &row[..self.d],
            &row[self.d..self.d + self.p],
            row[self.d + self.p],
            self.seq[slot],
        )
    }

    /// The extra values of the k-th oldest entry.
    pub(crate) fn extra(&self, k: usize) -> &[f64] {
        let slot = (self.head + k) % self.capacity();
        &self.data[slot * self.stride + self.d + self.p + 1..(slot + 1) * self.stride]
    }

    /// Extra values per entry.
    pub(crate) fn n_extra(&self) -> usize {
        self.extra
    }

    /// Remove the oldest entry.
    pub(crate) fn pop_front(&mut self) {
        if self.len > 0 {
            self.head = (self.head + 1) % self.capacity();
            self.len -= 1;
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        8 * (self.data.len() + self.seq.len())
    }
}

/// Counters for `describe`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Samples dropped from the pending queue (it was full).
    pub pending_dropped: u64,
    /// Belief refits adopted.
    pub belief_refits: u64,
    /// Background refactorisations adopted.
    pub refactors: u64,
    /// Refactorisations discarded (the replay ring no longer held the gap).
    pub refactors_stale: u64,
    /// Samples folded into the ensemble.
    pub online_samples: u64,
}

/// The VBKS ensemble model. See the crate root doc for the configuration.
pub struct Vbks {
    pub(crate) cfg: ValidConfig,
    pub(crate) phase: Phase,
    // Collecting.
    pub(crate) buf_x: Vec<f64>,
    pub(crate) buf_y: Vec<f64>,
    pub(crate) pending: SampleRing,
    // Fallback moments (Welford) of the targets seen.
    pub(crate) fb_n: u64,
    pub(crate) fb_mean: Vec<f64>,
    pub(crate) fb_m2: Vec<f64>,
    // Online.
    pub(crate) ensemble: Option<Box<Ensemble>>,
    pub(crate) report: Option<Box<OfflineReport>>,
    pub(crate) belief_job: Option<Box<BeliefJob>>,
    /// Copy of the belief's parameters for `save` (kept current without allocation).
    pub(crate) belief_theta: Vec<f64>,
    pub(crate) refactor_jobs: Vec<Option<Box<RefactorJob>>>,
    pub(crate) since_refactor: Vec<u64>,
    pub(crate) replay: SampleRing,
    pub(crate) since_belief: u64,
    pub(crate) counters: Counters,
    pub(crate) samples_seen: u64,
    pub(crate) last_t_secs: f64,
    pub(crate) failure: Option<String>,
    pub(crate) failure_reported: bool,
    tmp_x: Vec<f64>,
    tmp_y: Vec<f64>,
    /// The latest `noise_var` passed to `update` (the caller's own noise, per output).
    pub(crate) last_noise_var: Vec<f64>,
    /// Uncertainty injection (`drift` key), allocated at create.
    pub(crate) drift: Option<Box<DriftState>>,
    /// Scratch: stamp and noise of a queued sample (1 + p).
    tmp_ext: Vec<f64>,
    pub(crate) worker: Worker,
    pub(crate) warmup: Warmup,
}

/// Most samples a warm-up model is built from (an evenly spaced subset of the samples so
/// far): bounds the copy on the control thread and the build on the warm-up thread.
pub(crate) const WARMUP_MAX_ROWS: usize = 2000;

/// The warm-up model (`warmup_samples`): what predicts between the first
/// `warmup_samples` samples and the end of the offline phase. It is built on a thread of
/// its own (the offline phase holds the model's worker), from the samples so far, and
/// rebuilt each time the samples seen double, so its inducing inputs follow the robot into
/// the states it visits later; between builds it learns every sample.
pub(crate) struct Warmup {
    /// The job's buffers, sized at create, while no build is in flight (None otherwise).
    pub job: Option<Box<OfflineJob>>,
    /// Its own background thread (None when warm-up is off).
    pub worker: Option<Worker>,
    /// Samples seen at which the next build starts.
    pub next_build: u64,
    /// Builds adopted.
    pub builds: u64,
    /// Sent to the background thread, no reply yet.
    pub in_flight: bool,
    /// The model, once built (until the ensemble replaces it).
    pub model: Option<Box<Ensemble>>,
    /// Why it could not be built.
    pub error: Option<String>,
    /// A replaced model the background thread had no room to take yet (freed there).
    pub retired: Option<Box<Ensemble>>,
    /// The ensemble replaced the model.
    pub replaced: bool,
}

impl Warmup {
    /// Buffers for the largest build ([`WARMUP_MAX_ROWS`] samples) and the warm-up thread;
    /// none when the key is below 2 or the offline phase would start first. **Allocates**
    /// and spawns.
    pub(crate) fn new(cfg: &ValidConfig) -> Warmup {
        let w = cfg.warmup_samples;
        let on = w >= 2 && w < cfg.offline_samples;
        let job = on.then(|| {
            Box::new(OfflineJob {
                x: Vec::with_capacity(WARMUP_MAX_ROWS * cfg.input_dim),
                y: Vec::with_capacity(WARMUP_MAX_ROWS * cfg.output_dim),
            })
        });
        // Two builds in flight at most (one queued, one running), plus a retired model.
        let worker = if on {
            Worker::spawn(cfg.clone(), 4).ok()
        } else {
            None
        };
        Warmup {
            job: job.filter(|_| worker.is_some()),
            error: (on && worker.is_none()).then(|| "cannot start the warm-up thread".to_string()),
            worker,
            next_build: w as u64,
            builds: 0,
            in_flight: false,
            model: None,
            retired: None,
            replaced: false,
        }
    }

    /// `predicting`, `failed` (no model; `error` says why), `replaced`, `building`,
    /// `waiting` or `off`.
    pub(crate) fn state(&self) -> &'static str {
        if self.model.is_some() {
            "predicting"
        } else if self.error.is_some() {
            "failed"
        } else if self.replaced {
            "replaced"
        } else if self.in_flight {
            "building"
        } else if self.job.is_some() {
            "waiting"
        } else {
            "off"
        }
    }
}

impl std::fmt::Debug for Vbks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vbks")
            .field("phase", &self.phase)
            .field("samples_seen", &self.samples_seen)
            .finish()
    }
}

fn check(what: &'static str, expected: usize, v: &[f64]) -> Result<(), ModelError> {
    if v.len() != expected {
        return Err(ModelError::Dimension {
            what,
            expected,
            found: v.len(),
        });
    }
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(ModelError::NonFinite { what, index }),
        None => Ok(()),
    }
}

impl Vbks {
    /// Build from a JSON config for `input_dim` inputs and `output_dim` outputs. Reserves
    /// every buffer of the collecting phase and starts the background thread.
    pub fn from_json(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Vbks, ModelError> {
        Vbks::new(Config::from_json(config)?.check(input_dim, output_dim)?)
    }

    /// Build from a checked config.
    pub fn new(cfg: ValidConfig) -> Result<Vbks, ModelError> {
        // Fail at create, not in the background, if a kernel does not compile.
        crate::offline::compile_kernels(&cfg).map_err(ModelError::Config)?;
        let (d, p, n) = (cfg.input_dim, cfg.output_dim, cfg.offline_samples);
        let worker = Worker::spawn(cfg.clone(), cfg.keep + 4)
            .map_err(|e| ModelError::Other(format!("cannot start the background thread: {e}")))?;
        Ok(Vbks {
            phase: Phase::Collecting,
            buf_x: Vec::with_capacity(n * d),
            buf_y: Vec::with_capacity(n * p),
            // With drift a queued sample keeps its stamp and noise.
            pending: SampleRing::with_extra(
                cfg.pending_capacity,
                d,
                p,
                if cfg.drift.is_some() { 1 + p } else { 0 },
            ),
            fb_n: 0,
            fb_mean: vec![0.0; p],
            fb_m2: vec![0.0; p],
            ensemble: None,
            report: None,
            belief_job: None,
            belief_theta: Vec::new(),
            refactor_jobs: Vec::new(),
            since_refactor: vec![0; cfg.keep],
            replay: SampleRing::new(
                if cfg.forgetting < 1.0 {
                    cfg.replay_capacity
                } else {
                    0
                },
                d,
                p,
            ),
            since_belief: 0,
            counters: Counters::default(),
            samples_seen: 0,
            last_t_secs: f64::NAN,
            failure: None,
            failure_reported: false,
            tmp_x: vec![0.0; d],
            tmp_y: vec![0.0; p],
            last_noise_var: vec![0.0; p],
            drift: cfg
                .drift
                .map(|drift| Box::new(DriftState::new(drift, cfg.drift_window, d, p, cfg.keep))),
            tmp_ext: vec![0.0; 1 + p],
            worker,
            warmup: Warmup::new(&cfg),
            cfg,
        })
    }

    /// The diagnostics `describe` reports (see `describe.rs`).
    pub fn describe_json(&self) -> serde_json::Value {
        crate::describe::describe(self)
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Warm-up models adopted so far, and whether one predicts now.
    pub fn warmup_builds(&self) -> (u64, bool) {
        (self.warmup.builds, self.warmup.model.is_some())
    }

    /// The checked configuration.
    pub fn config(&self) -> &ValidConfig {
        &self.cfg
    }

    /// The online ensemble, once ready.
    pub fn ensemble(&self) -> Option<&Ensemble> {
        self.ensemble.as_deref()
    }

    /// The offline phase's report, once ready.
    pub fn offline_report(&self) -> Option<&OfflineReport> {
        self.report.as_deref()
    }

    /// Counters of the online phase.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Predict with `with` (the mixture or one kept kernel alone) regardless of the
    /// configured `predict`, e.g. to compare the mixture with each kernel on one stream.
    /// Before the ensemble is ready this is the fallback. Same checks and cost as
    /// `predict`.
    pub fn predict_with(
        &mut self,
        x: &[f64],
        with: PredictWith,
        mean: &mut [f64],
        var: &mut [f64],
    ) -> Result<(), ModelError> {
        let (d, p) = (self.cfg.input_dim, self.cfg.output_dim);
        check("x", d, x)?;
        if mean.len() != p || var.len() != p {
            return Err(ModelError::Dimension {
                what: "mean/var",
                expected: p,
                found: mean.len().min(var.len()),
            });
        }
        self.poll();
        self.take_failure()?;
        match self.ensemble.as_deref_mut() {
            Some(e) => {
                if let PredictWith::Component(i) = with
                    && i >= e.len()
                {
                    return Err(ModelError::Other(format!(
                        "predict_with: component {i} of {}",
                        e.len()
                    )));
                }
                e.predict(x, with, mean, var);
            }
            None => match self.warmup.model.as_deref_mut() {
                // One component: the mixture is that component.
                Some(w) => w.predict(x, PredictWith::Mixture, mean, var),
                None => self.fallback(mean, var),
            },
        }
        Ok(())
    }

    /// Block until the offline phase has finished (or failed); returns the phase. For
    /// tests and tools, never the control thread.
    pub fn wait_until_ready(&mut self) -> Phase {
        while self.phase == Phase::Offline {
            match self.worker.recv() {
                Some(r) => self.handle_reply(r),
                None => break,
            }
        }
        self.phase
    }

    /// With drift: block until a background rebuild that includes every sample seen so far
    /// has been adopted, so each component's statistics are exactly the heteroscedastic
    /// ones at the newest stamp (expired samples removed). For tests and tools, never the
    /// control thread. Returns whether such a rebuild was adopted (false without drift,
    /// before the ensemble is online, or if the rebuild failed).
    pub fn sync_drift(&mut self) -> bool {
        if self.phase != Phase::Online {
            return false;
        }
        let mut before = None;
        loop {
            let Some(ds) = self.drift.as_deref_mut() else {
                return false;
            };
            if ds.job.is_some() {
                match before {
                    Some(n) => return ds.counters.refreshes > n,
                    None => {
                        let n = ds.counters.refreshes;
                        let Some(job) = ds.take_job() else {
                            return false;
                        };
                        let seq_ref = job.seq_ref;
                        match self.worker.try_send(Job::Refresh(job)) {
                            Ok(()) => ds.sent(seq_ref),
                            Err(Job::Refresh(job)) => {
                                ds.job = Some(job);
                                return false;
                            }
                            Err(_) => return false,
                        }
                        before = Some(n);
                    }
                }
            }
            match self.worker.recv() {
                Some(r) => self.handle_reply(r),
                None => return false,
            }
        }
    }

    /// Counters of the drift machinery (`None` without drift).
    pub fn drift_counters(&self) -> Option<crate::inject::DriftCounters> {
        self.drift.as_deref().map(|ds| ds.counters)
    }

    fn handle_reply(&mut self, reply: Reply) {
        match reply {
            Reply::Ready(ready) => {
                let Ready {
                    mut ensemble,
                    report,
                    belief_job,
                    refactor_jobs,
                    refresh_job,
                } = *ready;
                if let (Some(ds), Some(job)) = (self.drift.as_deref_mut(), refresh_job) {
                    ds.start_online(&ensemble, self.cfg.offline_samples, job);
                }
                ensemble.add_excess_noise = self.cfg.add_excess_noise;
                ensemble.host_noise.copy_from_slice(&self.last_noise_var);
                self.belief_theta = belief_job.belief.theta().to_vec();
                self.ensemble = Some(Box::new(ensemble));
                self.report = Some(Box::new(report));
                self.belief_job = Some(belief_job);
                self.refactor_jobs = refactor_jobs;
                self.phase = Phase::Online;
                if let Some(w) = self.warmup.model.take() {
                    self.warmup.replaced = true;
                    self.retire(w);
                }
            }
            Reply::Warmup(result, job) => {
                self.warmup.in_flight = false;
                self.warmup.job = Some(job);
                match result {
                    Ok(mut w) if self.ensemble.is_none() => {
                        w.add_excess_noise = self.cfg.add_excess_noise;
                        w.host_noise.copy_from_slice(&self.last_noise_var);
                        self.warmup.builds += 1;
                        if let Some(old) = self.warmup.model.replace(w) {
                            self.retire(old);
                        }
                    }
                    Ok(w) => self.retire(w),
                    // A failed rebuild keeps the model there is.
                    Err(msg) => self.warmup.error = Some(msg),
                }
            }
            Reply::Failed(msg) => {
                self.failure = Some(msg);
                self.phase = Phase::Failed;
            }
            Reply::Belief(job) => {
                if let Some(e) = self.ensemble.as_deref_mut() {
                    e.weights.copy_from_slice(&job.weights);
                    if self.belief_theta.len() == job.belief.theta().len() {
                        self.belief_theta.copy_from_slice(job.belief.theta());
                    }
                    self.counters.belief_refits += 1;
                }
                self.belief_job = Some(job);
            }
            Reply::Refreshed(job) => {
                if let Some(ds) = self.drift.as_deref_mut() {
                    ds.returned(job, self.ensemble.as_deref_mut());
                }
            }
            Reply::Refactored(mut job) => {
                let i = job.comp;
                if let Some(e) = self.ensemble.as_deref_mut() {
                    let gap = self.counters.online_samples - job.seq;
                    if job.ok && gap <= self.replay.len() as u64 {
                        let c = &mut e.components[i];
                        std::mem::swap(&mut c.factor, &mut job.factor);
                        // Replay the samples that arrived after the copy.
                        let first = self.replay.len() - gap as usize;
                        for k in first..self.replay.len() {
                            let (x, y, w, _) = self.replay.get(k);
                            e.absorb_replayed(i, x, y, w);
                        }
                        self.counters.refactors += 1;
                    } else {
                        self.counters.refactors_stale += 1;
                    }
                }
                if let Some(slot) = self.refactor_jobs.get_mut(i) {
                    *slot = Some(job);
                }
            }
        }
    }

    fn poll(&mut self) {
        while let Some(r) = self.worker.try_recv() {
            self.handle_reply(r);
        }
        while let Some(r) = self.warmup.worker.as_ref().and_then(Worker::try_recv) {
            self.handle_reply(r);
        }
        if let Some(w) = self.warmup.retired.take() {
            self.retire(w);
        }
    }

    /// Hands a replaced warm-up model to the warm-up thread to free (the control thread
    /// frees nothing); keeps it for a later call when the queue is full.
    fn retire(&mut self, w: Box<Ensemble>) {
        let Some(worker) = self.warmup.worker.as_ref() else {
            self.warmup.retired = Some(w);
            return;
        };
        if let Err(Job::Retire(w)) = worker.try_send(Job::Retire(w))
            && self.warmup.retired.is_none()
        {
            self.warmup.retired = Some(w);
        }
    }

    /// Starts a warm-up build when the samples seen reach the next build point (the
    /// `warmup_samples`-th, then each doubling) and the ensemble is not online: from an
    /// evenly spaced subset of at most [`WARMUP_MAX_ROWS`] of the samples still held (the
    /// collecting buffer, or the queue of the offline phase), copied into buffers sized at
    /// create (no allocation). A full queue retries at the next update.
    fn start_warmup_when_due(&mut self) {
        if self.samples_seen < self.warmup.next_build || self.ensemble.is_some() {
            return;
        }
        let (d, p) = (self.cfg.input_dim, self.cfg.output_dim);
        let held = match self.phase {
            Phase::Collecting => self.buf_x.len() / d,
            Phase::Offline => self.pending.len(),
            Phase::Online | Phase::Failed => 0,
        };
        if held < 2 {
            return;
        }
        let (Some(worker), Some(mut job)) = (self.warmup.worker.as_ref(), self.warmup.job.take())
        else {
            return;
        };
        let rows = held.min(WARMUP_MAX_ROWS);
        job.x.clear();
        job.y.clear();
        for r in 0..rows {
            // Evenly spaced over what is held, the newest sample always in.
            let k = held - 1 - (rows - 1 - r) * (held - 1) / (rows - 1).max(1);
            let (x, y) = match self.phase {
                Phase::Collecting => (
                    &self.buf_x[k * d..(k + 1) * d],
                    &self.buf_y[k * p..(k + 1) * p],
                ),
                _ => {
                    let (x, y, _, _) = self.pending.get(k);
                    (x, y)
                }
            };
            job.x.extend_from_slice(x);
            job.y.extend_from_slice(y);
        }
        match worker.try_send(Job::Warmup(job)) {
            Ok(()) => {
                self.warmup.in_flight = true;
                self.warmup.next_build = self.samples_seen.saturating_mul(2);
            }
            Err(Job::Warmup(job)) => self.warmup.job = Some(job),
            Err(_) => {}
        }
    }

    /// The error of a failed offline phase, once.
    fn take_failure(&mut self) -> Result<(), ModelError> {
        if self.phase == Phase::Failed && !self.failure_reported {
            self.failure_reported = true;
            return Err(ModelError::Other(
                self.failure
                    .clone()
                    .unwrap_or_else(|| "offline phase failed".into()),
            ));
        }
        Ok(())
    }

    fn fallback(&self, mean: &mut [f64], var: &mut [f64]) {
        for o in 0..mean.len() {
            if self.fb_n == 0 {
                mean[o] = 0.0;
                var[o] = self
                    .cfg
                    .hyper
                    .as_ref()
                    .map_or(1.0, |h| h[o].sigma_f * h[o].sigma_f);
            } else {
                mean[o] = self.fb_mean[o];
                var[o] = (self.fb_m2[o] / self.fb_n as f64).max(1e-12);
            }
        }
    }

    /// Folds the oldest queued sample into the ensemble (online phase); false when none is
    /// queued. No allocation.
    fn fold_oldest_pending(&mut self) -> bool {
        if self.pending.len() == 0 {
            return false;
        }
        // Move the scratch out so `fold` can borrow `self` (no allocation).
        let mut tx = std::mem::take(&mut self.tmp_x);
        let mut ty = std::mem::take(&mut self.tmp_y);
        let mut te = std::mem::take(&mut self.tmp_ext);
        let (px, py, pw, _) = self.pending.get(0);
        tx.copy_from_slice(px);
        ty.copy_from_slice(py);
        // Without drift there are no extras: the stamp and noise of the newest sample stand
        // in (unused on that path).
        if self.pending.n_extra() == te.len() {
            te.copy_from_slice(self.pending.extra(0));
        } else {
            te[0] = self.last_t_secs;
            te[1..].copy_from_slice(&self.last_noise_var);
        }
        self.pending.pop_front();
        self.fold(&tx, &ty, pw, te[0], &te[1..]);
        self.tmp_x = tx;
        self.tmp_y = ty;
        self.tmp_ext = te;
        true
    }

    fn observe_fallback(&mut self, y: &[f64]) {
        self.fb_n += 1;
        let n = self.fb_n as f64;
        for (o, &v) in y.iter().enumerate() {
            let delta = v - self.fb_mean[o];
            self.fb_mean[o] += delta / n;
            self.fb_m2[o] += delta * (v - self.fb_mean[o]);
        }
    }

    fn start_offline(&mut self) -> Result<(), ModelError> {
        let job = Box::new(OfflineJob {
            x: std::mem::take(&mut self.buf_x),
            y: std::mem::take(&mut self.buf_y),
        });
        self.phase = Phase::Offline;
        if self.worker.try_send(Job::Offline(job)).is_err() {
            self.phase = Phase::Failed;
            self.failure = Some("cannot hand the offline phase to the background thread".into());
            return self.take_failure();
        }
        if self.cfg.wait_for_offline {
            self.wait_until_ready();
            self.take_failure()?;
        }
        Ok(())
    }

    /// Fold one sample (stamp `t`, caller noise `noise`) into the ensemble and schedule
    /// background work.
    fn fold(&mut self, x: &[f64], y: &[f64], w: f64, t: f64, noise: &[f64]) {
        let Some(e) = self.ensemble.as_deref_mut() else {
            return;
        };
        if let Some(ds) = self.drift.as_deref_mut() {
            // Drift path: `forgetting` is ignored (the drift model discounts instead).
            ds.fold(e, x, y, t, noise);
            self.counters.online_samples += 1;
            if ds.due()
                && let Some(job) = ds.take_job()
            {
                let seq_ref = job.seq_ref;
                match self.worker.try_send(Job::Refresh(job)) {
                    Ok(()) => ds.sent(seq_ref),
                    Err(Job::Refresh(job)) => ds.job = Some(job),
                    Err(_) => {}
                }
            }
            self.since_belief += 1;
            if self.cfg.belief_refit_every > 0
                && self.since_belief >= self.cfg.belief_refit_every as u64
                && e.len() > 1
                && let Some(mut job) = self.belief_job.take()
            {
                ds.evidence(e, self.cfg.offline_samples, &mut job.ell);
                match self.worker.try_send(Job::Belief(job)) {
                    Ok(()) => self.since_belief = 0,
                    Err(Job::Belief(job)) => self.belief_job = Some(job),
                    Err(_) => {}
                }
            }
            return;
        }
        e.update(x, y, w, self.cfg.forgetting);
        self.counters.online_samples += 1;
        let seq = self.counters.online_samples;
        if self.cfg.forgetting < 1.0 {
            self.replay.push(x, y, w, seq);
            for s in &mut self.since_refactor {
                *s += 1;
            }
            // At most one refactorisation request per sample.
            let due = (0..e.len()).find(|&i| {
                self.since_refactor[i] >= self.cfg.refactor_every as u64
                    && self.refactor_jobs.get(i).is_some_and(Option::is_some)
            });
            if let Some(i) = due
                && let Some(mut job) = self.refactor_jobs[i].take()
            {
                let c = &e.components[i];
                job.stats.a.copy_from_slice(&c.stats.a);
                job.stats.r.copy_from_slice(&c.stats.r);
                job.stats.c.copy_from_slice(&c.stats.c);
                job.stats.t = c.stats.t;
                job.stats.n = c.stats.n;
                job.s2 = c.s2;
                job.seq = seq;
                match self.worker.try_send(Job::Refactor(job)) {
                    Ok(()) => self.since_refactor[i] = 0,
                    Err(Job::Refactor(job)) => self.refactor_jobs[i] = Some(job),
                    Err(_) => {}
                }
            }
        }
        self.since_belief += 1;
        if self.cfg.belief_refit_every > 0
            && self.since_belief >= self.cfg.belief_refit_every as u64
            && e.len() > 1
            && let Some(mut job) = self.belief_job.take()
        {
            e.local_bounds(&mut job.ell);
            match self.worker.try_send(Job::Belief(job)) {
                Ok(()) => self.since_belief = 0,
                Err(Job::Belief(job)) => self.belief_job = Some(job),
                Err(_) => {}
            }
        }
    }
}

impl OnlineModel for Vbks {
    fn input_dim(&self) -> usize {
        self.cfg.input_dim
    }

    fn output_dim(&self) -> usize {
        self.cfg.output_dim
    }

    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        let with = self.cfg.predict;
        self.predict_with(x, with, mean, var)
    }

    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        let (d, p) = (self.cfg.input_dim, self.cfg.output_dim);
        check_sample(x, y, noise_var, d, p)?;
        if t_secs.is_nan() {
            return Err(ModelError::NonFinite {
                what: "t_secs",
                index: 0,
            });
        }
        self.samples_seen += 1;
        self.last_t_secs = t_secs;
        self.last_noise_var.copy_from_slice(noise_var);
        if let Some(e) = self.ensemble.as_deref_mut() {
            e.host_noise.copy_from_slice(noise_var);
        }
        self.poll();
        self.take_failure()?;
        if let Some(w) = self.warmup.model.as_deref_mut() {
            w.host_noise.copy_from_slice(noise_var);
            w.update(x, y, 1.0, self.cfg.forgetting);
        }
        match self.phase {
            Phase::Collecting => {
                if let Some(ds) = self.drift.as_deref_mut() {
                    ds.collect(x, y, t_secs, noise_var);
                }
                self.buf_x.extend_from_slice(x);
                self.buf_y.extend_from_slice(y);
                self.observe_fallback(y);
                self.start_warmup_when_due();
                if self.buf_x.len() / d >= self.cfg.offline_samples {
                    self.start_offline()?;
                }
            }
            Phase::Offline | Phase::Failed => {
                self.observe_fallback(y);
                self.tmp_ext[0] = t_secs;
                self.tmp_ext[1..].copy_from_slice(noise_var);
                if self.phase == Phase::Offline
                    && self
                        .pending
                        .push_ext(x, y, 1.0, self.samples_seen, &self.tmp_ext)
                {
                    self.counters.pending_dropped += 1;
                }
                self.start_warmup_when_due();
            }
            Phase::Online => {
                if self.pending.len() == 0 {
                    self.fold(x, y, 1.0, t_secs, noise_var);
                } else {
                    self.tmp_ext[0] = t_secs;
                    self.tmp_ext[1..].copy_from_slice(noise_var);
                    if self
                        .pending
                        .push_ext(x, y, 1.0, self.samples_seen, &self.tmp_ext)
                    {
                        self.counters.pending_dropped += 1;
                    }
                    for _ in 0..self.cfg.catchup_per_update {
                        if !self.fold_oldest_pending() {
                            break;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Every output answers from the fallback (the prior) until the warm-up model or the
    /// ensemble predicts. Behind: while collecting, the warm-up samples of a build in
    /// flight (else 0: the model waits for data, not for its thread); in the offline phase
    /// the N samples it runs on plus the queue; online, the queue not yet folded in.
    /// Real-time.
    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        from_prior.fill(self.ensemble.is_none() && self.warmup.model.is_none());
        let queued = self.pending.len() as u64;
        let samples_behind = match self.phase {
            Phase::Collecting if self.warmup.in_flight => self.cfg.warmup_samples as u64,
            Phase::Collecting | Phase::Failed => 0,
            Phase::Offline => self.cfg.offline_samples as u64 + queued,
            Phase::Online => queued,
        };
        Some(Readiness { samples_behind })
    }

    /// Waits for a warm-up build in flight and for the offline phase (if it runs), then
    /// folds every queued sample in. Not real-time. A failed offline phase is reported once,
    /// as by `update`.
    fn wait_ready(&mut self, timeout: Duration) -> Result<(), ModelError> {
        let deadline = Instant::now() + timeout;
        self.poll();
        while self.warmup.in_flight {
            let left = deadline.saturating_duration_since(Instant::now());
            match self
                .warmup
                .worker
                .as_ref()
                .and_then(|w| w.recv_timeout(left))
            {
                Some(reply) => self.handle_reply(reply),
                None => break,
            }
        }
        while self.phase == Phase::Offline {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.worker.recv_timeout(left) {
                Some(reply) => self.handle_reply(reply),
                None => break,
            }
        }
        self.poll();
        self.take_failure()?;
        if self.phase == Phase::Online {
            while self.fold_oldest_pending() {}
        }
        Ok(())
    }

    fn stats(&self) -> ModelStats {
        let stored = match self.phase {
            Phase::Collecting => (self.buf_x.len() / self.cfg.input_dim.max(1)) as u64,
            Phase::Offline | Phase::Failed => self.pending.len() as u64,
            Phase::Online => match self.drift.as_deref() {
                Some(ds) => ds.window.len() as u64,
                None => self.counters.online_samples + self.cfg.offline_samples as u64,
            },
        };
        ModelStats {
            samples_seen: self.samples_seen,
            samples_stored: stored,
            experts: self
                .ensemble
                .as_ref()
                .or(self.warmup.model.as_ref())
                .map_or(0, |e| e.len() as u64),
            memory_bytes: (8 * (self.buf_x.capacity() + self.buf_y.capacity())
                + self.pending.memory_bytes()
                + self.replay.memory_bytes()
                + self.drift.as_ref().map_or(0, |ds| ds.memory_bytes())
                + self.ensemble.as_ref().map_or(0, |e| e.memory_bytes())
                + self.warmup.model.as_ref().map_or(0, |e| e.memory_bytes()))
                as u64,
        }
    }
}
