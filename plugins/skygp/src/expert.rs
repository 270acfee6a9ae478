//! One local GP expert on fixed-capacity buffers (spec §2.3): its data, its factor per
//! output group, α per output, center, dropped center and time stamp.
//!
//! Real-time: no method here allocates; [`Expert::new`] reserves everything.

use crate::config::{PIVOT_FLOOR, REFACTOR_JITTER};
use crate::groups::Group;
use gpn_gp_core::cholesky::{CholeskyError, PackedCholesky, dot};
use gpn_gp_core::kernel::Kernel;

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
    /// Fast).
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
}

impl Expert {
    /// Reserves every buffer. **Allocates.**
    pub fn new(n_bar: usize, d: usize, p: usize, n_groups: usize, keep_k: bool) -> Self {
        Self {
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
            + self.center_off.len())
            + self
                .chol
                .iter()
                .map(PackedCholesky::memory_bytes)
                .sum::<usize>()
    }

    #[inline]
    pub fn row(&self, s: usize, d: usize) -> &[f64] {
        &self.x[s * d..(s + 1) * d]
    }

    /// Resets to a one-point expert holding (x, y): c = x, L = [sqrt(σ_f² + σ_n²)] per
    /// group, α = y/(σ_f² + σ_n²) (spec §2.4, n = 0).
    pub fn reset_with(
        &mut self,
        x: &[f64],
        y: &[f64],
        groups: &[Group],
        out_group: &[usize],
        stamp: f64,
        created: u64,
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
        for (g, ch) in groups.iter().zip(&mut self.chol) {
            ch.clear();
            // A 1×1 factor cannot fail: σ_f² > 0.
            let _ =
                ch.extend_with_solved_mut(&[], g.kernel.diag() + g.noise_var, f64::MIN_POSITIVE);
        }
        for (km, g) in self.kmat.iter_mut().zip(groups) {
            km[0] = g.kernel.diag() + g.noise_var;
        }
        for (o, &yo) in y.iter().enumerate() {
            let g = &groups[out_group[o]];
            self.y[o * n_bar] = yo;
            self.alpha[o * n_bar] = yo / (g.kernel.diag() + g.noise_var);
        }
    }

    /// k = κ_g(X, x) into `k[..n]`, v = L_g⁻¹k into `v[..n]`; returns vᵀv.
    pub fn kv(&self, g: usize, group: &Group, x: &[f64], k: &mut [f64], v: &mut [f64]) -> f64 {
        let (n, d) = (self.n, x.len());
        for (s, ks) in k[..n].iter_mut().enumerate() {
            *ks = group.kernel.value(self.row(s, d), x);
        }
        v[..n].copy_from_slice(&k[..n]);
        self.chol[g].solve_lower_mut(&mut v[..n]);
        dot(&v[..n], &v[..n])
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
    /// prediction); otherwise they are computed here in `scratch` (length ≥ N̄).
    pub fn append(
        &mut self,
        x: &[f64],
        y: &[f64],
        groups: &[Group],
        out_group: &[usize],
        cached: Option<(&[f64], &[f64])>,
        scratch: &mut [f64],
    ) -> Result<(), CholeskyError> {
        let (n, d, n_bar) = (self.n, x.len(), self.n_bar);
        for (g, group) in groups.iter().enumerate() {
            let c = group.kernel.diag() + group.noise_var;
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

    /// Recomputes row and column s of every cached K after input s changed (Dense).
    pub fn refresh_k_row(&mut self, s: usize, groups: &[Group]) {
        let (n, d) = (self.n, self.center.len());
        let xs = &self.x[s * d..(s + 1) * d];
        for (km, group) in self.kmat.iter_mut().zip(groups) {
            for j in 0..n {
                let k = group.kernel.value(xs, &self.x[j * d..(j + 1) * d]);
                let (i, jj) = if j <= s { (s, j) } else { (j, s) };
                km[i * (i + 1) / 2 + jj] = if j == s { k + group.noise_var } else { k };
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
            scratch.factor_mut(n, REFACTOR_JITTER, |i, j| km[i * (i + 1) / 2 + j])?;
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
}
