//! Whitened sufficient statistics of one sparse GP, its optimal q(u) and the collapsed
//! (Titsias 2009) bound, for p outputs that share inputs, kernel and noise (spec §7.2–7.3,
//! §7.6).
//!
//! With L_K = chol(K_uu) and ṽ(x) = L_K⁻¹ k_u(x), per-sample weights w (1, or λ^age with
//! forgetting) and standardised targets y ∈ R^p:
//!
//! ```text
//! Ã = Σ w ṽṽᵀ (M×M)   r_o = Σ w ṽ y_o (M)   c_o = Σ w y_o²   t = Σ w (k(x,x) − ‖ṽ‖²)   n = Σ w
//! B = I + Ã/s²,  L_B = chol(B),  γ_o = B⁻¹ r_o / s²
//! L = Σ_o [ −(n/2) ln(2π s²) − Σ_j ln (L_B)_jj − c_o/(2s²) + r_oᵀγ_o/(2s²) − t/(2s²) ]
//! ```
//!
//! This is the spec's formula in the whitened basis (Λ = K + A/s² = L_K B L_Kᵀ, so
//! ‖L_B⁻¹ L_K⁻¹ b‖² = s² rᵀγ); with Z = X it is the exact log marginal likelihood. The
//! posterior of the latent function at x* (ṽ* = L_K⁻¹ k_u(x*)) is
//! μ_o = ṽ*ᵀγ_o and σ² = k** − ‖ṽ*‖² + ‖L_B⁻¹ ṽ*‖².
//!
//! Only the lower triangle of Ã is kept. Nothing here allocates except [`Stats::new`] and
//! [`Factor::new`].

use crate::linalg::{NotPositiveDefinite, cholesky_in_place, solve_spd};

/// Σ-statistics of the samples seen (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// Inducing inputs M.
    pub m: usize,
    /// Outputs p.
    pub p: usize,
    /// Ã, lower triangle of an M×M row-major matrix.
    pub a: Vec<f64>,
    /// r, M×p row-major.
    pub r: Vec<f64>,
    /// c, p.
    pub c: Vec<f64>,
    /// t.
    pub t: f64,
    /// n = Σ w.
    pub n: f64,
}

impl Stats {
    /// Empty statistics. **Allocates.**
    pub fn new(m: usize, p: usize) -> Stats {
        Stats {
            m,
            p,
            a: vec![0.0; m * m],
            r: vec![0.0; m * p],
            c: vec![0.0; p],
            t: 0.0,
            n: 0.0,
        }
    }

    /// Reset to no samples.
    pub fn clear(&mut self) {
        self.a.fill(0.0);
        self.r.fill(0.0);
        self.c.fill(0.0);
        self.t = 0.0;
        self.n = 0.0;
    }

    /// Multiply every statistic by λ (exponential forgetting), O(M²).
    pub fn discount(&mut self, lambda: f64) {
        if lambda == 1.0 {
            return;
        }
        let m = self.m;
        for i in 0..m {
            for v in &mut self.a[i * m..i * m + i + 1] {
                *v *= lambda;
            }
        }
        self.r.iter_mut().for_each(|v| *v *= lambda);
        self.c.iter_mut().for_each(|v| *v *= lambda);
        self.t *= lambda;
        self.n *= lambda;
    }

    /// Add one sample with whitened kernel vector `v` (M), prior variance `kxx`,
    /// standardised targets `y` (p) and weight `w`. O(M² + Mp).
    pub fn add(&mut self, v: &[f64], kxx: f64, y: &[f64], w: f64) {
        let (m, p) = (self.m, self.p);
        for i in 0..m {
            let wi = w * v[i];
            for (a, &vj) in self.a[i * m..i * m + i + 1].iter_mut().zip(v) {
                *a += wi * vj;
            }
            for (r, &yo) in self.r[i * p..(i + 1) * p].iter_mut().zip(y) {
                *r += wi * yo;
            }
        }
        for (c, &yo) in self.c.iter_mut().zip(y) {
            *c += w * yo * yo;
        }
        let vv: f64 = v.iter().map(|x| x * x).sum();
        self.t += w * (kxx - vv).max(0.0);
        self.n += w;
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        8 * (self.a.len() + self.r.len() + self.c.len() + 2)
    }
}

/// The optimal q(u) of some statistics at noise s²: L_B and γ (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Factor {
    /// L_B, lower triangle of an M×M row-major matrix.
    pub lb: Vec<f64>,
    /// γ, M×p row-major.
    pub gamma: Vec<f64>,
}

impl Factor {
    /// Buffers for M inducing inputs and p outputs. **Allocates.**
    pub fn new(m: usize, p: usize) -> Factor {
        Factor {
            lb: vec![0.0; m * m],
            gamma: vec![0.0; m * p],
        }
    }

    /// Recompute L_B = chol(I + Ã/s²) and γ from `stats` in O(M³ + M²p); `col` is
    /// scratch of length M.
    pub fn refactor(
        &mut self,
        stats: &Stats,
        s2: f64,
        col: &mut [f64],
    ) -> Result<(), NotPositiveDefinite> {
        let (m, p) = (stats.m, stats.p);
        for i in 0..m {
            for j in 0..=i {
                let mut v = stats.a[i * m + j] / s2;
                if i == j {
                    v += 1.0;
                }
                self.lb[i * m + j] = v;
            }
        }
        cholesky_in_place(&mut self.lb, m)?;
        for o in 0..p {
            for i in 0..m {
                col[i] = stats.r[i * p + o] / s2;
            }
            solve_spd(&self.lb, m, col);
            for i in 0..m {
                self.gamma[i * p + o] = col[i];
            }
        }
        Ok(())
    }

    /// The collapsed bound (summed over outputs) of `stats` with this factor at noise s².
    /// O(M p).
    pub fn bound(&self, stats: &Stats, s2: f64) -> f64 {
        let (m, p) = (stats.m, stats.p);
        let half_ln_det_b: f64 = (0..m).map(|i| self.lb[i * m + i].ln()).sum();
        let mut total = 0.0;
        for o in 0..p {
            let rg: f64 = (0..m)
                .map(|i| stats.r[i * p + o] * self.gamma[i * p + o])
                .sum();
            total += -0.5 * stats.n * (2.0 * std::f64::consts::PI * s2).ln()
                - half_ln_det_b
                - stats.c[o] / (2.0 * s2)
                + rg / (2.0 * s2)
                - stats.t / (2.0 * s2);
        }
        total
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        8 * (self.lb.len() + self.gamma.len())
    }
}
