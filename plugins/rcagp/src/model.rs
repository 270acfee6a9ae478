//! [`RcaGp`]: the streaming RCaGP model behind the `OnlineModel` contract (spec §6).
//!
//! The control thread's side: `predict` adopts the newest published snapshot (a lock-free
//! queue pop) and evaluates it; `update` checks the sample, applies the decimation and
//! enqueues it with the prediction just made at the same input (the weight centre), and
//! returns. Everything else happens on the model's worker ([`crate::stream::worker`]).
//! With `background: false` the same block path runs inside `update` instead (deterministic,
//! for evaluation and tests; `update` is then not real-time).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel, Readiness, check_finite, check_len};

use crate::config::{Config, NoiseSource, ValidConfig, WeightCenter};
use crate::persist::{self, Counters};
use crate::posterior::Problem;
use crate::stream::engine::Engine;
use crate::stream::exchange::{PushOutcome, SampleBuf};
use crate::stream::snapshot::{PredictScratch, Snapshot};
use crate::stream::worker::{self, Background, Gate, Shared};

/// The last prediction, reused as the weight centre of an `update` at the same input.
#[derive(Debug, Clone)]
struct LastPrediction {
    x: Vec<f64>,
    mean: Vec<f64>,
    var: Vec<f64>,
    valid: bool,
}

enum Mode {
    /// The block path runs in `update`.
    Inline {
        engine: Box<Engine>,
        buf: SampleBuf,
        scratch: PredictScratch,
    },
    /// The block path runs on the worker thread.
    Background(Background),
}

/// The streaming RCaGP model. See the crate root doc for the configuration.
pub struct RcaGp {
    cfg: ValidConfig,
    current: Arc<Snapshot>,
    /// A retired snapshot the outbox had no room for (returned later; never freed here).
    retired: Option<Arc<Snapshot>>,
    scratch: PredictScratch,
    last: LastPrediction,
    noise: Vec<f64>,
    mode: Mode,
    counters: Counters,
    /// Time stamp of the last admitted sample (−∞: none yet; not saved with the state).
    last_admitted_t: f64,
    /// Samples enqueued (including ones later dropped from the queue).
    pushed: u64,
    /// Enqueued samples dropped from a full queue for newer ones.
    dropped: u64,
    /// Samples that could not be enqueued at all.
    dropped_now: u64,
}

impl std::fmt::Debug for RcaGp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RcaGp")
            .field("snapshot_version", &self.current.version)
            .field("samples_seen", &self.counters.samples_seen)
            .field("background", &self.cfg.background)
            .finish()
    }
}

fn other(e: impl std::fmt::Display) -> ModelError {
    ModelError::Other(format!("rcagp: {e}"))
}

impl RcaGp {
    /// Builds a model from a JSON config (see the crate root table). Allocates every buffer
    /// and, in background mode, starts the worker threads.
    pub fn from_json(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        Self::new(Config::from_json(config)?.check(input_dim, output_dim)?)
    }

    /// Builds a model from a checked config.
    pub fn new(cfg: ValidConfig) -> Result<Self, ModelError> {
        let engine = Box::new(Engine::new(&cfg));
        let snapshot = engine.empty_snapshot();
        Self::with_engine(cfg, engine, snapshot, Counters::default())
    }

    fn with_engine(
        cfg: ValidConfig,
        engine: Box<Engine>,
        snapshot: Snapshot,
        counters: Counters,
    ) -> Result<Self, ModelError> {
        let (d, p, nb) = (cfg.input_dim, cfg.output_dim, cfg.blocks);
        let current = Arc::new(snapshot);
        let mode = Self::start_mode(&cfg, engine, &current)?;
        Ok(Self {
            current,
            retired: None,
            scratch: PredictScratch::new(d, nb + cfg.block_size),
            last: LastPrediction {
                x: vec![0.0; d],
                mean: vec![0.0; p],
                var: vec![0.0; p],
                valid: false,
            },
            noise: vec![0.0; p],
            mode,
            counters,
            last_admitted_t: f64::NEG_INFINITY,
            pushed: 0,
            dropped: 0,
            dropped_now: 0,
            cfg,
        })
    }

    fn start_mode(
        cfg: &ValidConfig,
        engine: Box<Engine>,
        current: &Arc<Snapshot>,
    ) -> Result<Mode, ModelError> {
        let (d, p, nb) = (cfg.input_dim, cfg.output_dim, cfg.blocks);
        if cfg.background {
            let shared = Arc::new(Shared::new(cfg.queue_capacity, d, p));
            let bg = Background::start(engine, Arc::clone(current), shared)
                .map_err(|e| other(format!("cannot start the worker thread: {e}")))?;
            Ok(Mode::Background(bg))
        } else {
            Ok(Mode::Inline {
                engine,
                buf: SampleBuf::new(d, p),
                scratch: PredictScratch::new(d, nb + cfg.block_size),
            })
        }
    }

    /// The resolved configuration.
    pub fn config(&self) -> &ValidConfig {
        &self.cfg
    }

    /// The snapshot `predict` currently answers from.
    pub fn snapshot(&self) -> &Snapshot {
        &self.current
    }

    /// Adopts the newest published snapshot, if any (what `predict` does first). Real-time.
    pub fn adopt_published(&mut self) {
        let Mode::Background(bg) = &self.mode else {
            return;
        };
        let ex = &bg.shared.snapshots;
        while let Some(new) = ex.inbox.pop() {
            let old = std::mem::replace(&mut self.current, new);
            // Retire through the outbox so the worker frees (or reuses) the memory.
            if let Some(r) = self.retired.take()
                && let Err(r) = ex.outbox.push(r)
            {
                self.retired = Some(r);
            }
            if let Err(old) = ex.outbox.push(old) {
                // Keep one back; with the outbox's room this needs a worker stalled for
                // several publications, and dropping here would free on this thread.
                if self.retired.is_none() {
                    self.retired = Some(old);
                } else {
                    drop(old);
                }
            }
        }
    }

    /// The publication gate of the worker (background mode), for tests that hold a rebuild
    /// between building and publishing a snapshot.
    pub fn gate(&self) -> Option<&Gate> {
        match &self.mode {
            Mode::Background(bg) => Some(&bg.shared.gate),
            Mode::Inline { .. } => None,
        }
    }

    /// Waits (up to `timeout`) until the worker has handled every enqueued sample and
    /// published the resulting snapshot; true if it did. Immediate in inline mode. Not
    /// real-time (for tests, evaluation and shutdown).
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let Mode::Background(bg) = &self.mode else {
            return true;
        };
        let start = Instant::now();
        // Each drop removed one enqueued sample that will never be processed.
        while bg.shared.processed.load(Ordering::Acquire) + self.dropped < self.pushed {
            if start.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    }

    /// Samples dropped because the worker's queue was full (the oldest waiting ones).
    pub fn dropped_samples(&self) -> u64 {
        self.dropped + self.dropped_now
    }

    /// Refits installed so far (background mode; inline refits count too).
    pub fn refits_applied(&self) -> u64 {
        match &self.mode {
            Mode::Background(bg) => bg.shared.refits_applied.load(Ordering::Relaxed),
            Mode::Inline { engine, .. } => engine.params.version,
        }
    }

    /// The last error of the worker (a failed rebuild or refit), if any.
    pub fn worker_error(&self) -> Option<String> {
        match &self.mode {
            Mode::Background(bg) => bg.shared.last_error.lock().ok().and_then(|e| e.clone()),
            Mode::Inline { .. } => None,
        }
    }

    fn engine_copy(&self) -> Result<Box<Engine>, ModelError> {
        match &self.mode {
            Mode::Inline { engine, .. } => Ok(engine.clone()),
            Mode::Background(bg) => bg
                .engine_copy(Duration::from_secs(30))
                .ok_or_else(|| other("the worker did not answer within 30 s")),
        }
    }

    /// The current window as a batch [`Problem`] (after the worker has taken every queued
    /// sample): what a from-scratch RCaGP of the window is built from. None while empty.
    /// Not real-time.
    pub fn window_problem(&self) -> Result<Option<Problem>, ModelError> {
        Ok(self.engine_copy()?.to_problem())
    }

    /// Drift counters (after the worker has taken every queued sample): blocks that left
    /// the window by expiry, and refreshes so far. Both 0 without a `drift` key. Not
    /// real-time.
    pub fn drift_counters(&self) -> Result<(u64, u64), ModelError> {
        let e = self.engine_copy()?;
        Ok((e.blocks_expired, e.drift_refreshes))
    }

    /// Blocks committed by a one-row factor update (between threshold refreshes), of all
    /// blocks committed (after the worker has taken every queued sample). Not real-time.
    pub fn commits(&self) -> Result<(u64, u64), ModelError> {
        let e = self.engine_copy()?;
        Ok((e.row_commits, e.blocks_inserted))
    }

    fn check_x(&self, x: &[f64]) -> Result<(), ModelError> {
        check_len("x", x, self.cfg.input_dim)?;
        check_finite("x", x)
    }
}

impl OnlineModel for RcaGp {
    fn input_dim(&self) -> usize {
        self.cfg.input_dim
    }

    fn output_dim(&self) -> usize {
        self.cfg.output_dim
    }

    /// Real-time: no allocation, lock or I/O; reads only the immutable snapshot.
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.check_x(x)?;
        check_len("mean", mean, self.cfg.output_dim)?;
        check_len("var", var, self.cfg.output_dim)?;
        self.adopt_published();
        self.current.predict(x, mean, var, &mut self.scratch);
        self.last.x.copy_from_slice(x);
        self.last.mean.copy_from_slice(mean);
        self.last.var.copy_from_slice(var);
        self.last.valid = true;
        Ok(())
    }

    /// Background mode — real-time: no allocation, lock or I/O; the sample is enqueued (or
    /// dropped and counted if the worker's queue is full). Inline mode: runs the block path
    /// and, when due, a refit (not real-time). `noise_var` must be finite and > 0 (it is the
    /// sample's base noise with `noise: "sample"`); `t_secs` must be finite.
    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        let p = self.cfg.output_dim;
        self.check_x(x)?;
        check_len("y", y, p)?;
        check_finite("y", y)?;
        check_len("noise_var", noise_var, p)?;
        if let Some(index) = noise_var.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(ModelError::NonFinite {
                what: "noise_var (must be finite and > 0)",
                index,
            });
        }
        if !t_secs.is_finite() {
            return Err(ModelError::NonFinite {
                what: "t_secs",
                index: 0,
            });
        }
        self.counters.samples_seen += 1;
        let counted = self
            .counters
            .admit_counter
            .is_multiple_of(self.cfg.admit_every as u64);
        self.counters.admit_counter += 1;
        let spaced = gpn_gp_core::admission::spaced(
            t_secs - self.last_admitted_t,
            self.cfg.admit_interval_s,
        );
        let admit = counted && spaced;
        if admit {
            self.last_admitted_t = t_secs;
        }
        let same_x = self.last.valid && self.last.x == x;
        self.last.valid = false;
        if !admit {
            return Ok(());
        }
        match self.cfg.noise {
            NoiseSource::Sample => self.noise.copy_from_slice(noise_var),
            NoiseSource::Hyper => self.noise.copy_from_slice(&self.cfg.noise_var),
        }
        let center = (same_x && self.cfg.weight_center == WeightCenter::Predictive)
            .then_some((self.last.mean.as_slice(), self.last.var.as_slice()));
        match &mut self.mode {
            Mode::Background(bg) => {
                // A full queue drops its oldest sample (counted) to keep the newest.
                match bg.shared.samples.push(x, y, &self.noise, t_secs, center) {
                    PushOutcome::Enqueued => self.pushed += 1,
                    PushOutcome::ReplacedOldest => {
                        self.pushed += 1;
                        self.dropped += 1;
                    }
                    PushOutcome::Dropped => self.dropped_now += 1,
                }
                Ok(())
            }
            Mode::Inline {
                engine,
                buf,
                scratch,
            } => {
                buf.x.copy_from_slice(x);
                buf.y.copy_from_slice(y);
                buf.noise.copy_from_slice(&self.noise);
                buf.t_secs = t_secs;
                buf.has_center = center.is_some();
                if let Some((c, v)) = center {
                    buf.center.copy_from_slice(c);
                    buf.cvar.copy_from_slice(v);
                }
                self.pushed += 1;
                worker::admit(engine, buf, &self.current, scratch);
                rebuild_inline(engine, &mut self.current)?;
                if worker::refit_due(engine)
                    && let Some(job) = worker::refit_job(engine)
                {
                    engine.blocks_since_refit = 0;
                    // A failed refit keeps the old hyperparameters, as in background mode.
                    if let Ok(result) = crate::stream::refit::run(job, &|| false)
                        && engine.apply_refit(&result)
                    {
                        rebuild_inline(engine, &mut self.current)?;
                    }
                }
                Ok(())
            }
        }
    }

    fn stats(&self) -> ModelStats {
        let c = &self.cfg;
        let (d, p, n, nb) = (c.input_dim, c.output_dim, c.window(), c.blocks);
        // Window rows, G, the factors, and three snapshots' worth (published, in flight,
        // spare).
        let na = nb + c.block_size;
        let window = 8 * (n * (d + 4 * p + 2) + nb * nb + n * d + p * na * (na + 1) / 2);
        let snapshot = 8 * (n * (d + 1) + p * (na + na * (na + 1) / 2));
        let queue = match &self.mode {
            Mode::Background(bg) => bg.shared.samples.memory_bytes(),
            Mode::Inline { .. } => 0,
        };
        ModelStats {
            samples_seen: self.counters.samples_seen,
            samples_stored: self.current.n_points() as u64,
            experts: 1,
            memory_bytes: (window + 3 * snapshot + queue) as u64,
        }
    }

    /// Every output answers from the prior while the snapshot `predict` last adopted holds
    /// no point; behind: enqueued samples the worker has not handled (0 inline). Real-time
    /// (atomic loads only).
    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        from_prior.fill(self.current.n_points() == 0);
        let samples_behind = match &self.mode {
            Mode::Background(bg) => self
                .pushed
                .saturating_sub(bg.shared.processed.load(Ordering::Acquire) + self.dropped),
            Mode::Inline { .. } => 0,
        };
        Some(Readiness { samples_behind })
    }

    /// [`RcaGp::wait_idle`], then adopts the snapshot the worker published. Not real-time.
    fn wait_ready(&mut self, timeout: Duration) -> Result<(), ModelError> {
        self.wait_idle(timeout);
        self.adopt_published();
        Ok(())
    }
}

/// Rebuilds the inline model's snapshot in place (it is never shared in inline mode).
fn rebuild_inline(engine: &mut Engine, current: &mut Arc<Snapshot>) -> Result<(), ModelError> {
    if Arc::get_mut(current).is_none() {
        *current = Arc::new(engine.empty_snapshot());
    }
    let snap = Arc::get_mut(current).ok_or_else(|| other("snapshot unexpectedly shared"))?;
    engine.publish_into(snap).map_err(other)
}

impl RcaGp {
    /// Serialises the learned state (format in `persist.rs`). Not real-time.
    pub fn save(&self) -> Result<Vec<u8>, ModelError> {
        let engine = self.engine_copy()?;
        Ok(persist::save(&engine, self.counters))
    }

    /// Replaces the learned state with one from [`RcaGp::save`] of a model with the same
    /// config; on error the model is unchanged. Restarts the worker in background mode.
    pub fn load(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        let template = Engine::new(&self.cfg);
        let (mut engine, counters) = persist::load(&template, bytes)?;
        let mut snap = engine.empty_snapshot();
        if engine.win.filled > 0 || engine.win.open_len > 0 {
            engine.publish_into(&mut snap).map_err(other)?;
        }
        let engine = Box::new(engine);
        // Stop the old worker before starting the new one.
        let old = std::mem::replace(
            &mut self.mode,
            Mode::Inline {
                engine: Box::new(template),
                buf: SampleBuf::new(self.cfg.input_dim, self.cfg.output_dim),
                scratch: PredictScratch::new(
                    self.cfg.input_dim,
                    self.cfg.blocks + self.cfg.block_size,
                ),
            },
        );
        drop(old);
        self.current = Arc::new(snap);
        self.retired = None;
        self.mode = Self::start_mode(&self.cfg, engine, &self.current)?;
        self.counters = counters;
        self.last_admitted_t = f64::NEG_INFINITY;
        self.pushed = 0;
        self.dropped = 0;
        self.dropped_now = 0;
        self.last.valid = false;
        Ok(())
    }
}
