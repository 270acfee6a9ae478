//! The drift refresh thread (spec `specs/tvgp.md` §6.1, "SkyGP: apply v_i(t) inside each
//! expert's small exact GP and refactor on refresh"). At `refresh_hz`, for every expert
//! slot whose last result has been adopted: copy the expert's samples out of the shared
//! input, drop the samples that expired at the refresh time τ (newest stamp seen), factor
//! K + diag(v_s(τ)) per output group with v_s(τ) = ρ-inflated variance of sample s, solve
//! α per output, and publish the result for the control thread to adopt.
//!
//! Boundary: owns no model state; reads `Shared` inputs, writes `Shared` results.
//! Allocation: none after [`Worker::new`]. It never waits on the control thread: the only
//! locks it takes are the slot's input (held for a copy) and result (uncontended by
//! protocol, see `shared.rs`).

use crate::config::REFACTOR_JITTER;
use crate::groups::Group;
use crate::shared::{Shared, SlotInput, lock};
use gpn_gp_core::drift::Drift;
use gpn_gp_core::kernel::Kernel;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What a refresh needs to know of the model (a copy; the model does not change it).
#[derive(Debug, Clone)]
pub(crate) struct WorkerParams {
    pub drift: Drift,
    pub groups: Vec<Group>,
    pub out_group: Vec<usize>,
    pub n_bar: usize,
    pub d: usize,
    pub p: usize,
}

/// The refresh thread's state.
pub(crate) struct Worker {
    params: WorkerParams,
    shared: Arc<Shared>,
    /// Private copy of the slot being refreshed.
    snap: SlotInput,
    /// Per slot: (generation, seq, τ bits) of the last published result, to skip slots
    /// with nothing new.
    last: Vec<Option<(u64, u64, u64)>>,
}

impl Worker {
    /// **Allocates** the private buffers.
    pub fn new(params: WorkerParams, shared: Arc<Shared>) -> Self {
        let n_groups = params.groups.len();
        Self {
            snap: SlotInput::new(params.n_bar, params.d, params.p, n_groups),
            last: vec![None; shared.slots.len()],
            params,
            shared,
        }
    }

    /// The thread body: wait until the next period (or a request, or stop), then a cycle
    /// over all slots. The first cycle comes one period after the start (or at the first
    /// request), so that a new, cloned or loaded model is refreshed only when asked or due.
    pub fn run(mut self) {
        let period =
            Duration::from_secs_f64(self.params.drift.refresh_period_s().clamp(1e-6, 86_400.0));
        let sh = Arc::clone(&self.shared);
        let mut requests_seen = 0;
        let mut next = Instant::now() + period;
        loop {
            loop {
                if sh.stop.load(Ordering::Acquire) {
                    return;
                }
                if sh.requests.load(Ordering::Acquire) != requests_seen {
                    break;
                }
                let now = Instant::now();
                if now >= next {
                    break;
                }
                std::thread::park_timeout(next - now);
            }
            let start = Instant::now();
            requests_seen = sh.requests.load(Ordering::Acquire);
            let cycle = sh.cycles_started.fetch_add(1, Ordering::AcqRel) + 1;
            let tau = sh.t_now();
            if tau.is_finite() {
                for s in 0..sh.slots.len() {
                    if sh.stop.load(Ordering::Acquire) {
                        return;
                    }
                    self.refresh_slot(s, tau);
                }
            }
            let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            sh.last_cycle_nanos.store(nanos, Ordering::Relaxed);
            sh.max_cycle_nanos.fetch_max(nanos, Ordering::Relaxed);
            sh.cycles_done.store(cycle, Ordering::Release);
            next = start + period;
        }
    }

    /// Test hook: pause here (inside the slot's input lock) while `hold` is set.
    fn hold_point(&self) {
        let sh = &self.shared;
        if !sh.hold.load(Ordering::Acquire) {
            return;
        }
        while sh.hold.load(Ordering::Acquire) && !sh.stop.load(Ordering::Acquire) {
            sh.held.store(true, Ordering::Release);
            std::thread::park_timeout(Duration::from_millis(1));
        }
        sh.held.store(false, Ordering::Release);
    }

    /// Refreshes slot `s` at time `tau` unless its last result awaits adoption or nothing
    /// changed. Returns whether a result was published.
    fn refresh_slot(&mut self, s: usize, tau: f64) -> bool {
        let sh = Arc::clone(&self.shared);
        let slot = &sh.slots[s];
        if slot.ready.load(Ordering::Acquire) {
            return false;
        }
        {
            let input = lock(&slot.input);
            if !input.live {
                self.last[s] = None;
                return false;
            }
            self.hold_point();
            if self.last[s] == Some((input.generation, input.seq, tau.to_bits())) {
                return false;
            }
            let n_bar = self.params.n_bar;
            let snap = &mut self.snap;
            snap.live = true;
            snap.generation = input.generation;
            snap.seq = input.seq;
            snap.structural_seq = input.structural_seq;
            snap.copy_rows(0, input.n, n_bar, &input.x, &input.y, &input.t, &input.base);
        }
        let mut result = lock(&slot.result);
        let WorkerParams {
            drift,
            groups,
            out_group,
            n_bar,
            d,
            ..
        } = &self.params;
        let (n_bar, d) = (*n_bar, *d);
        let snap = &self.snap;
        result.keep.clear();
        for i in 0..snap.n {
            let age = tau - snap.t[i];
            let expired = (0..groups.len()).all(|g| drift.expired(snap.base[g * n_bar + i], age));
            if !expired {
                result.keep.push(i);
            }
        }
        let m = result.keep.len();
        let r = &mut *result;
        for (g, group) in groups.iter().enumerate() {
            let keep = &r.keep;
            let row = |i: usize| &snap.x[keep[i] * d..(keep[i] + 1) * d];
            let base = &snap.base[g * n_bar..(g + 1) * n_bar];
            let k = |i: usize, j: usize| {
                let v = group.kernel.value(row(i), row(j));
                if i == j {
                    v + drift.var(base[keep[i]], tau - snap.t[keep[i]])
                } else {
                    v
                }
            };
            // Without jitter first, so that the factor is exactly that of K + diag(v);
            // the Dense refactor's jitter only if that fails.
            if r.chol[g].factor_mut(m, 0.0, k).is_err()
                && r.chol[g].factor_mut(m, REFACTOR_JITTER, k).is_err()
            {
                sh.failures.fetch_add(1, Ordering::Relaxed);
                return false;
            }
        }
        for (o, &g) in out_group.iter().enumerate() {
            let a = &mut r.alpha[o * n_bar..o * n_bar + m];
            for (ai, &i) in a.iter_mut().zip(&r.keep) {
                *ai = snap.y[o * n_bar + i];
            }
            r.chol[g].solve_mut(a);
        }
        r.generation = snap.generation;
        r.seq = snap.seq;
        r.n_snap = snap.n;
        r.tau = tau;
        drop(result);
        self.last[s] = Some((snap.generation, snap.seq, tau.to_bits()));
        slot.ready.store(true, Ordering::Release);
        // Never full: each slot is in the ring at most once (guarded by `ready`).
        let _ = sh.ring.push(s);
        sh.refreshed.fetch_add(1, Ordering::Relaxed);
        true
    }
}
