//! The model's background threads (spec §6.3, §6.8).
//!
//! * The **block worker** owns the engine (`engine.rs`). It drains the sample queue
//!   (computing a weight centre from its latest snapshot for samples that came without
//!   one), admits each sample (a singleton action at once; a block commit and full rebuild
//!   every k_b), writes the posterior into a recycled snapshot, waits at the test [`Gate`]
//!   and publishes. It installs refit results, starts refits every `refit_every_blocks`
//!   blocks, and answers requests for a copy of its state (save, tests). When idle it parks
//!   for at most 1 ms (the control thread never wakes it: waking is a system call).
//! * The **refit worker** runs the slow path on copies of the window.
//!
//! Dropping the model's background handle sets the shutdown flag and joins both threads (a
//! refit in progress stops at its next Adam step).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::RcagpError;

use super::engine::{Engine, RefitResult};
use super::exchange::{SampleBuf, SampleQueue, SnapshotExchange};
use super::refit::{self, RefitJob};
use super::snapshot::{PredictScratch, Snapshot};
use super::window::SampleRef;

/// A gate the worker passes between building a snapshot and publishing it. Open by
/// default; tests close it to hold a rebuild in the middle and show that `predict` keeps
/// answering from the old snapshot.
#[derive(Debug, Default)]
pub struct Gate {
    closed: Mutex<bool>,
    cv: Condvar,
    waiting: AtomicU64,
}

impl Gate {
    /// Closes the gate: the next publication waits until [`Gate::open`].
    pub fn close(&self) {
        if let Ok(mut c) = self.closed.lock() {
            *c = true;
        }
    }

    /// Opens the gate and releases a waiting publication.
    pub fn open(&self) {
        if let Ok(mut c) = self.closed.lock() {
            *c = false;
        }
        self.cv.notify_all();
    }

    /// Publications currently held at the gate (0 or 1).
    pub fn waiting(&self) -> u64 {
        self.waiting.load(Ordering::Acquire)
    }

    fn pass(&self, shutdown: &AtomicBool) {
        let Ok(mut closed) = self.closed.lock() else {
            return;
        };
        if !*closed {
            return;
        }
        self.waiting.fetch_add(1, Ordering::AcqRel);
        while *closed && !shutdown.load(Ordering::Acquire) {
            match self.cv.wait_timeout(closed, Duration::from_millis(5)) {
                Ok((guard, _)) => closed = guard,
                Err(_) => break,
            }
        }
        self.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A request from the owner (not real-time).
pub(crate) enum Request {
    /// Drain the queue, rebuild if due and reply with a clone of the engine.
    Engine(mpsc::Sender<Box<Engine>>),
}

/// State shared by the control thread and the worker.
#[derive(Debug)]
pub(crate) struct Shared {
    pub samples: SampleQueue,
    pub snapshots: SnapshotExchange,
    pub shutdown: AtomicBool,
    pub gate: Gate,
    /// Samples the worker has fully handled (committed blocks rebuilt and published).
    pub processed: AtomicU64,
    pub refits_applied: AtomicU64,
    pub refits_failed: AtomicU64,
    pub rebuilds_failed: AtomicU64,
    pub last_error: Mutex<Option<String>>,
    pub requests: Mutex<Vec<Request>>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Request::Engine")
    }
}

impl Shared {
    pub fn new(capacity: usize, d: usize, p: usize) -> Self {
        Self {
            samples: SampleQueue::new(capacity, d, p),
            snapshots: SnapshotExchange::new(),
            shutdown: AtomicBool::new(false),
            gate: Gate::default(),
            processed: AtomicU64::new(0),
            refits_applied: AtomicU64::new(0),
            refits_failed: AtomicU64::new(0),
            rebuilds_failed: AtomicU64::new(0),
            last_error: Mutex::new(None),
            requests: Mutex::new(Vec::new()),
        }
    }

    fn record_error(&self, e: &RcagpError) {
        if let Ok(mut slot) = self.last_error.lock() {
            *slot = Some(e.to_string());
        }
    }
}

/// The handle of the running threads; dropping it stops and joins them.
#[derive(Debug)]
pub(crate) struct Background {
    pub shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

impl Background {
    /// Starts the threads with `engine` (whose current snapshot is `latest`).
    pub fn start(
        engine: Box<Engine>,
        latest: Arc<Snapshot>,
        shared: Arc<Shared>,
    ) -> std::io::Result<Self> {
        let s = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("rcagp-block".into())
            .spawn(move || block_worker(engine, latest, s))?;
        Ok(Self {
            shared,
            worker: Some(worker),
        })
    }

    /// Asks the worker for a copy of its engine after draining the queue (blocks up to
    /// `timeout`; not real-time).
    pub fn engine_copy(&self, timeout: Duration) -> Option<Box<Engine>> {
        let (tx, rx) = mpsc::channel();
        self.shared.requests.lock().ok()?.push(Request::Engine(tx));
        if let Some(w) = &self.worker {
            w.thread().unpark();
        }
        rx.recv_timeout(timeout).ok()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.gate.open();
        if let Some(w) = self.worker.take() {
            w.thread().unpark();
            let _ = w.join();
        }
    }
}

/// The refit thread: runs jobs until its job channel closes.
fn refit_worker(
    jobs: mpsc::Receiver<RefitJob>,
    results: mpsc::Sender<Result<RefitResult, RcagpError>>,
    shutdown: Arc<Shared>,
) {
    while let Ok(job) = jobs.recv() {
        let cancel = || shutdown.shutdown.load(Ordering::Acquire);
        let r = refit::run(job, &cancel);
        if results.send(r).is_err() {
            break;
        }
    }
}

/// Builds a refit job from the engine's window, or None if the window is empty.
pub(crate) fn refit_job(engine: &Engine) -> Option<RefitJob> {
    let cfg = &engine.cfg;
    // The newest `refit_blocks` blocks (0: all, in slot order as before); apply_refit
    // computes G_C for the others.
    let slots: Vec<usize> = if cfg.refit_blocks == 0 {
        (0..engine.win.filled).collect()
    } else {
        engine.newest_slots(cfg.refit_blocks)
    };
    let problem = engine.problem_of(&slots)?;
    Some(RefitJob {
        problem,
        block_ids: slots.iter().map(|&a| engine.win.ids[a]).collect(),
        based_on: engine.params.version,
        opts: crate::train::TrainOptions {
            steps: cfg.refit_steps,
            lr: cfg.refit_lr,
            ard: true,
            learn_lengthscales: cfg.refit_lengthscales,
            learn_outputscale: cfg.refit_outputscale,
            learn_noise: cfg.refit_noise,
            learn_actions: false,
            per_datum: true,
            clip_norm: Some(2.0),
            sigma2_floor: 1e-4,
        },
        reference: (cfg.lengthscales.clone(), cfg.outputscale.clone()),
    })
}

/// Whether a refit is due (and enabled).
pub(crate) fn refit_due(engine: &Engine) -> bool {
    let every = engine.cfg.refit_every_blocks;
    let any =
        engine.cfg.refit_lengthscales || engine.cfg.refit_outputscale || engine.cfg.refit_noise;
    every > 0 && any && engine.blocks_since_refit >= every && engine.win.filled > 0
}

/// Admits one sample into the engine, computing its weight centre from `latest` if it came
/// without one (weight centre = prior mean in `prior` mode).
pub(crate) fn admit(
    engine: &mut Engine,
    buf: &mut SampleBuf,
    latest: &Snapshot,
    scratch: &mut PredictScratch,
) {
    use crate::config::WeightCenter;
    match engine.cfg.weight_center {
        WeightCenter::Prior => {
            buf.center.copy_from_slice(&engine.cfg.prior_mean);
            buf.cvar.fill(0.0);
        }
        WeightCenter::Predictive => {
            if !buf.has_center {
                latest.predict(&buf.x, &mut buf.center, &mut buf.cvar, scratch);
            }
        }
    }
    engine.admit(&SampleRef {
        x: &buf.x,
        y: &buf.y,
        noise: &buf.noise,
        t_secs: buf.t_secs,
        center: &buf.center,
        cvar: &buf.cvar,
    })
}

fn block_worker(mut engine: Box<Engine>, mut latest: Arc<Snapshot>, shared: Arc<Shared>) {
    let (d, p) = (engine.cfg.input_dim, engine.cfg.output_dim);
    let mut buf = SampleBuf::new(d, p);
    let mut scratch = PredictScratch::new(d, engine.cap_actions());
    let mut spare: Vec<Snapshot> = Vec::new();
    let (job_tx, job_rx) = mpsc::channel::<RefitJob>();
    let (res_tx, res_rx) = mpsc::channel();
    let refit_shared = Arc::clone(&shared);
    let refit_thread = std::thread::Builder::new()
        .name("rcagp-refit".into())
        .spawn(move || refit_worker(job_rx, res_tx, refit_shared))
        .ok();
    let mut refit_busy = false;
    // Duty-cycle cap of the slow path: after a refit that took T, the next starts no
    // earlier than T·(1/duty − 1) later (a refit on a full window costs O(n² d) per step).
    let duty = engine.cfg.refit_max_duty;
    let mut refit_started = std::time::Instant::now();
    let mut next_refit_at = refit_started;
    // Bound the work between two publications so that a burst still publishes promptly.
    let max_batch = engine.cfg.window().max(engine.cfg.block_size);

    while !shared.shutdown.load(Ordering::Acquire) {
        let mut taken = 0u64;
        let requests: Vec<Request> = shared
            .requests
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default();
        for Request::Engine(reply) in requests {
            // Drain first so the copy holds every sample enqueued before the request.
            while shared.samples.pop(&mut buf) {
                admit(&mut engine, &mut buf, &latest, &mut scratch);
                taken += 1;
            }
            let _ = reply.send(Box::new((*engine).clone()));
        }
        while (taken as usize) < max_batch && shared.samples.pop(&mut buf) {
            admit(&mut engine, &mut buf, &latest, &mut scratch);
            taken += 1;
        }
        if let Ok(r) = res_rx.try_recv() {
            refit_busy = false;
            let took = refit_started.elapsed();
            next_refit_at = std::time::Instant::now() + took.mul_f64((1.0 / duty - 1.0).max(0.0));
            match r {
                Ok(result) => {
                    if engine.apply_refit(&result) {
                        shared.refits_applied.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Err(e) => {
                    shared.refits_failed.fetch_add(1, Ordering::Relaxed);
                    shared.record_error(&e);
                }
            }
        }
        let rebuilt = engine.dirty;
        if engine.dirty {
            // Retired snapshots come back through the outbox; reuse them when unshared.
            while let Some(old) = shared.snapshots.outbox.pop() {
                if let Ok(s) = Arc::try_unwrap(old) {
                    spare.push(s);
                }
            }
            let mut snap = spare.pop().unwrap_or_else(|| engine.empty_snapshot());
            match engine.publish_into(&mut snap) {
                Ok(()) => {
                    shared.gate.pass(&shared.shutdown);
                    let snap = Arc::new(snap);
                    latest = Arc::clone(&snap);
                    if let Some(stale) = shared.snapshots.publish(snap)
                        && let Ok(s) = Arc::try_unwrap(stale)
                    {
                        spare.push(s);
                    }
                }
                Err(e) => {
                    engine.dirty = false;
                    shared.rebuilds_failed.fetch_add(1, Ordering::Relaxed);
                    shared.record_error(&e);
                }
            }
        }
        // Counted only once the samples' blocks are published.
        shared.processed.fetch_add(taken, Ordering::Release);
        if !refit_busy
            && refit_thread.is_some()
            && std::time::Instant::now() >= next_refit_at
            && refit_due(&engine)
            && let Some(job) = refit_job(&engine)
        {
            engine.blocks_since_refit = 0;
            refit_started = std::time::Instant::now();
            refit_busy = job_tx.send(job).is_ok();
        }
        if taken == 0 && !rebuilt {
            std::thread::park_timeout(Duration::from_millis(1));
        }
    }
    drop(job_tx);
    if let Some(t) = refit_thread {
        let _ = t.join();
    }
}
