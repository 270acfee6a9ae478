//! Drift on the control thread: adopting refreshed expert factors, removing expired
//! samples, retiring experts whose samples all expired, and the non-real-time helpers
//! (a synchronous refresh for tests and offline runs, statistics, test hooks).
//!
//! Adoption (at the start of `predict`, and of an `update` that does not reuse the
//! prediction) takes at most [`ADOPT_PER_CALL`] results. A result is the factor of
//! K + diag(v(τ)) over the rows of a copy of the expert that the refresh thread kept. It
//! is adopted when the expert is the same one (generation) and has only gained rows by
//! appends since the copy: the expired rows are removed, the factor and α are swapped in
//! (no copy), and rows appended since the copy are added back by rank-one extensions with
//! their v(τ). Otherwise (the slot was recycled, or a Dense replacement changed a row) it
//! is dropped and the next cycle refreshes the expert again.
//!
//! Real-time: [`SkyGp::drift_adopt`] and [`SkyGp::drift_sync`] allocate nothing and only
//! `try_lock`.

use crate::config::PIVOT_FLOOR;
use crate::model::SkyGp;
use gpn_gp_core::drift::Drift;
use gpn_gp_core::kernel::Kernel;
use gpn_gp_core::model::ModelError;
use std::sync::atomic::Ordering;
use std::sync::{Arc, TryLockError};
use std::time::{Duration, Instant};

/// Refreshed experts adopted per `predict`/`update` at most (bounds the control thread's
/// work: each adoption is a few buffer swaps plus, if rows were appended since the copy,
/// their rank-one extensions).
pub const ADOPT_PER_CALL: usize = 4;
/// Changed experts copied to the refresh thread per call at most.
pub const SYNC_PER_CALL: usize = 4;
/// How long [`SkyGp::drift_refresh_now`] waits for the refresh thread.
const REFRESH_NOW_TIMEOUT: Duration = Duration::from_secs(60);

/// Counters of the drift machinery (see [`SkyGp::drift_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DriftStats {
    /// Newest sample stamp seen, s (−∞ before the first update).
    pub t_now_s: f64,
    /// Refresh cycles the background thread has finished.
    pub refresh_cycles: u64,
    /// Expert refreshes it has published.
    pub experts_refreshed: u64,
    /// Refreshes whose factorisation failed (the expert kept its old factor).
    pub refresh_failures: u64,
    /// Duration of the last and of the longest refresh cycle, s.
    pub last_cycle_s: f64,
    /// See `last_cycle_s`.
    pub max_cycle_s: f64,
    /// Refreshed factors adopted by `predict`/`update`.
    pub results_adopted: u64,
    /// Refreshed factors dropped because the expert changed meanwhile.
    pub results_dropped: u64,
    /// Samples removed because their injected variance passed the cap.
    pub samples_expired: u64,
    /// Experts retired because all their samples expired.
    pub experts_retired: u64,
    /// Copies to the refresh thread deferred because it was reading that expert (the
    /// control thread never waits; the copy is retried on a later call).
    pub sync_deferred: u64,
    /// Changed experts not yet copied to the refresh thread.
    pub pending_sync: usize,
}

impl SkyGp {
    /// Adopts up to [`ADOPT_PER_CALL`] refreshed experts, then copies up to
    /// [`SYNC_PER_CALL`] changed experts to the refresh thread. No-op without drift.
    /// Real-time.
    pub(crate) fn drift_adopt(&mut self) {
        self.drift_adopt_n(ADOPT_PER_CALL);
        self.drift_sync();
    }

    /// Copies up to [`SYNC_PER_CALL`] changed experts to the refresh thread. Real-time.
    pub(crate) fn drift_sync(&mut self) {
        if let Some(rt) = self.drift.as_mut() {
            rt.sync(&self.pool.experts, SYNC_PER_CALL);
        }
    }

    fn drift_adopt_n(&mut self, budget: usize) -> usize {
        let mut done = 0;
        while done < budget {
            let Some(rt) = self.drift.as_ref() else {
                break;
            };
            let Some(s) = rt.shared.ring.pop() else {
                break;
            };
            self.adopt_slot(s);
            done += 1;
        }
        done
    }

    /// Adopts (or drops) the ready result of slot `s`.
    fn adopt_slot(&mut self, s: usize) {
        let Some(rt) = self.drift.as_mut() else {
            return;
        };
        // An Arc clone is an atomic increment: no allocation.
        let shared = Arc::clone(&rt.shared);
        let slot = &shared.slots[s];
        let mut res = match slot.result.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => {
                // Cannot happen by protocol (shared.rs); the next cycle refreshes again.
                slot.ready.store(false, Ordering::Release);
                rt.counters.dropped += 1;
                return;
            }
        };
        let e = &mut self.pool.experts[s];
        let (n, n_snap) = (e.n, res.n_snap);
        if !(rt.live[s]
            && res.generation == e.generation
            && e.structural_seq <= res.seq
            && n_snap <= n)
        {
            drop(res);
            slot.ready.store(false, Ordering::Release);
            rt.counters.dropped += 1;
            return;
        }
        e.retain_rows(&res.keep, n_snap);
        let kept = e.n;
        let removed = n - kept;
        rt.counters.expired += removed as u64;
        rt.counters.adopted += 1;
        if kept == 0 {
            drop(res);
            slot.ready.store(false, Ordering::Release);
            self.retire(s);
            return;
        }
        for (own, fresh) in e.chol.iter_mut().zip(res.chol.iter_mut()) {
            own.swap(fresh);
        }
        e.factor_time = res.tau;
        let m = res.keep.len();
        if kept > m {
            // Rows appended since the copy: back in by rank-one extensions with v(τ).
            let drift = *rt.drift();
            let d = e.center.len();
            let n_bar = e.n_bar;
            let mut failed = false;
            for j in m..kept {
                for (g, group) in self.groups.iter().enumerate() {
                    let b = &mut self.scratch.b[..j];
                    let xj = &e.x[j * d..(j + 1) * d];
                    for (i, bi) in b.iter_mut().enumerate() {
                        *bi = group.kernel.value(&e.x[i * d..(i + 1) * d], xj);
                    }
                    let c = group.kernel.diag()
                        + drift.var(e.base[g * n_bar + j], e.factor_time - e.t[j]);
                    failed |= e.chol[g].extend_mut(b, c, PIVOT_FLOOR).is_err();
                }
                if failed {
                    break;
                }
            }
            if failed {
                // Not expected (finite data, floored pivots): rebuild from scratch.
                for (g, group) in self.groups.iter().enumerate() {
                    let _ = e.refactor_drift(g, group, &drift, &mut self.scratch.chol);
                }
            }
            e.solve_alpha(&self.out_group);
        } else {
            std::mem::swap(&mut e.alpha, &mut res.alpha);
        }
        drop(res);
        slot.ready.store(false, Ordering::Release);
        if removed > 0 {
            e.seq += 1;
            e.structural_seq = e.seq;
            rt.mark_dirty(s);
        }
        self.cache.valid = false;
        self.cache.kv_ready = false;
    }

    /// Removes the expert of slot `s` (all its samples expired) from 𝒯; its slot is
    /// reused by the next new expert.
    fn retire(&mut self, s: usize) {
        let Some(pos) = self.pool.order.iter().position(|&o| o == s) else {
            return;
        };
        self.pool.order.remove(pos);
        self.pool.free.push(s);
        let e = &mut self.pool.experts[s];
        e.n = 0;
        for ch in &mut e.chol {
            ch.clear();
        }
        e.generation += 1;
        e.seq += 1;
        e.structural_seq = e.seq;
        if let Some(rt) = self.drift.as_mut() {
            rt.live[s] = false;
            rt.mark_dirty(s);
            rt.counters.retired += 1;
        }
        let len = self.pool.len();
        self.nu_prev = match self.nu_prev {
            _ if len == 0 => None,
            Some(nu) if pos < nu => Some(nu - 1),
            Some(nu) => Some(nu.min(len - 1)),
            None => None,
        };
        // List positions moved: nothing cached may refer to them.
        self.cache.sel.clear();
        self.cache.valid = false;
        self.cache.kv_ready = false;
        self.cache.n_agg = 0;
    }

    /// Brings every expert up to date with the newest stamp, waiting for the refresh
    /// thread: copies all changed experts, asks for a cycle, adopts every result, until
    /// each expert's factor time is `t_now`. **Not real-time** (waits, may take long); for
    /// tests, offline evaluation and before a save. No-op without drift.
    pub fn drift_refresh_now(&mut self) -> Result<(), ModelError> {
        if self.drift.is_none() {
            return Ok(());
        }
        self.check_drift_started()?;
        let started = Instant::now();
        loop {
            self.drift_adopt_n(usize::MAX);
            let Some(rt) = self.drift.as_mut() else {
                return Ok(());
            };
            if !rt.refreshes {
                // A drift that adds nothing: every factor is always that of t_now.
                return Ok(());
            }
            rt.sync_all_blocking(&self.pool.experts);
            let t_now = rt.t_now;
            // Fresh: factored at t_now, and no row expired at t_now (a Dense refactor moves
            // the factor time to t_now but only a refresh removes expired rows).
            let drift = *rt.drift();
            let fresh = !t_now.is_finite()
                || self.pool.order.iter().all(|&s| {
                    let e = &self.pool.experts[s];
                    e.factor_time.to_bits() == t_now.to_bits()
                        && (0..e.n).all(|i| {
                            let age = t_now - e.t[i];
                            !e.base.chunks(e.n_bar).all(|col| drift.expired(col[i], age))
                        })
                });
            if fresh {
                return Ok(());
            }
            let target = rt.shared.cycles_started.load(Ordering::Acquire) + 1;
            rt.request_cycle();
            while rt.shared.cycles_done.load(Ordering::Acquire) < target {
                if started.elapsed() > REFRESH_NOW_TIMEOUT {
                    return Err(ModelError::Other(
                        "skygp: drift refresh did not complete (refresh thread held or stopped)"
                            .into(),
                    ));
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// The drift model (None when the `drift` key is absent or null).
    pub fn drift(&self) -> Option<&Drift> {
        self.drift.as_ref().map(|rt| rt.drift())
    }

    /// Counters of the drift machinery (None without drift). Reads atomics only.
    pub fn drift_stats(&self) -> Option<DriftStats> {
        let rt = self.drift.as_ref()?;
        let sh = &rt.shared;
        let secs = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64 * 1e-9;
        Some(DriftStats {
            t_now_s: rt.t_now,
            refresh_cycles: sh.cycles_done.load(Ordering::Relaxed),
            experts_refreshed: sh.refreshed.load(Ordering::Relaxed),
            refresh_failures: sh.failures.load(Ordering::Relaxed),
            last_cycle_s: secs(&sh.last_cycle_nanos),
            max_cycle_s: secs(&sh.max_cycle_nanos),
            results_adopted: rt.counters.adopted,
            results_dropped: rt.counters.dropped,
            samples_expired: rt.counters.expired,
            experts_retired: rt.counters.retired,
            sync_deferred: rt.counters.sync_deferred,
            pending_sync: rt.dirty.len(),
        })
    }

    /// Stamps t_s of the samples of the expert at list position `pos` (drift only).
    pub fn expert_times(&self, pos: usize) -> Option<&[f64]> {
        self.drift.as_ref()?;
        (pos < self.pool.len()).then(|| {
            let e = self.pool.at(pos);
            &e.t[..e.n]
        })
    }

    /// Base variances σ_s² of the samples of the expert at list position `pos` in output
    /// group `g` (drift only).
    pub fn expert_base_vars(&self, pos: usize, g: usize) -> Option<&[f64]> {
        self.drift.as_ref()?;
        if pos >= self.pool.len() || g >= self.groups.len() {
            return None;
        }
        let e = self.pool.at(pos);
        Some(&e.base[g * e.n_bar..g * e.n_bar + e.n])
    }

    /// Factor time τ of the expert at list position `pos`: its factor holds v_s(τ) on the
    /// diagonal (drift only).
    pub fn expert_factor_time(&self, pos: usize) -> Option<f64> {
        self.drift.as_ref()?;
        (pos < self.pool.len()).then(|| self.pool.at(pos).factor_time)
    }

    /// Test hook: makes the refresh thread pause, at its next expert, while it holds that
    /// expert's input lock (`true`), or lets it go on (`false`). Wakes the thread.
    pub fn drift_hold_refresh(&self, hold: bool) {
        if let Some(rt) = &self.drift {
            rt.set_hold(hold);
        }
    }

    /// Test hook: the refresh thread is paused at the hold point.
    pub fn drift_refresh_held(&self) -> bool {
        self.drift
            .as_ref()
            .is_some_and(|rt| rt.shared.held.load(Ordering::Acquire))
    }

    /// Asks the refresh thread for a cycle now, without waiting. Not real-time (wakes a
    /// thread).
    pub fn drift_request_refresh(&self) {
        if let Some(rt) = &self.drift {
            rt.request_cycle();
        }
    }
}
