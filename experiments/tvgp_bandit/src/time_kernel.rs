//! GP regression with the spatio-temporal kernel of TV-GP-UCB (Bogunovic et al.),
//! k̃((x,i),(x',j)) = ρ^{|i−j|}·k(x,x') with ρ = sqrt(1 − ε), homoscedastic noise σ²,
//! maintained incrementally on a fixed candidate grid. ε = 0 is plain GP-UCB on all data;
//! ε = 0 with [`TimeKernelGp::reset`] every w steps is R-GP-UCB.
//!
//! The data Gram matrix only grows (samples arrive in time order), so its Cholesky factor L
//! is extended by one row per sample. For a test point g at time τ,
//! k̃_i(g) = ρ^τ·ρ^{−t_i}·k(g, x_i), so c_g = L⁻¹(D k(g, X)) with D = diag(ρ^{−t_i}) is
//! fixed once computed and gains one entry per sample (O(n) per grid point), and
//!
//! ```text
//! μ(g) = ρ^τ·c_gᵀ(L⁻¹y),   σ²(g) = k(g,g) − ρ^{2τ}·‖c_g‖²
//! ln det(I + σ⁻²K̃) = ln det(K̃ + σ²I) − n ln σ²
//! ```
//!
//! Times are counted from the last reset, so ρ^{−t} stays finite (ε ≤ 0.5 and a few
//! thousand steps are far from overflow).

use super::{Result, TvgpError, check_finite};
use gpn_gp_core::cholesky::{PackedCholesky, dot};
use gpn_gp_core::kernel::Kernel;

/// The incremental model (see the module doc).
#[derive(Debug, Clone)]
pub struct TimeKernelGp<K: Kernel> {
    kernel: K,
    rho: f64,
    noise_var: f64,
    grid: Vec<f64>,
    x: Vec<f64>,
    /// ρ^{−t_i} per sample.
    scale: Vec<f64>,
    /// t_i − origin per sample.
    times: Vec<f64>,
    origin: f64,
    chol: PackedCholesky,
    /// L⁻¹ y.
    w: Vec<f64>,
    /// c_g per grid point, `cap` entries each (the first n used).
    cache: Vec<f64>,
    /// c_gᵀ w and ‖c_g‖² per grid point.
    cw: Vec<f64>,
    cc: Vec<f64>,
    work: Vec<f64>,
}

impl<K: Kernel> TimeKernelGp<K> {
    /// An empty model for at most `capacity` samples between resets, with forgetting ε
    /// (0 ≤ ε < 1), noise variance σ² > 0 and a candidate grid (row-major).
    pub fn new(
        kernel: K,
        eps: f64,
        noise_var: f64,
        grid: Vec<f64>,
        capacity: usize,
    ) -> Result<Self> {
        if !(0.0..1.0).contains(&eps) {
            return Err(TvgpError::Config(format!("ε must be in [0, 1), got {eps}")));
        }
        if !(noise_var > 0.0 && noise_var.is_finite()) {
            return Err(TvgpError::BadVariance {
                index: 0,
                value: noise_var,
            });
        }
        check_finite("grid", &grid)?;
        let g = grid.len() / kernel.dim().max(1);
        Ok(Self {
            kernel,
            rho: (1.0 - eps).sqrt(),
            noise_var,
            grid,
            x: Vec::with_capacity(capacity),
            scale: Vec::with_capacity(capacity),
            times: Vec::with_capacity(capacity),
            origin: 0.0,
            chol: PackedCholesky::with_capacity(capacity),
            w: Vec::with_capacity(capacity),
            cache: vec![0.0; g * capacity],
            cw: vec![0.0; g],
            cc: vec![0.0; g],
            work: Vec::with_capacity(capacity),
        })
    }

    /// Samples in the model.
    pub fn len(&self) -> usize {
        self.w.len()
    }

    /// True with no samples.
    pub fn is_empty(&self) -> bool {
        self.w.is_empty()
    }

    /// Forgets every sample; times restart at `t_now`.
    pub fn reset(&mut self, t_now: f64) {
        self.x.clear();
        self.scale.clear();
        self.times.clear();
        self.w.clear();
        self.chol.clear();
        self.cw.fill(0.0);
        self.cc.fill(0.0);
        self.origin = t_now;
    }

    /// Adds the sample (x, y) observed at time `t` (non-decreasing across calls). O(n² + G·n).
    pub fn push(&mut self, x: &[f64], y: f64, t: f64) -> Result<()> {
        let d = self.kernel.dim();
        if x.len() != d {
            return Err(TvgpError::Input(
                gpn_gp_core::model::ModelError::Dimension {
                    what: "input",
                    expected: d,
                    found: x.len(),
                },
            ));
        }
        check_finite("input", x)?;
        check_finite("target", &[y, t])?;
        let n = self.len();
        if n == self.chol.capacity() {
            return Err(TvgpError::Config(format!(
                "time-kernel GP is full ({n} samples); reset it or give a larger capacity"
            )));
        }
        let tn = t - self.origin;
        // New column of K̃ + σ²I and the new row of L.
        self.work.clear();
        for i in 0..n {
            let k = self.kernel.value(&self.x[i * d..(i + 1) * d], x);
            self.work.push(self.rho.powf(tn - self.times[i]) * k);
        }
        let c = self.kernel.value(x, x) + self.noise_var;
        let pivot = self
            .chol
            .extend_mut(&mut self.work, c, 1e-12 * c)
            .map_err(|_| TvgpError::NotPositiveDefinite("time-kernel GP"))?;
        let w_new = (y - dot(&self.work, &self.w)) / pivot;
        let s_new = self.rho.powf(-tn);
        let cap = self.chol.capacity();
        let g_count = self.cw.len();
        for g in 0..g_count {
            let xg = &self.grid[g * d..(g + 1) * d];
            let cg = &mut self.cache[g * cap..g * cap + n + 1];
            let entry = (s_new * self.kernel.value(xg, x) - dot(&self.work, &cg[..n])) / pivot;
            cg[n] = entry;
            self.cw[g] += entry * w_new;
            self.cc[g] += entry * entry;
        }
        self.x.extend_from_slice(x);
        self.scale.push(s_new);
        self.times.push(tn);
        self.w.push(w_new);
        Ok(())
    }

    /// Posterior mean and latent variance on the grid for time `tau` (usually the next
    /// step). O(G).
    pub fn posterior_on_grid(&self, tau: f64, mean: &mut [f64], var: &mut [f64]) {
        let d = self.kernel.dim();
        let r = self.rho.powf(tau - self.origin);
        for g in 0..self.cw.len() {
            let xg = &self.grid[g * d..(g + 1) * d];
            mean[g] = r * self.cw[g];
            var[g] = (self.kernel.value(xg, xg) - r * r * self.cc[g]).max(0.0);
        }
    }

    /// Posterior mean and latent variance at any `x` for time `tau`. O(n²).
    pub fn predict(&mut self, x: &[f64], tau: f64) -> (f64, f64) {
        let d = self.kernel.dim();
        let n = self.len();
        let prior = self.kernel.value(x, x);
        if n == 0 {
            return (0.0, prior);
        }
        let r = self.rho.powf(tau - self.origin);
        self.work.clear();
        for i in 0..n {
            let k = self.kernel.value(&self.x[i * d..(i + 1) * d], x);
            self.work.push(self.scale[i] * k);
        }
        self.chol.solve_lower_mut(&mut self.work);
        let mean = r * dot(&self.work, &self.w);
        let var = (prior - r * r * dot(&self.work, &self.work)).max(0.0);
        (mean, var)
    }

    /// ln det(I + σ⁻²K̃).
    pub fn logdet_info(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.chol.ln_det() - self.len() as f64 * self.noise_var.ln()
        }
    }
}
