//! One local GP expert on fixed-capacity buffers (spec §2.3): its data, its factor per
//! output group, α per output, center, dropped center and time stamp.
//!
//! With drift (uncertainty injection) it also keeps each sample's stamp t_s and base
//! variance σ_s² per group, and its factor is that of K + diag(v_s(τ)) with
//! v_s(τ) = ρ-inflated σ_s² at the factor time τ (`factor_time`), instead of K + σ_n²I.
//!
//! Real-time: no method here allocates; [`Expert::new`] reserves everything.

use crate::config::{PIVOT_FLOOR, REFACTOR_JITTER, ROW_UPDATE_MIN_PIVOT_RATIO};
use crate::groups::Group;
use gpn_gp_core::cholesky::{CholeskyError, PackedCholesky, dot, row_start};
use gpn_gp_core::drift::Drift;
use gpn_gp_core::kernel::{ArdKernel, Kernel};

/// A new sample's drift data: the model, the sample's stamp and its base variance per group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stamp<'a> {
    pub drift: &'a Drift,
    pub t: f64,
    pub base: &'a [f64],
}

/// A local expert. Rows `0..n` of `x`, `y` and `alpha` are valid.
#[derive(Debug, Clone)]
pub(crate) struct Expert {
    /// Inputs, N̄×d row-major.
    pub x: Vec<f64>,
    /// Targets, one column of N̄ per output: `y[o*N̄ + s]`.
    pub y: Vec<f64>,
    /// α = K⁻¹y per output, same layout as `y`.
    pub alpha: Vec<f64>,
    /// Cholesky factor of K + σ_n²I, one per output group.
    pub chol: Vec<PackedCholesky>,
    /// K + σ_n²I per group, packed lower triangle like the factor (Dense only, so a
    /// replacement recomputes one row of kernel values instead of all n²/2; empty for
    /// Fast and with a drift that grows). With a drift that adds nothing
    /// ([`Drift::grows`]) the diagonal holds each sample's own base variance.
    pub kmat: Vec<Vec<f64>>,
    /// Center c: running mean of the inputs.
    pub center: Vec<f64>,
    /// Dropped center ^off c: running mean of evicted inputs (Dense).
    pub center_off: Vec<f64>,
    /// Points held, N_i.
    pub n: usize,
    /// Points ever evicted, n_off.
    pub n_off: usize,
    /// Decay clock when last selected or created: ϑ = ρ^(clock − stamp).
    pub stamp: f64,
    /// Creation counter (for FIFO eviction and LRU ties).
    pub created: u64,
    /// Capacity N̄.
    pub n_bar: usize,
    /// Drift only (empty otherwise): stamp of each sample, s.
    pub t: Vec<f64>,
    /// Drift only: base variance of each sample per group, `base[g·N̄ + s]`.
    pub base: Vec<f64>,
    /// Drift: the time τ of the factor's diagonal v_s(τ).
    pub factor_time: f64,
    /// Bumped each time the slot gets a new expert or loses it.
    pub generation: u64,
    /// Bumped by every change of the rows; `structural_seq` records the last change that
    /// was not an append (a replacement, a removal, a reset).
    pub seq: u64,
    pub structural_seq: u64,
}

impl Expert {
    /// Reserves every buffer. **Allocates.**
    pub fn new(
        n_bar: usize,
        d: usize,
        p: usize,
        n_groups: usize,
        keep_k: bool,
        drift: bool,
    ) -> Self {
        let per_sample = |len: usize| if drift { vec![0.0; len] } else { Vec::new() };
        Self {
            t: per_sample(n_bar),
            base: per_sample(n_bar * n_groups),
            factor_time: 0.0,
            generation: 0,
            seq: 0,
            structural_seq: 0,
            x: vec![0.0; n_bar * d],
            y: vec![0.0; n_bar * p],
            alpha: vec![0.0; n_bar * p],
            kmat: if keep_k {
                (0..n_groups)
                    .map(|_| vec![0.0; n_bar * (n_bar + 1) / 2])
                    .collect()
            } else {
                Vec::new()
            },
            chol: (0..n_groups)
                .map(|_| PackedCholesky::with_capacity(n_bar))
                .collect(),
            center: vec![0.0; d],
            center_off: vec![0.0; d],
            n: 0,
            n_off: 0,
            stamp: 0.0,
            created: 0,
            n_bar,
        }
    }

    /// Bytes of reserved buffers.
    pub fn memory_bytes(&self) -> usize {
        8 * (self.kmat.iter().map(Vec::len).sum::<usize>()
            + self.x.len()
            + self.y.len()
            + self.alpha.len()
            + self.center.len()
            + self.center_off.len()
            + self.t.len()
            + self.base.len())
            + self
                .chol
                .iter()
                .map(PackedCholesky::memory_bytes)
                .sum::<usize>()
    }

    /// The noise on the factor's diagonal for a new sample of group g: σ_n² without drift,
    /// v(τ) = ρ-inflated base at this expert's factor time with drift (the base itself
    /// unless the stamp is older than τ).
    #[inline]
    fn new_noise(&self, g: usize, group: &Group, stamp: Option<Stamp<'_>>) -> f64 {
        match stamp {
            None => group.noise_var,
            Some(st) => st.drift.var(st.base[g], self.factor_time - st.t),
        }
    }

    /// Stores the drift data of row s.
    fn set_stamp(&mut self, s: usize, stamp: Option<Stamp<'_>>) {
        if let Some(st) = stamp {
            self.t[s] = st.t;
            for (g, &b) in st.base.iter().enumerate() {
                self.base[g * self.n_bar + s] = b;
            }
        }
    }

    /// Resets to a one-point expert holding (x, y): c = x, L = [sqrt(σ_f² + σ_n²)] per
    /// group, α = y/(σ_f² + σ_n²) (spec §2.4, n = 0). With drift, σ_n² is the sample's
    /// v(τ) and the factor time τ is `t_now`.
    #[allow(clippy::too_many_arguments)]
    pub fn reset_with(
        &mut self,
        x: &[f64],
        y: &[f64],
        groups: &[Group],
        out_group: &[usize],
        stamp: f64,
        created: u64,
        drift: Option<(Stamp<'_>, f64)>,
    ) {
        let d = x.len();
        let n_bar = self.n_bar;
        self.x[..d].copy_from_slice(x);
        self.center.copy_from_slice(x);
        self.center_off.fill(0.0);
        self.n = 1;
        self.n_off = 0;
        self.stamp = stamp;
        self.created = created;
        self.generation += 1;
        self.seq += 1;
        self.structural_seq = self.seq;
        let st = drift.map(|(st, t_now)| {
            self.factor_time = t_now;
            st
        });
        self.set_stamp(0, st);
        for (gi, g) in groups.iter().enumerate() {
            let c = g.kernel.diag() + self.new_noise(gi, g, st);
            let ch = &mut self.chol[gi];
            ch.clear();
            // A 1×1 factor cannot fail: σ_f² > 0.
            let _ = ch.extend_with_solved_mut(&[], c, f64::MIN_POSITIVE);
        }
        for (gi, g) in groups.iter().enumerate() {
            let c = g.kernel.diag() + self.new_noise(gi, g, st);
            if let Some(km) = self.kmat.get_mut(gi) {
                km[0] = c;
            }
        }
        for (o, &yo) in y.iter().enumerate() {
            let gi = out_group[o];
            let g = &groups[gi];
            self.y[o * n_bar] = yo;
            self.alpha[o * n_bar] = yo / (g.kernel.diag() + self.new_noise(gi, g, st));
        }
    }

    /// k = κ(X, x) under `group`'s kernel into `k[..n]`.
    pub fn k_vector(&self, group: &Group, x: &[f64], k: &mut [f64]) {
        let rows = &self.x[..self.n * x.len()];
        group.kernel.values_to_rows(rows, x, &mut k[..self.n]);
    }

    /// [`Expert::k_vector`] from the scaled squared distances `r2` of the rows to x under
    /// this group's lengthscales (what [`Expert::sq_dists`] wrote; shared by groups of one
    /// shape). The same numbers: κ(X_s, x) = κ(r²_s) either way.
    pub fn k_from_sq_dists(&self, group: &Group, r2: &[f64], k: &mut [f64]) {
        for (ks, &r2s) in k[..self.n].iter_mut().zip(&r2[..self.n]) {
            *ks = group.kernel.value_from_sq_dist(r2s);
        }
    }

    /// v = L_g⁻¹k into `v[..n]` from k (`k[..n]`, of group g); returns vᵀv.
    pub fn solve_v(&self, g: usize, k: &[f64], v: &mut [f64]) -> f64 {
        let n = self.n;
        v[..n].copy_from_slice(&k[..n]);
        self.chol[g].solve_lower_mut(&mut v[..n]);
        dot(&v[..n], &v[..n])
    }

    /// The scaled squared distance of every row to x under `kernel`'s lengthscales, into
    /// `r2` (length ≥ n).
    pub fn sq_dists(&self, kernel: &ArdKernel, x: &[f64], r2: &mut [f64]) {
        let rows = &self.x[..self.n * x.len()];
        kernel.sq_dists_to_rows(rows, x, &mut r2[..self.n]);
    }

    /// Mean of output o from k (of its group): kᵀα_o.
    #[inline]
    pub fn mean(&self, o: usize, k: &[f64]) -> f64 {
        let n_bar = self.n_bar;
        dot(&k[..self.n], &self.alpha[o * n_bar..o * n_bar + self.n])
    }

    /// Appends (x, y) (spec §2.4): rank-one extension of every group's factor, center
    /// update (eq. 4), α by two triangular solves per output. `cached`, when given, holds
    /// (k, v) = (κ_g(X, x), L_g⁻¹k) for group g at offset g·N̄ (cached by the
    /// prediction); otherwise they are computed here in `scratch` (length ≥ N̄). With
    /// drift (`stamp`), the new diagonal entry is κ(x, x) + v(τ) and the stamp is stored.
    #[allow(clippy::too_many_arguments)]
    pub fn append(
        &mut self,
        x: &[f64],
        y: &[f64],
        groups: &[Group],
        out_group: &[usize],
        cached: Option<(&[f64], &[f64])>,
        scratch: &mut [f64],
        stamp: Option<Stamp<'_>>,
    ) -> Result<(), CholeskyError> {
        let (n, d, n_bar) = (self.n, x.len(), self.n_bar);
        for (g, group) in groups.iter().enumerate() {
            let c = group.kernel.diag() + self.new_noise(g, group, stamp);
            let row = n * (n + 1) / 2;
            match cached {
                Some((k, v)) => {
                    if let Some(km) = self.kmat.get_mut(g) {
                        km[row..row + n].copy_from_slice(&k[g * n_bar..g * n_bar + n]);
                        km[row + n] = c;
                    }
                    let l = &v[g * n_bar..g * n_bar + n];
                    self.chol[g].extend_with_solved_mut(l, c, PIVOT_FLOOR)?;
                }
                None => {
                    for (s, b) in scratch[..n].iter_mut().enumerate() {
                        *b = group.kernel.value(&self.x[s * d..(s + 1) * d], x);
                    }
                    if let Some(km) = self.kmat.get_mut(g) {
                        km[row..row + n].copy_from_slice(&scratch[..n]);
                        km[row + n] = c;
                    }
                    self.chol[g].extend_mut(&mut scratch[..n], c, PIVOT_FLOOR)?;
                }
            }
        }
        self.x[n * d..(n + 1) * d].copy_from_slice(x);
        self.set_stamp(n, stamp);
        let m = (n + 1) as f64;
        for (c, &xi) in self.center.iter_mut().zip(x) {
            *c = (*c * n as f64 + xi) / m;
        }
        self.n = n + 1;
        for (o, &yo) in y.iter().enumerate() {
            self.y[o * n_bar + n] = yo;
        }
        self.solve_alpha(out_group);
        Ok(())
    }

    /// α_o = L⁻ᵀ(L⁻¹y_o) for every output, from its group's factor.
    pub fn solve_alpha(&mut self, out_group: &[usize]) {
        let n = self.n;
        let n_bar = self.n_bar;
        for (o, &g) in out_group.iter().enumerate() {
            let a = &mut self.alpha[o * n_bar..o * n_bar + n];
            a.copy_from_slice(&self.y[o * n_bar..o * n_bar + n]);
            self.chol[g].solve_mut(a);
        }
    }

    /// Recomputes row and column s of every cached K after input s (and, with a drift that
    /// adds nothing, its base variance) changed (Dense).
    pub fn refresh_k_row(&mut self, s: usize, groups: &[Group]) {
        let (n, d, n_bar) = (self.n, self.center.len(), self.n_bar);
        let xs = &self.x[s * d..(s + 1) * d];
        // A cached K beside base variances exists only for a drift that adds nothing.
        let per_sample = !self.base.is_empty();
        for (g, (km, group)) in self.kmat.iter_mut().zip(groups).enumerate() {
            let noise = if per_sample {
                self.base[g * n_bar + s]
            } else {
                group.noise_var
            };
            for j in 0..n {
                let k = group.kernel.value(xs, &self.x[j * d..(j + 1) * d]);
                let (i, jj) = if j <= s { (s, j) } else { (j, s) };
                km[row_start(i) + jj] = if j == s { k + noise } else { k };
            }
        }
    }

    /// Full refactorisation of group g into `scratch` (K + σ_n²I + jitter·I, spec §2.5),
    /// from the cached K when there is one; on success the result is swapped in.
    /// No allocation.
    pub fn refactor(
        &mut self,
        g: usize,
        group: &Group,
        scratch: &mut PackedCholesky,
    ) -> Result<(), CholeskyError> {
        let (n, d) = (self.n, self.center.len());
        let xs = &self.x;
        let sn2 = group.noise_var;
        if let Some(km) = self.kmat.get(g) {
            scratch.factor_mut(n, REFACTOR_JITTER, |i, j| km[row_start(i) + j])?;
            self.chol[g].swap(scratch);
            return Ok(());
        }
        scratch.factor_mut(n, REFACTOR_JITTER, |i, j| {
            let k = group
                .kernel
                .value(&xs[i * d..(i + 1) * d], &xs[j * d..(j + 1) * d]);
            if i == j { k + sn2 } else { k }
        })?;
        self.chol[g].swap(scratch);
        Ok(())
    }

    /// Dense, after [`Expert::refresh_k_row`] of row s: updates group g's factor, which must
    /// be that of the cached K + jitter·I (what [`Expert::refactor`] leaves), to the new
    /// row s in O(n²). `scratch` needs 3n entries. On error the factor is invalid: refactor.
    /// No allocation.
    pub fn replace_factor_row(
        &mut self,
        g: usize,
        s: usize,
        scratch: &mut [f64],
    ) -> Result<(), CholeskyError> {
        let n = self.n;
        let km = &self.kmat[g];
        let (col, work) = scratch.split_at_mut(n);
        let rs = s * (s + 1) / 2;
        col[..s].copy_from_slice(&km[rs..rs + s]);
        for (i, c) in col.iter_mut().enumerate().skip(s) {
            *c = km[row_start(i) + s];
        }
        col[s] += REFACTOR_JITTER;
        self.chol[g].replace_row_mut(s, col, ROW_UPDATE_MIN_PIVOT_RATIO, work)
    }

    /// Drift: full refactorisation of group g at the factor time τ, K + diag(v_s(τ)),
    /// without jitter (so it is exactly that matrix's factor) and, only if that fails,
    /// with the Dense refactor's jitter. Into `scratch`, swapped in on success.
    pub fn refactor_drift(
        &mut self,
        g: usize,
        group: &Group,
        drift: &Drift,
        scratch: &mut PackedCholesky,
    ) -> Result<(), CholeskyError> {
        let (n, d, n_bar) = (self.n, self.center.len(), self.n_bar);
        let (xs, t, tau) = (&self.x, &self.t, self.factor_time);
        let base = &self.base[g * n_bar..(g + 1) * n_bar];
        let k = |i: usize, j: usize| {
            let v = group
                .kernel
                .value(&xs[i * d..(i + 1) * d], &xs[j * d..(j + 1) * d]);
            if i == j {
                v + drift.var(base[i], tau - t[i])
            } else {
                v
            }
        };
        if scratch.factor_mut(n, 0.0, k).is_err() {
            scratch.factor_mut(n, REFACTOR_JITTER, k)?;
        }
        self.chol[g].swap(scratch);
        Ok(())
    }

    /// Drift: keeps rows `keep` (increasing, all < `n_snap`) and rows `n_snap..n`, in that
    /// order, moving x, y, stamps and base variances down; the center becomes the mean of
    /// the rows kept. Factors and α are the caller's business. No allocation.
    pub fn retain_rows(&mut self, keep: &[usize], n_snap: usize) {
        let (d, n_bar, n) = (self.center.len(), self.n_bar, self.n);
        let mut w = 0;
        for r in keep.iter().copied().chain(n_snap..n) {
            if r != w {
                self.x.copy_within(r * d..(r + 1) * d, w * d);
                for col in self.y.chunks_mut(n_bar) {
                    col[w] = col[r];
                }
                self.t[w] = self.t[r];
                for col in self.base.chunks_mut(n_bar) {
                    col[w] = col[r];
                }
            }
            w += 1;
        }
        self.n = w;
        if w == n {
            return;
        }
        self.center.fill(0.0);
        for s in 0..w {
            for (c, &xi) in self.center.iter_mut().zip(&self.x[s * d..(s + 1) * d]) {
                *c += xi;
            }
        }
        let m = w.max(1) as f64;
        for c in &mut self.center {
            *c /= m;
        }
    }
}
