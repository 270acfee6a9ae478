//! What the control thread and the drift refresh thread share: per expert slot, a copy of
//! the expert's samples (input to a refresh) and a result buffer (a refreshed factor), plus
//! the newest time stamp, the ready ring and counters. Nothing here computes.
//!
//! Ownership protocol (it is what makes the control side wait-free):
//! * `input`: written by the control thread with `try_lock` only (on contention it keeps
//!   the slot marked dirty and copies later); read by the refresh thread, which holds the
//!   lock only to copy the rows out.
//! * `result`: while `ready` is false it belongs to the refresh thread, which fills it and
//!   then sets `ready` and pushes the slot to `ring`; while `ready` is true it belongs to
//!   the control thread, which adopts it (swapping buffers, no copy) and clears `ready`.
//!   The mutex is therefore never contended; it is there so that the hand-over needs no
//!   `unsafe`, and the control thread still only `try_lock`s it.

use crate::ring::ReadyRing;
use gpn_gp_core::cholesky::PackedCholesky;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The samples of one expert as the refresh thread needs them.
#[derive(Debug, Clone)]
pub(crate) struct SlotInput {
    /// The slot holds an expert of the list 𝒯.
    pub live: bool,
    /// Expert identity and change counters at the time of the copy.
    pub generation: u64,
    pub seq: u64,
    pub structural_seq: u64,
    /// Rows held.
    pub n: usize,
    /// N̄×d inputs, `y[o·N̄ + s]`, stamps, `base[g·N̄ + s]` (same layouts as the expert).
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub t: Vec<f64>,
    pub base: Vec<f64>,
}

impl SlotInput {
    /// Empty buffers for N̄ rows. **Allocates.**
    pub fn new(n_bar: usize, d: usize, p: usize, n_groups: usize) -> Self {
        Self {
            live: false,
            generation: 0,
            seq: 0,
            structural_seq: 0,
            n: 0,
            x: vec![0.0; n_bar * d],
            y: vec![0.0; n_bar * p],
            t: vec![0.0; n_bar],
            base: vec![0.0; n_bar * n_groups],
        }
    }

    /// Copies rows `from..n` of the same-layout buffers (and the header). No allocation.
    #[allow(clippy::too_many_arguments)]
    pub fn copy_rows(
        &mut self,
        from: usize,
        n: usize,
        n_bar: usize,
        x: &[f64],
        y: &[f64],
        t: &[f64],
        base: &[f64],
    ) {
        let d = self.x.len() / n_bar;
        self.x[from * d..n * d].copy_from_slice(&x[from * d..n * d]);
        for (dst, src) in self.y.chunks_mut(n_bar).zip(y.chunks(n_bar)) {
            dst[from..n].copy_from_slice(&src[from..n]);
        }
        self.t[from..n].copy_from_slice(&t[from..n]);
        for (dst, src) in self.base.chunks_mut(n_bar).zip(base.chunks(n_bar)) {
            dst[from..n].copy_from_slice(&src[from..n]);
        }
        self.n = n;
    }

    /// Bytes of the buffers.
    pub fn memory_bytes(&self) -> usize {
        8 * (self.x.len() + self.y.len() + self.t.len() + self.base.len())
    }
}

/// A refreshed expert: its factors and α over the rows it kept.
#[derive(Debug)]
pub(crate) struct SlotResult {
    /// The input this was computed from.
    pub generation: u64,
    pub seq: u64,
    /// Rows of that input.
    pub n_snap: usize,
    /// Refresh time τ: the diagonal holds ρ-inflated variances v_s(τ).
    pub tau: f64,
    /// Rows of the input kept (not expired), increasing; capacity N̄.
    pub keep: Vec<usize>,
    /// Factor of K + diag(v(τ)) over the kept rows, per group.
    pub chol: Vec<PackedCholesky>,
    /// α per output, `alpha[o·N̄ + i]` for kept row i.
    pub alpha: Vec<f64>,
}

impl SlotResult {
    /// Empty buffers for N̄ rows. **Allocates.**
    pub fn new(n_bar: usize, p: usize, n_groups: usize) -> Self {
        Self {
            generation: 0,
            seq: 0,
            n_snap: 0,
            tau: 0.0,
            keep: Vec::with_capacity(n_bar),
            chol: (0..n_groups)
                .map(|_| PackedCholesky::with_capacity(n_bar))
                .collect(),
            alpha: vec![0.0; n_bar * p],
        }
    }

    /// Bytes of the buffers.
    pub fn memory_bytes(&self) -> usize {
        8 * (self.keep.capacity() + self.alpha.len())
            + self
                .chol
                .iter()
                .map(PackedCholesky::memory_bytes)
                .sum::<usize>()
    }
}

/// One expert slot's shared state.
#[derive(Debug)]
pub(crate) struct SlotShared {
    pub input: Mutex<SlotInput>,
    pub result: Mutex<SlotResult>,
    /// `result` holds an unadopted result (then it belongs to the control thread).
    pub ready: AtomicBool,
}

/// Everything shared between the model and its refresh thread.
#[derive(Debug)]
pub(crate) struct Shared {
    pub slots: Box<[SlotShared]>,
    /// Slots with a ready result, in publication order.
    pub ring: ReadyRing,
    /// Newest sample stamp seen by `update` (f64 bits; −∞ before the first).
    pub t_now_bits: AtomicU64,
    /// Asks the refresh thread to exit.
    pub stop: AtomicBool,
    /// Test hook: the refresh thread pauses while holding a slot's input lock.
    pub hold: AtomicBool,
    /// The refresh thread is paused at the hold point.
    pub held: AtomicBool,
    /// Refresh requests (a new cycle starts at once instead of at the next period).
    pub requests: AtomicU64,
    /// Cycles started and finished.
    pub cycles_started: AtomicU64,
    pub cycles_done: AtomicU64,
    /// Experts refreshed (results published), factorisations that failed.
    pub refreshed: AtomicU64,
    pub failures: AtomicU64,
    /// Duration of the last and of the longest cycle, ns.
    pub last_cycle_nanos: AtomicU64,
    pub max_cycle_nanos: AtomicU64,
}

impl Shared {
    /// Buffers for `slots` experts. **Allocates.**
    pub fn new(slots: usize, n_bar: usize, d: usize, p: usize, n_groups: usize) -> Self {
        Self {
            slots: (0..slots)
                .map(|_| SlotShared {
                    input: Mutex::new(SlotInput::new(n_bar, d, p, n_groups)),
                    result: Mutex::new(SlotResult::new(n_bar, p, n_groups)),
                    ready: AtomicBool::new(false),
                })
                .collect(),
            ring: ReadyRing::new(slots),
            t_now_bits: AtomicU64::new(f64::NEG_INFINITY.to_bits()),
            stop: AtomicBool::new(false),
            hold: AtomicBool::new(false),
            held: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            cycles_started: AtomicU64::new(0),
            cycles_done: AtomicU64::new(0),
            refreshed: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            last_cycle_nanos: AtomicU64::new(0),
            max_cycle_nanos: AtomicU64::new(0),
        }
    }

    /// The newest stamp, as published by the control thread.
    pub fn t_now(&self) -> f64 {
        f64::from_bits(self.t_now_bits.load(Ordering::Acquire))
    }
}

/// Locks a mutex, recovering the data of a poisoned one (a panic elsewhere cannot leave
/// these plain buffers in a state worse than stale, and stale results are checked).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
