//! The model's background thread: runs the offline phase, background refactorisations
//! (with forgetting) and online belief refits, and hands results back through bounded
//! channels. The control thread only `try_send`s and `try_recv`s boxes that already exist
//! (jobs carry their own buffers back and forth), so it never allocates, locks or waits —
//! except in `wait_for_offline` mode, where `update` deliberately blocks once.
//!
//! Dropping the [`Worker`] sets the cancel flag (the offline phase checks it between local
//! steps), sends `Stop` and joins the thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use crate::belief::Belief;
use crate::config::ValidConfig;
use crate::ensemble::Ensemble;
use crate::inject::{Injection, Mirror, RefreshJob};
use crate::offline::{self, OfflineReport};
use crate::rng::Rng;
use crate::stats::{Factor, Stats};

/// Samples of the offline phase, moved to the worker.
pub(crate) struct OfflineJob {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

/// A refactorisation of one component from a copy of its statistics.
pub(crate) struct RefactorJob {
    pub comp: usize,
    pub stats: Stats,
    pub factor: Factor,
    pub s2: f64,
    /// Online sample count when the statistics were copied.
    pub seq: u64,
    pub ok: bool,
    col: Vec<f64>,
}

impl RefactorJob {
    pub(crate) fn new(comp: usize, m: usize, p: usize) -> RefactorJob {
        RefactorJob {
            comp,
            stats: Stats::new(m, p),
            factor: Factor::new(m, p),
            s2: 1.0,
            seq: 0,
            ok: false,
            col: vec![0.0; m],
        }
    }
}

/// A warm-started belief refit on the components' local bounds.
pub(crate) struct BeliefJob {
    pub belief: Belief,
    pub ell: Vec<f64>,
    pub weights: Vec<f64>,
    pub rng: Rng,
}

/// The offline phase's result, ready for adoption.
pub(crate) struct Ready {
    pub ensemble: Ensemble,
    pub report: OfflineReport,
    pub belief_job: Box<BeliefJob>,
    pub refactor_jobs: Vec<Option<Box<RefactorJob>>>,
    /// With drift: the refresh job (the worker keeps the matching mirror).
    pub refresh_job: Option<Box<RefreshJob>>,
}

pub(crate) enum Job {
    Offline(Box<OfflineJob>),
    /// Build the warm-up model from these samples (`offline::warmup`).
    Warmup(Box<OfflineJob>),
    /// A warm-up model the control thread no longer uses, freed here.
    Retire(Box<Ensemble>),
    Refactor(Box<RefactorJob>),
    Belief(Box<BeliefJob>),
    /// A drift refresh (`inject.rs`).
    Refresh(Box<RefreshJob>),
    /// Install a drift mirror (after load).
    Mirror(Box<Mirror>),
    Stop,
}

pub(crate) enum Reply {
    Ready(Box<Ready>),
    /// The warm-up model, or why it could not be built (the fallback stays), with the
    /// job's buffers back for the next build.
    Warmup(Result<Box<Ensemble>, String>, Box<OfflineJob>),
    Failed(String),
    Refactored(Box<RefactorJob>),
    Belief(Box<BeliefJob>),
    Refreshed(Box<RefreshJob>),
}

/// Handle of the background thread.
pub(crate) struct Worker {
    jobs: SyncSender<Job>,
    replies: Receiver<Reply>,
    cancel: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    /// Start the thread for a model with configuration `cfg`; `capacity` bounds both
    /// channels (at most one refactor per component and one belief job are in flight).
    pub(crate) fn spawn(cfg: ValidConfig, capacity: usize) -> std::io::Result<Worker> {
        let (jobs, job_rx) = sync_channel::<Job>(capacity);
        let (reply_tx, replies) = sync_channel::<Reply>(capacity);
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancel);
        let handle = std::thread::Builder::new()
            .name("gpn-vbks".into())
            .spawn(move || run(cfg, job_rx, reply_tx, flag))?;
        Ok(Worker {
            jobs,
            replies,
            cancel,
            handle: Some(handle),
        })
    }

    /// Hand a job over without waiting; gives it back if the queue is full.
    pub(crate) fn try_send(&self, job: Job) -> Result<(), Job> {
        self.jobs.try_send(job).map_err(|e| match e {
            std::sync::mpsc::TrySendError::Full(j)
            | std::sync::mpsc::TrySendError::Disconnected(j) => j,
        })
    }

    /// A reply if one is waiting.
    pub(crate) fn try_recv(&self) -> Option<Reply> {
        self.replies.try_recv().ok()
    }

    /// Wait up to `timeout` for the next reply (None on time-out or if the thread is gone).
    pub(crate) fn recv_timeout(&self, timeout: std::time::Duration) -> Option<Reply> {
        self.replies.recv_timeout(timeout).ok()
    }

    /// Wait for the next reply (None if the thread is gone).
    pub(crate) fn recv(&self) -> Option<Reply> {
        self.replies.recv().ok()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        // Blocking is fine here: destroy is never on the control thread's fast path.
        let _ = self.jobs.send(Job::Stop);
        // Drain replies so a worker blocked on a full reply channel can finish.
        if let Some(handle) = self.handle.take() {
            while !handle.is_finished() {
                let _ = self
                    .replies
                    .recv_timeout(std::time::Duration::from_millis(1));
            }
            let _ = handle.join();
        }
    }
}

fn run(cfg: ValidConfig, jobs: Receiver<Job>, replies: SyncSender<Reply>, cancel: Arc<AtomicBool>) {
    let mut mirror: Option<Box<Mirror>> = None;
    while let Ok(job) = jobs.recv() {
        let reply = match job {
            Job::Stop => return,
            Job::Mirror(m) => {
                mirror = Some(m);
                continue;
            }
            Job::Refresh(mut job) => {
                match mirror.as_deref_mut() {
                    Some(m) => m.refresh(&mut job),
                    None => job.ok = false,
                }
                Reply::Refreshed(job)
            }
            Job::Retire(old) => {
                drop(old);
                continue;
            }
            Job::Warmup(job) => {
                let built = offline::warmup(&cfg, &job.x, &job.y).map(Box::new);
                Reply::Warmup(built, job)
            }
            Job::Offline(job) => {
                let result = offline::run(&cfg, &job.x, &job.y, &cancel);
                drop(job);
                match result {
                    Ok(sel) => {
                        let k = sel.components.len();
                        let (m, p) = (cfg.inducing, cfg.output_dim);
                        let refactor_jobs = (0..k)
                            .map(|i| Some(Box::new(RefactorJob::new(i, m, p))))
                            .collect();
                        let belief_job = Box::new(BeliefJob {
                            belief: sel.belief,
                            ell: vec![0.0; k],
                            weights: sel.weights.clone(),
                            rng: sel.rng,
                        });
                        let ensemble = Ensemble::new(sel.scaler, sel.components, sel.weights);
                        let refresh_job = cfg.drift.map(|drift| {
                            let inj = Injection::new(drift, &ensemble.scaler.y_scale);
                            mirror = Some(Box::new(Mirror::new(inj, &ensemble)));
                            Box::new(RefreshJob::new(
                                cfg.drift_window,
                                cfg.input_dim,
                                p,
                                cfg.keep,
                                k,
                                m,
                            ))
                        });
                        Reply::Ready(Box::new(Ready {
                            ensemble,
                            report: sel.report,
                            belief_job,
                            refactor_jobs,
                            refresh_job,
                        }))
                    }
                    Err(offline::OfflineError::Cancelled) => return,
                    Err(e) => Reply::Failed(e.to_string()),
                }
            }
            Job::Refactor(mut job) => {
                let RefactorJob {
                    stats,
                    factor,
                    s2,
                    col,
                    ok,
                    ..
                } = &mut *job;
                *ok = factor.refactor(stats, *s2, col).is_ok();
                Reply::Refactored(job)
            }
            Job::Belief(mut job) => {
                let BeliefJob {
                    belief,
                    ell,
                    weights,
                    rng,
                } = &mut *job;
                offline::form_weights(&cfg, belief, ell, false, rng, weights);
                Reply::Belief(job)
            }
        };
        if cancel.load(Ordering::Relaxed) || replies.send(reply).is_err() {
            return;
        }
    }
}
