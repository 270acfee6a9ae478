//! Exact GP regression with one noise variance per sample (spec §1.3, paper eq. 11–12 and
//! 16–17), zero prior mean, in the whitened form that copes with very large variances:
//!
//! ```text
//! S = diag(v)^(-1/2);  B = I + S K S = L Lᵀ
//! α = S L⁻ᵀ L⁻¹ S y             → μ(x)  = k_X(x)ᵀ α
//! w = L⁻¹ S k_X(x)              → σ²(x) = max(0, k(x,x) − wᵀw)
//! ln det(I + Σ⁻¹K) = 2 Σ ln L_ii  (for β, §2.5)
//! ```
//!
//! Also [`merge_duplicates`]: samples at one location merge into one with the summed
//! precision and the precision-weighted target. This changes neither the posterior nor
//! ln det(I + Σ⁻¹K) (the merged target is sufficient for f(x); by Sylvester,
//! det(I_n + Σ⁻¹ Φ K_u Φᵀ) = det(I_u + Σ_u⁻¹ K_u) with Φ the n×u incidence matrix), and it
//! keeps the bandits' models small, since UCB replays the same grid points.
//!
//! Allocation: [`HeteroGp::fit`] grows its buffers when n exceeds the capacity; otherwise
//! fit and predict reuse them. Not real-time: a fit is O(n³).

use super::{Result, TvgpError, check_finite};
use gpn_gp_core::cholesky::{PackedCholesky, dot};
use gpn_gp_core::kernel::Kernel;

/// A fitted heteroscedastic GP (empty until the first [`HeteroGp::fit`]).
#[derive(Debug, Clone)]
pub struct HeteroGp<K: Kernel> {
    kernel: K,
    x: Vec<f64>,
    inv_sd: Vec<f64>,
    alpha: Vec<f64>,
    chol: PackedCholesky,
    work: Vec<f64>,
    jitter: f64,
}

impl<K: Kernel> HeteroGp<K> {
    /// An empty model (no data: the prior) for up to `capacity` samples before it regrows.
    pub fn new(kernel: K, capacity: usize) -> Self {
        Self {
            kernel,
            x: Vec::with_capacity(capacity),
            inv_sd: Vec::with_capacity(capacity),
            alpha: Vec::with_capacity(capacity),
            chol: PackedCholesky::with_capacity(capacity),
            work: Vec::with_capacity(capacity),
            jitter: 0.0,
        }
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// Samples in the model.
    pub fn len(&self) -> usize {
        self.alpha.len()
    }

    /// True before any data.
    pub fn is_empty(&self) -> bool {
        self.alpha.is_empty()
    }

    /// Jitter that had to be added to B's diagonal at the last fit (0 when none).
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// Fits to inputs `x` (row-major n×d), targets `y` (n, already centred) and noise
    /// variances `noise_var` (n, each > 0; +∞ is refused, use a large finite value).
    pub fn fit(&mut self, x: &[f64], y: &[f64], noise_var: &[f64]) -> Result<()> {
        let d = self.kernel.dim();
        let n = y.len();
        if x.len() != n * d {
            return Err(TvgpError::Input(
                gpn_gp_core::model::ModelError::Dimension {
                    what: "inputs",
                    expected: n * d,
                    found: x.len(),
                },
            ));
        }
        if noise_var.len() != n {
            return Err(TvgpError::Input(
                gpn_gp_core::model::ModelError::Dimension {
                    what: "noise variances",
                    expected: n,
                    found: noise_var.len(),
                },
            ));
        }
        check_finite("inputs", x)?;
        check_finite("targets", y)?;
        check_finite("noise variances", noise_var)?;
        if let Some(index) = noise_var.iter().position(|&v| v <= 0.0) {
            return Err(TvgpError::BadVariance {
                index,
                value: noise_var[index],
            });
        }
        if n > self.chol.capacity() {
            self.chol = PackedCholesky::with_capacity(n.max(2 * self.chol.capacity()));
        }
        self.x.clear();
        self.x.extend_from_slice(x);
        self.inv_sd.clear();
        self.inv_sd.extend(noise_var.iter().map(|v| 1.0 / v.sqrt()));
        let (kernel, xs, s) = (&self.kernel, &self.x, &self.inv_sd);
        let row = |i: usize| &xs[i * d..(i + 1) * d];
        // B = I + S K S has eigenvalues ≥ 1, so jitter is only a guard against rounding.
        let mut factored = false;
        for jitter in [0.0, 1e-10, 1e-8] {
            let entry = |i: usize, j: usize| {
                let b = s[i] * s[j] * kernel.value(row(i), row(j));
                if i == j { b + 1.0 } else { b }
            };
            if self.chol.factor_mut(n, jitter, entry).is_ok() {
                self.jitter = jitter;
                factored = true;
                break;
            }
        }
        if !factored {
            self.alpha.clear();
            return Err(TvgpError::NotPositiveDefinite("heteroscedastic GP"));
        }
        self.alpha.clear();
        self.alpha.extend(y.iter().zip(s).map(|(y, s)| y * s));
        self.chol.solve_mut(&mut self.alpha);
        for (a, s) in self.alpha.iter_mut().zip(s) {
            *a *= s;
        }
        Ok(())
    }

    /// ln det(I + Σ⁻¹K) = 2 Σ ln L_ii (0 with no data).
    pub fn logdet_info(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.chol.ln_det()
        }
    }

    /// Posterior mean (centred) and latent variance at `x` (length d, not checked beyond a
    /// debug assertion).
    pub fn predict(&mut self, x: &[f64]) -> (f64, f64) {
        let d = self.kernel.dim();
        debug_assert_eq!(x.len(), d);
        let n = self.len();
        let prior = self.kernel.value(x, x);
        if n == 0 {
            return (0.0, prior);
        }
        self.work.clear();
        for i in 0..n {
            self.work
                .push(self.kernel.value(&self.x[i * d..(i + 1) * d], x));
        }
        let mean = dot(&self.work, &self.alpha);
        for (w, s) in self.work.iter_mut().zip(&self.inv_sd) {
            *w *= s;
        }
        self.chol.solve_lower_mut(&mut self.work);
        let var = (prior - dot(&self.work, &self.work)).max(0.0);
        (mean, var)
    }

    /// [`HeteroGp::predict`] at every row of `points` (row-major, d columns).
    pub fn predict_many(&mut self, points: &[f64], mean: &mut [f64], var: &mut [f64]) {
        let d = self.kernel.dim();
        for (i, p) in points.chunks_exact(d).enumerate() {
            let (m, v) = self.predict(p);
            mean[i] = m;
            var[i] = v;
        }
    }
}

/// Samples merged by location (see the module doc).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merged {
    /// Distinct inputs, row-major (the first sample's location of each group).
    pub x: Vec<f64>,
    /// Precision-weighted targets.
    pub y: Vec<f64>,
    /// 1 / Σ(1/v) per group.
    pub var: Vec<f64>,
}

/// Merges samples whose inputs lie within Euclidean distance `tol` of a group's first
/// sample (the spec's dedup tolerance is 1e-9·ℓ). `x` is row-major with `dim` columns.
/// O(n log n) when the first coordinates are spread.
pub fn merge_duplicates(x: &[f64], y: &[f64], var: &[f64], dim: usize, tol: f64) -> Result<Merged> {
    let n = y.len();
    if dim == 0 || x.len() != n * dim || var.len() != n {
        return Err(TvgpError::Input(
            gpn_gp_core::model::ModelError::Dimension {
                what: "merge inputs",
                expected: n * dim.max(1),
                found: x.len(),
            },
        ));
    }
    let row = |i: usize| &x[i * dim..(i + 1) * dim];
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| x[a * dim].total_cmp(&x[b * dim]));
    // Groups in order of their first coordinate: representative index, Σ 1/v, Σ y/v.
    let mut groups: Vec<(usize, f64, f64)> = Vec::new();
    for &i in &order {
        let xi = row(i);
        let mut hit = None;
        for (g, &(rep, _, _)) in groups.iter().enumerate().rev() {
            let xr = row(rep);
            if xi[0] - xr[0] > tol {
                break;
            }
            let d2: f64 = xi.iter().zip(xr).map(|(a, b)| (a - b) * (a - b)).sum();
            if d2.sqrt() <= tol {
                hit = Some(g);
                break;
            }
        }
        let precision = 1.0 / var[i];
        match hit {
            Some(g) => {
                groups[g].1 += precision;
                groups[g].2 += y[i] * precision;
            }
            None => groups.push((i, precision, y[i] * precision)),
        }
    }
    let mut out = Merged::default();
    for (rep, p, py) in groups {
        out.x.extend_from_slice(row(rep));
        out.y.push(py / p);
        out.var.push(1.0 / p);
    }
    Ok(out)
}
