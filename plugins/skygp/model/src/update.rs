//! UPDATE, spec §3.5 U1–U3: time stamps, append to the first non-full selected expert
//! (rank-one extension reusing the prediction's k and v), Dense replacement, or a new
//! expert inserted next to the nearest one (recycling a pool slot when full).
//! With drift each stored row also gets its stamp and base variance, the factor's new
//! diagonal entry is the sample's injected variance, and every changed expert is copied
//! to the refresh thread's input (`runtime.rs`); refreshed factors are adopted first
//! (`adopt.rs`) unless the update reuses the prediction's cache.
//! Real-time: no allocation (the O(N̄³) refactor works in reserved scratch).

use crate::config::{
    DENSE_REFACTOR_EVERY, DecayClock, EmptyCandidates, InsertSide, NuPrevRule, Variant,
};
use crate::expert::Stamp;
use crate::insert;
use crate::model::SkyGp;
use crate::replace;
use gpn_gp_core::model::ModelError;

impl SkyGp {
    /// One update with (x, y) at time `t_secs` with per-output noise `noise_var` (used
    /// only with drift).
    pub(crate) fn update_impl(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        if let Some(rt) = self.drift.as_mut() {
            rt.observe_time(t_secs);
            rt.set_base(&self.groups, &self.out_group, noise_var);
        }
        let reuse = self.cache.valid && self.cache.x[..] == x[..];
        if !reuse {
            self.cache.kv_ready = false;
            self.drift_adopt();
            self.select(x);
        }
        self.cache.valid = false;
        // U1: ϑ ← 1 for I_agg; everything else decays implicitly through its stamp.
        if self.cfg.decay_clock == DecayClock::Seconds {
            self.clock = self.clock.max(t_secs);
            for &pos in &self.cache.sel {
                if pos < self.pool.len() {
                    let slot = self.pool.order[pos];
                    self.pool.experts[slot].stamp = self.clock;
                }
            }
        }
        let result = self.absorb(x, y, t_secs);
        self.cache.kv_ready = false;
        self.samples_seen += 1;
        self.drift_sync();
        result
    }

    /// Drift: slot `slot` changed (`structural`: not by an append).
    fn drift_changed(&mut self, slot: usize, structural: bool) {
        if let Some(rt) = self.drift.as_mut() {
            let e = &mut self.pool.experts[slot];
            e.seq += 1;
            if structural {
                e.structural_seq = e.seq;
            }
            rt.mark_dirty(slot);
        }
    }

    /// U2–U3.
    fn absorb(&mut self, x: &[f64], y: &[f64], t_secs: f64) -> Result<(), ModelError> {
        let n_bar = self.cfg.n_bar;
        let n_groups = self.groups.len();
        let dense = self.cfg.variant == Variant::Dense;
        let steps = self.cfg.decay_clock == DecayClock::Steps;
        for j in 0..self.cache.sel.len() {
            let pos = self.cache.sel[j];
            if pos >= self.pool.len() {
                continue;
            }
            let slot = self.pool.order[pos];
            if steps {
                // Reference: ϑ ← 1 for every expert visited by the update loop.
                self.pool.experts[slot].stamp = self.clock;
            }
            if self.pool.experts[slot].n < n_bar {
                let r = j * n_groups * n_bar..(j + 1) * n_groups * n_bar;
                let cached = self
                    .cache
                    .kv_ready
                    .then(|| (&self.cache.k[r.clone()], &self.cache.v[r]));
                let stamp = self.drift.as_ref().map(|rt| Stamp {
                    drift: rt.drift(),
                    t: t_secs,
                    base: &rt.base_new,
                });
                self.pool.experts[slot]
                    .append(
                        x,
                        y,
                        &self.groups,
                        &self.out_group,
                        cached,
                        &mut self.scratch.b,
                        stamp,
                    )
                    .map_err(|e| {
                        ModelError::Other(format!("skygp: rank-one extension failed: {e}"))
                    })?;
                self.drift_changed(slot, false);
                return Ok(());
            }
            if dense {
                let e = &self.pool.experts[slot];
                if let Some(s) = replace::victim(
                    self.cfg.replace_rule,
                    self.cfg.use_drop_center,
                    e,
                    &self.groups[0].kernel,
                    x,
                ) {
                    let swapped = self.swap_in(slot, s, x, y, t_secs);
                    self.drift_changed(slot, true);
                    swapped?;
                    self.replacements += 1;
                    return Ok(());
                }
            }
        }
        self.spawn(x, y, t_secs);
        Ok(())
    }

    /// Dense replacement: overwrite slot s of expert `slot` with (x, y), move the center,
    /// update the dropped center, refactor (spec §3.6.1 "on accept").
    /// With a growing drift the refactorisation is that of K + diag(v(t_now)) (the factor
    /// time moves to t_now); a drift that adds nothing updates the row like no drift.
    fn swap_in(
        &mut self,
        slot: usize,
        s: usize,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
    ) -> Result<(), ModelError> {
        let d = x.len();
        let n_bar = self.cfg.n_bar;
        let sc = &mut self.scratch;
        let e = &mut self.pool.experts[slot];
        let drift = self.drift.as_ref();
        if let Some(rt) = drift {
            sc.t_old = e.t[s];
            e.t[s] = t_secs;
            for (g, b) in sc.base_old.iter_mut().enumerate() {
                *b = e.base[g * n_bar + s];
                e.base[g * n_bar + s] = rt.base_new[g];
            }
            e.factor_time = rt.t_now;
        }
        sc.x_old.copy_from_slice(&e.x[s * d..(s + 1) * d]);
        sc.center.copy_from_slice(&e.center);
        sc.center_off.copy_from_slice(&e.center_off);
        let n_off_before = e.n_off;
        for (o, &yo) in y.iter().enumerate() {
            sc.y_old[o] = e.y[o * n_bar + s];
            e.y[o * n_bar + s] = yo;
        }
        e.x[s * d..(s + 1) * d].copy_from_slice(x);
        let nb = n_bar as f64;
        for ((c, &xn), &xo) in e.center.iter_mut().zip(x).zip(&sc.x_old) {
            *c += (xn - xo) / nb;
        }
        if e.n_off == 0 {
            e.center_off.copy_from_slice(&sc.x_old);
        } else {
            let k = e.n_off as f64;
            for (c, &xo) in e.center_off.iter_mut().zip(&sc.x_old) {
                *c = (k * *c + xo) / (k + 1.0);
            }
        }
        e.n_off += 1;
        e.refresh_k_row(s, &self.groups);
        // The first replacement turns the appended factor into that of K + jitter·I; later
        // ones update that factor's row, with a periodic refactor (see the constant).
        let row_update = !(e.n_off - 1).is_multiple_of(DENSE_REFACTOR_EVERY);
        // A drift that adds nothing keeps K (with the samples' own noise) like no drift.
        let growing = drift.map(|rt| rt.drift()).filter(|d| d.grows());
        let mut failure = None;
        for (g, group) in self.groups.iter().enumerate() {
            let done = match growing {
                None if row_update => e
                    .replace_factor_row(g, s, &mut sc.row)
                    .or_else(|_| e.refactor(g, group, &mut sc.chol)),
                None => e.refactor(g, group, &mut sc.chol),
                Some(dr) => e.refactor_drift(g, group, dr, &mut sc.chol),
            };
            if let Err(err) = done {
                failure = Some(err);
                break;
            }
        }
        if let Some(err) = failure {
            // Undo the swap and rebuild the factors of the old data.
            e.x[s * d..(s + 1) * d].copy_from_slice(&sc.x_old);
            for (o, &yo) in sc.y_old.iter().enumerate() {
                e.y[o * n_bar + s] = yo;
            }
            e.center.copy_from_slice(&sc.center);
            e.center_off.copy_from_slice(&sc.center_off);
            e.n_off = n_off_before;
            if drift.is_some() {
                e.t[s] = sc.t_old;
                for (g, &b) in sc.base_old.iter().enumerate() {
                    e.base[g * n_bar + s] = b;
                }
            }
            e.refresh_k_row(s, &self.groups);
            for (g, group) in self.groups.iter().enumerate() {
                let _ = match growing {
                    None => e.refactor(g, group, &mut sc.chol),
                    Some(dr) => e.refactor_drift(g, group, dr, &mut sc.chol),
                };
            }
            e.solve_alpha(&self.out_group);
            return Err(ModelError::Other(format!(
                "skygp: Dense refactorisation failed, swap undone: {err}"
            )));
        }
        e.solve_alpha(&self.out_group);
        Ok(())
    }

    /// U3: a new one-point expert, inserted next to the nearest expert (or appended).
    fn spawn(&mut self, x: &[f64], y: &[f64], t_secs: f64) {
        let n = self.pool.len();
        let anchor = match self.cache.sel.first() {
            Some(&p) => Some(p),
            // [R] with I_agg = [] because all candidates were stale: insert near ν_prev.
            None if self.cfg.empty_candidates == EmptyCandidates::Prior => self.nu_prev,
            None => None,
        };
        let mut q = match anchor {
            Some(a) if n >= 2 => {
                let a = a.min(n - 1);
                let pool = &self.pool;
                match self.cfg.insert_side {
                    InsertSide::Paper => insert::position(InsertSide::Paper, a, n, |pos| {
                        self.similarity(x, &pool.at(pos).center)
                    }),
                    InsertSide::RefMirror => insert::position(InsertSide::RefMirror, a, n, |pos| {
                        insert::reference_similarity(
                            &self.groups[0].kernel,
                            x,
                            &pool.at(pos).center,
                        )
                    }),
                }
            }
            _ => n,
        };
        self.scratch.protected.clear();
        for &pos in &self.cache.sel {
            if pos < n {
                self.scratch.protected.push(self.pool.order[pos]);
            }
        }
        let (slot, evicted) = self
            .pool
            .take_slot(self.cfg.eviction, &self.scratch.protected);
        if let Some(e) = evicted {
            if e < q {
                q -= 1;
            }
            if let Some(nu) = self.nu_prev.filter(|&nu| e < nu) {
                self.nu_prev = Some(nu - 1);
            }
        }
        let created = self.pool.created;
        self.pool.created += 1;
        let drift = self.drift.as_ref().map(|rt| {
            (
                Stamp {
                    drift: rt.drift(),
                    t: t_secs,
                    base: &rt.base_new,
                },
                rt.t_now,
            )
        });
        self.pool.experts[slot].reset_with(
            x,
            y,
            &self.groups,
            &self.out_group,
            self.clock,
            created,
            drift,
        );
        self.pool.order.insert(q, slot);
        if let Some(rt) = self.drift.as_mut() {
            rt.live[slot] = true;
            rt.mark_dirty(slot);
        }
        if self.cfg.nu_prev_rule == NuPrevRule::NewExpert {
            self.nu_prev = Some(q);
            self.x_prev.copy_from_slice(x);
        }
    }
}
