//! The control-thread side of drift (uncertainty injection): the refresh thread's
//! lifecycle (spawned at creation, stopped and joined on drop), the newest stamp, the
//! per-sample base variance rule, and the copy of changed experts into the shared inputs.
//!
//! Real-time: [`DriftRuntime::sync`] only `try_lock`s a slot's input; on contention the
//! slot stays dirty and is copied by a later call (counted in `sync_deferred`). Only
//! [`DriftRuntime::start`], `Clone` and `Drop` allocate, spawn or join.

use crate::expert::Expert;
use crate::groups::Group;
use crate::refresh::{Worker, WorkerParams};
use crate::shared::{Shared, lock};
use gpn_gp_core::drift::Drift;
use std::sync::atomic::Ordering;
use std::sync::{Arc, TryLockError};
use std::thread::JoinHandle;

/// Control-side counters (the refresh thread keeps its own in `Shared`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Counters {
    pub adopted: u64,
    pub dropped: u64,
    pub expired: u64,
    pub retired: u64,
    pub sync_deferred: u64,
}

/// Drift state owned by the model.
pub(crate) struct DriftRuntime {
    pub params: WorkerParams,
    pub shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Why the refresh thread could not start (then `predict`/`update` fail).
    pub start_error: Option<String>,
    /// Newest stamp seen by `update` (−∞ before the first).
    pub t_now: f64,
    /// Slots whose shared input is out of date (a stack) and a flag per slot.
    pub dirty: Vec<usize>,
    pub is_dirty: Vec<bool>,
    /// The slot holds an expert of 𝒯.
    pub live: Vec<bool>,
    /// Base variance per group of the sample being learned (scratch).
    pub base_new: Vec<f64>,
    pub counters: Counters,
    /// Bytes of the shared buffers (constant).
    pub shared_bytes: usize,
    /// The drift grows: a refresh thread recomputes the factors. A drift that adds nothing
    /// (`Drift::grows` false) only carries per-sample noise: its factors never go stale,
    /// so it has no thread, no shared buffers and nothing to copy.
    pub refreshes: bool,
}

impl DriftRuntime {
    /// Allocates the shared buffers for `slots` experts and spawns the refresh thread
    /// (neither for a drift that adds nothing).
    pub fn start(params: WorkerParams, slots: usize) -> Self {
        let n_groups = params.groups.len();
        let refreshes = params.drift.grows();
        let shared = Arc::new(Shared::new(
            if refreshes { slots } else { 0 },
            params.n_bar,
            params.d,
            params.p,
            n_groups,
        ));
        let shared_bytes = shared
            .slots
            .iter()
            .map(|s| lock(&s.input).memory_bytes() + lock(&s.result).memory_bytes())
            .sum();
        let (thread, start_error) = if refreshes {
            let worker = Worker::new(params.clone(), Arc::clone(&shared));
            match std::thread::Builder::new()
                .name("skygp-drift".into())
                .spawn(move || worker.run())
            {
                Ok(h) => (Some(h), None),
                Err(e) => (
                    None,
                    Some(format!(
                        "skygp: the drift refresh thread did not start: {e}"
                    )),
                ),
            }
        } else {
            (None, None)
        };
        Self {
            base_new: vec![0.0; n_groups],
            params,
            shared,
            thread,
            start_error,
            t_now: f64::NEG_INFINITY,
            dirty: Vec::with_capacity(slots),
            is_dirty: vec![false; slots],
            live: vec![false; slots],
            counters: Counters::default(),
            shared_bytes,
            refreshes,
        }
    }

    /// The drift model.
    pub fn drift(&self) -> &Drift {
        &self.params.drift
    }

    /// Records a new stamp: t_now = max(t_now, t) and publishes it to the refresh thread.
    pub fn observe_time(&mut self, t_secs: f64) {
        if t_secs > self.t_now {
            self.t_now = t_secs;
            self.shared
                .t_now_bits
                .store(t_secs.to_bits(), Ordering::Release);
        }
    }

    /// The base variance of a new sample per output group, into `base_new`: the larger of
    /// the model's σ_n² and the caller's `noise_var` of the group's outputs. See the crate
    /// doc ("Drift") for why the larger one.
    pub fn set_base(&mut self, groups: &[Group], out_group: &[usize], noise_var: &[f64]) {
        for (b, g) in self.base_new.iter_mut().zip(groups) {
            *b = g.noise_var;
        }
        for (&nv, &g) in noise_var.iter().zip(out_group) {
            self.base_new[g] = self.base_new[g].max(nv);
        }
    }

    /// Marks slot `s` for copying into the shared input (nothing without a refresh thread).
    pub fn mark_dirty(&mut self, s: usize) {
        if self.refreshes && !self.is_dirty[s] {
            self.is_dirty[s] = true;
            self.dirty.push(s);
        }
    }

    /// Copies up to `budget` dirty slots into the shared inputs, without waiting: a slot
    /// whose input the refresh thread is reading stays dirty. Real-time.
    pub fn sync(&mut self, experts: &[Expert], budget: usize) {
        let mut i = 0;
        let mut tried = 0;
        while i < self.dirty.len() && tried < budget {
            let s = self.dirty[i];
            tried += 1;
            if self.try_sync(s, &experts[s], false) {
                self.dirty.swap_remove(i);
                self.is_dirty[s] = false;
            } else {
                self.counters.sync_deferred += 1;
                i += 1;
            }
        }
    }

    /// Copies every dirty slot, waiting for the locks. Not real-time.
    pub fn sync_all_blocking(&mut self, experts: &[Expert]) {
        while let Some(s) = self.dirty.pop() {
            self.try_sync(s, &experts[s], true);
            self.is_dirty[s] = false;
        }
    }

    /// Copies expert `e` of slot `s` into its shared input: only the new rows when the
    /// input is the same expert with the same rows so far (appends), else all rows.
    fn try_sync(&self, s: usize, e: &Expert, wait: bool) -> bool {
        let slot = &self.shared.slots[s].input;
        let mut input = if wait {
            lock(slot)
        } else {
            match slot.try_lock() {
                Ok(g) => g,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => return false,
            }
        };
        let live = self.live[s];
        input.live = live;
        if !live {
            input.n = 0;
            input.generation = e.generation;
            return true;
        }
        let same = input.generation == e.generation
            && input.structural_seq == e.structural_seq
            && input.n <= e.n;
        let from = if same { input.n } else { 0 };
        input.copy_rows(from, e.n, e.n_bar, &e.x, &e.y, &e.t, &e.base);
        input.generation = e.generation;
        input.seq = e.seq;
        input.structural_seq = e.structural_seq;
        true
    }

    /// Asks the refresh thread for a cycle now. Not real-time (may wake a thread).
    pub fn request_cycle(&self) {
        self.shared.requests.fetch_add(1, Ordering::AcqRel);
        if let Some(h) = &self.thread {
            h.thread().unpark();
        }
    }

    /// Sets or clears the test hold (see `refresh.rs`) and wakes the thread.
    pub fn set_hold(&self, hold: bool) {
        self.shared.hold.store(hold, Ordering::Release);
        if let Some(h) = &self.thread {
            h.thread().unpark();
        }
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.hold.store(false, Ordering::Release);
        if let Some(h) = self.thread.take() {
            h.thread().unpark();
            // A panicked refresh thread has nothing left to clean up.
            let _ = h.join();
        }
    }
}

impl Drop for DriftRuntime {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Clone for DriftRuntime {
    /// A new refresh thread with its own shared buffers; every slot starts dirty so that
    /// the clone's inputs are copied from its experts on its first calls.
    fn clone(&self) -> Self {
        let slots = self.live.len();
        let mut c = Self::start(self.params.clone(), slots);
        c.live.copy_from_slice(&self.live);
        c.t_now = f64::NEG_INFINITY;
        c.observe_time(self.t_now);
        c.counters = self.counters;
        for s in 0..slots {
            c.mark_dirty(s);
        }
        c
    }
}

impl std::fmt::Debug for DriftRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriftRuntime")
            .field("drift", &self.params.drift)
            .field("t_now", &self.t_now)
            .field("running", &self.thread.is_some())
            .field("dirty", &self.dirty.len())
            .field("counters", &self.counters)
            .finish()
    }
}
