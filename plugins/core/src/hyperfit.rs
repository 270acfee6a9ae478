//! Kernel hyperparameter fitting by maximising the exact-GP log marginal likelihood.
//!
//! Offline, not real-time: dense n×n matrices and nalgebra's Cholesky (O(n³) per evaluation,
//! O(n²) memory), so fit on a subset: [`FitOptions::max_samples`] (default: the first 1000
//! samples, as SkyGP pre-trains). The GP is zero-mean: centre the targets first if the model
//! will see centred data.
//!
//! For one output with targets y (n), K_y = K(θ) + σ_n² I = L Lᵀ and α = K_y⁻¹ y:
//!
//! * NLML = ½ yᵀα + Σ_i ln L_ii + (n/2) ln 2π;
//! * ∂NLML/∂θ_k = −½ tr((ααᵀ − K_y⁻¹) ∂K_y/∂θ_k), with ∂K/∂θ from [`Kernel::gradient`] and
//!   ∂K_y/∂ln σ_n = 2σ_n² I.
//!
//! All parameters live in log space: the kernel's `[ln σ_f, ln ℓ_1..ℓ_d]` and ln σ_n. The
//! optimiser is argmin's L-BFGS (memory 7) with the More–Thuente line search.
//!
//! Modes ([`FitMode`]): `PerOutput` fits each output's (σ_f, ℓ, σ_n) independently;
//! `SharedLengthscales` minimises the sum of the p NLMLs over one shared ℓ and a (σ_f, σ_n)
//! per output.
//!
//! The objective handed to L-BFGS is the summed NLML divided by n·p (so the first step, −∇,
//! has a sane length) plus the bound penalty below; reported NLMLs are unscaled.
//!
//! Initial values: ℓ_j = √d · s_j with s_j the std of input j, σ_f = std of the output,
//! σ_n = 0.1·σ_f (a zero std is replaced by 1). Why √d: two samples differ by
//! E[Σ_j (Δx_j/s_j)²] = 2d, so at ℓ_j = s_j the kernel between any two of them is about
//! e^{−d} σ_f² — in 32 dimensions every sample looks unrelated to every other, the
//! likelihood sees pure noise and its gradient in ℓ vanishes; L-BFGS then stops in the
//! all-noise optimum (PUMA-32nm: SMSE 0.85 with ℓ_j = s_j against 0.058 from √d·s_j and the
//! reference's 0.059; `docs/results/hyperfit.md`). At √d·s_j the typical kernel value is
//! e^{−1} σ_f² whatever d is.
//!
//! Safeguards: soft box bounds in log space relative to those stds
//! (ℓ_j ∈ [1e-4, 1e4]·s_j, σ_f ∈ [1e-3, 1e3]·s_y, σ_n ∈ [1e-3, 10]·s_y), enforced by a
//! quadratic penalty Σ(excess²) (per-sample units) during the search and by clamping the
//! result; the likelihood itself is evaluated at the parameters clamped to the bounds widened
//! by e² on each side, so wild line-search trials stay finite; escalating diagonal jitter
//! (1e-10, 1e-8, 1e-6 times σ_f²) when a Cholesky fails. A run that aborts (e.g. a failed
//! line search) keeps the best point it evaluated, and the result is never worse than the
//! initial values. Restarts ([`FitOptions::restarts`]) scale the initial lengthscales by
//! 1/√d (the input stds themselves), 1/3, 3, 1/10, 10, 1/30, 30, then 1/(r+1); the best
//! NLML wins. Everything is deterministic.
//!
//! Cost: one evaluation builds K, factorises it and forms K_y⁻¹ (≈ n³ flops); n = 1000,
//! d = 8 takes about 0.5 s optimised, and a fit 10–30 evaluations per output.
//!
//! ```
//! use gpn_gp_core::hyperfit::{fit, FitOptions};
//! use gpn_gp_core::kernel::ArdKernel;
//! let x: Vec<f64> = (0..40).map(|i| i as f64 * 0.1).collect();
//! let y: Vec<f64> = x.iter().map(|v| v.sin()).collect();
//! let kernel = ArdKernel::se(1.0, &[1.0]).unwrap();
//! let r = fit(&kernel, &x, &y, 1, 1, &FitOptions::default()).unwrap();
//! assert!(r.nlml <= r.nlml_init);
//! assert_eq!(r.outputs[0].lengthscales.len(), 1);
//! ```

use crate::kernel::Kernel;
use argmin::core::{CostFunction, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Errors of the hyperparameter fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HyperfitError {
    /// Inconsistent sizes.
    #[error("{what}: expected length {expected}, found {found}")]
    Dimension {
        /// Which argument.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Length found.
        found: usize,
    },
    /// Fewer than two samples.
    #[error("need at least 2 samples to fit hyperparameters, found {0}")]
    TooFewSamples(usize),
    /// A non-finite input or target.
    #[error("non-finite value in {what} at sample {sample}")]
    NonFinite {
        /// `inputs` or `targets`.
        what: &'static str,
        /// 0-based sample.
        sample: usize,
    },
    /// The kernel matrix could not be factorised even with jitter.
    #[error("kernel matrix not positive definite even with jitter")]
    NotPositiveDefinite,
    /// Every optimisation run failed.
    #[error("optimiser failed: {0}")]
    Optimizer(String),
}

/// Result alias of this module.
pub type Result<T> = std::result::Result<T, HyperfitError>;

/// How outputs share hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FitMode {
    /// Independent (σ_f, ℓ, σ_n) per output.
    PerOutput,
    /// One ℓ shared by all outputs, (σ_f, σ_n) per output; the sum of the NLMLs is minimised.
    #[default]
    SharedLengthscales,
}

/// Settings of [`fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct FitOptions {
    /// Sharing mode.
    pub mode: FitMode,
    /// Use only the first `max_samples` samples (default 1000).
    pub max_samples: usize,
    /// L-BFGS iterations per run (default 100).
    pub max_iters: u64,
    /// Extra runs from rescaled initial lengthscales (default 0).
    pub restarts: usize,
    /// Threads that fit outputs at once in [`FitMode::PerOutput`] (default 1: the node fits
    /// in the background beside its control thread; a tool may use every core). The result
    /// does not depend on it.
    pub threads: usize,
    /// Hyperparameters to start one more run from (one entry per output, e.g. those in
    /// use when refitting on more data); the best NLML on this data wins, so a refit never
    /// ends worse on its own data than where it was. Ignored unless it has one entry per
    /// output with one lengthscale per input (in shared mode, output 0's lengthscales).
    pub warm_start: Option<Vec<OutputHyper>>,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            mode: FitMode::SharedLengthscales,
            max_samples: 1000,
            max_iters: 100,
            restarts: 0,
            threads: 1,
            warm_start: None,
        }
    }
}

/// Fitted hyperparameters of one output (standard deviations, as `hyperparams.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputHyper {
    /// Signal standard deviation σ_f.
    pub sigma_f: f64,
    /// Noise standard deviation σ_n.
    pub sigma_n: f64,
    /// One lengthscale per input.
    pub lengthscales: Vec<f64>,
}

impl OutputHyper {
    /// As a model config's per-output `"hyper"` entry: `{sigma_f, sigma_n, lengthscales}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "sigma_f": self.sigma_f,
            "sigma_n": self.sigma_n,
            "lengthscales": self.lengthscales,
        })
    }

    /// Reads a per-output `"hyper"` entry; `None` if a key is missing or not a number.
    pub fn from_json(value: &serde_json::Value) -> Option<Self> {
        Some(Self {
            sigma_f: value.get("sigma_f")?.as_f64()?,
            sigma_n: value.get("sigma_n")?.as_f64()?,
            lengthscales: value
                .get("lengthscales")?
                .as_array()?
                .iter()
                .map(serde_json::Value::as_f64)
                .collect::<Option<Vec<_>>>()?,
        })
    }
}

/// What [`fit`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct FitResult {
    /// One entry per output.
    pub outputs: Vec<OutputHyper>,
    /// Final NLML, summed over outputs (no penalty).
    pub nlml: f64,
    /// Final NLML of each output.
    pub nlml_per_output: Vec<f64>,
    /// NLML at the initial values, summed over outputs.
    pub nlml_init: f64,
    /// Samples used.
    pub n_used: usize,
}

/// Up to `count` of the rows below `n` not in `fitted` (ascending), evenly spaced: the
/// samples a fit on `fitted` did not see, for [`held_out_nlpd`].
pub fn held_out_rows(n: usize, fitted: &[usize], count: usize) -> Vec<usize> {
    let mut f = fitted.iter().peekable();
    let rest: Vec<usize> = (0..n).filter(|r| f.next_if_eq(&r).is_none()).collect();
    if rest.len() <= count {
        return rest;
    }
    (0..count)
        .map(|i| rest[i * (rest.len() - 1) / (count - 1).max(1)])
        .collect()
}

/// Mean negative log predictive density of held-out samples (`x_test` row-major, `y_test`)
/// under the exact GP with this kernel and σ_n conditioned on (`x`, `y`):
/// ½ ln(2π s²) + (y − μ)²/(2 s²) with s² = σ² + σ_n², averaged (the mean of
/// [`held_out_nlpds`]). Lower is better. A check
/// of hyperparameters on data they were not fitted to: marginal likelihoods of different
/// subsets cannot be compared, and a likelihood with several optima can prefer one that
/// predicts worse. Allocates the n×n matrix.
pub fn held_out_nlpd<K: Kernel>(
    kernel: &K,
    sigma_n: f64,
    x: &[f64],
    y: &[f64],
    x_test: &[f64],
    y_test: &[f64],
) -> Result<f64> {
    let each = held_out_nlpds(kernel, sigma_n, x, y, x_test, y_test)?;
    Ok(each.iter().sum::<f64>() / each.len() as f64)
}

/// The negative log predictive density of each held-out sample, as [`held_out_nlpd`]
/// averages them (for a paired comparison of two hyperparameter sets on the same samples).
pub fn held_out_nlpds<K: Kernel>(
    kernel: &K,
    sigma_n: f64,
    x: &[f64],
    y: &[f64],
    x_test: &[f64],
    y_test: &[f64],
) -> Result<Vec<f64>> {
    let d = kernel.dim();
    let (n, m) = (y.len(), y_test.len());
    if x.len() != n * d {
        return Err(HyperfitError::Dimension {
            what: "inputs",
            expected: n * d,
            found: x.len(),
        });
    }
    if x_test.len() != m * d || m == 0 {
        return Err(HyperfitError::Dimension {
            what: "held-out inputs",
            expected: m.max(1) * d,
            found: x_test.len(),
        });
    }
    let noise_var = sigma_n * sigma_n;
    let chol = noisy_gram_factor(kernel, x, noise_var)?;
    let alpha = chol.solve(&DVector::from_column_slice(y));
    let mut each = Vec::with_capacity(m);
    for (&yt, xt) in y_test.iter().zip(x_test.chunks_exact(d)) {
        let ks = DVector::<f64>::from_fn(n, |i, _| kernel.value(&x[i * d..(i + 1) * d], xt));
        let mean = ks.dot(&alpha);
        let v = chol.l_dirty().solve_lower_triangular(&ks).unwrap_or(ks);
        let s2 = (kernel.value(xt, xt) - v.dot(&v)).max(0.0) + noise_var;
        let r = yt - mean;
        each.push(0.5 * (2.0 * std::f64::consts::PI * s2).ln() + r * r / (2.0 * s2));
    }
    Ok(each)
}

/// NLML of one output and, if `grad` is given (length `kernel.n_params() + 1`), its gradient
/// w.r.t. `[kernel log params…, ln σ_n]`. `x` is row-major n×d, `y` has n entries.
/// Allocates the n×n matrices.
pub fn nlml<K: Kernel>(
    kernel: &K,
    sigma_n: f64,
    x: &[f64],
    y: &[f64],
    grad: Option<&mut [f64]>,
) -> Result<f64> {
    let d = kernel.dim();
    let n = y.len();
    if x.len() != n * d {
        return Err(HyperfitError::Dimension {
            what: "inputs",
            expected: n * d,
            found: x.len(),
        });
    }
    if let Some(g) = &grad
        && g.len() != kernel.n_params() + 1
    {
        return Err(HyperfitError::Dimension {
            what: "gradient",
            expected: kernel.n_params() + 1,
            found: g.len(),
        });
    }
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let noise_var = sigma_n * sigma_n;
    let chol = noisy_gram_factor(kernel, x, noise_var)?;
    let yv = DVector::from_column_slice(y);
    let alpha = chol.solve(&yv);
    let l = chol.l_dirty();
    let log_det_half: f64 = (0..n).map(|i| l[(i, i)].ln()).sum();
    let value =
        0.5 * yv.dot(&alpha) + log_det_half + 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
    if let Some(g) = grad {
        // W = ααᵀ − K_y⁻¹ (symmetric); ∂NLML/∂θ = −½ Σ_ab W_ab ∂K_ab/∂θ.
        let kinv = chol.inverse();
        g.fill(0.0);
        let np = kernel.n_params();
        let mut dk = vec![0.0; np];
        let mut trace_w = 0.0;
        for j in 0..n {
            for i in j..n {
                let w = alpha[i] * alpha[j] - kinv[(i, j)];
                let factor = if i == j {
                    trace_w += w;
                    -0.5 * w
                } else {
                    -w
                };
                kernel.gradient(row(i), row(j), &mut dk);
                for (gk, dkk) in g[..np].iter_mut().zip(&dk) {
                    *gk += factor * dkk;
                }
            }
        }
        g[np] = -noise_var * trace_w;
    }
    Ok(value)
}

/// The Cholesky factor of K(x, x) + σ_n² I (`x` row-major, the kernel's dimension), with
/// escalating jitter if needed. Allocates the n×n matrix.
fn noisy_gram_factor<K: Kernel>(
    kernel: &K,
    x: &[f64],
    noise_var: f64,
) -> Result<nalgebra::Cholesky<f64, nalgebra::Dyn>> {
    let d = kernel.dim();
    let n = x.len() / d;
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let mut k = DMatrix::<f64>::zeros(n, n);
    for j in 0..n {
        for i in j..n {
            let v = kernel.value(row(i), row(j));
            k[(i, j)] = v;
            k[(j, i)] = v;
        }
    }
    for i in 0..n {
        k[(i, i)] += noise_var;
    }
    factor_with_jitter(k, kernel.diag())
}

fn factor_with_jitter(
    k: DMatrix<f64>,
    scale: f64,
) -> Result<nalgebra::Cholesky<f64, nalgebra::Dyn>> {
    if let Some(c) = k.clone().cholesky() {
        return Ok(c);
    }
    let n = k.nrows();
    for rel in [1e-10, 1e-8, 1e-6] {
        let mut kj = k.clone();
        for i in 0..n {
            kj[(i, i)] += rel * scale.max(f64::MIN_POSITIVE);
        }
        if let Some(c) = kj.cholesky() {
            return Ok(c);
        }
    }
    Err(HyperfitError::NotPositiveDefinite)
}

/// Column `t` of row-major data with `p` columns.
fn column(data: &[f64], p: usize, t: usize) -> Vec<f64> {
    data.iter().skip(t).step_by(p).copied().collect()
}

fn std_or_one(v: impl Iterator<Item = f64> + Clone) -> f64 {
    let n = v.clone().count() as f64;
    let mean = v.clone().sum::<f64>() / n;
    let var = v.map(|a| (a - mean) * (a - mean)).sum::<f64>() / n;
    let s = var.sqrt();
    if s.is_finite() && s > 0.0 { s } else { 1.0 }
}

/// (params, penalised cost, gradient) of the last evaluation.
type CachedEval = (Vec<f64>, f64, Vec<f64>);

/// How far beyond the soft bounds (log units) the likelihood is still evaluated.
const HARD_MARGIN: f64 = 2.0;

/// The optimisation problem: parameter layout and the penalised summed NLML.
struct Problem<'a, K: Kernel + Clone> {
    kernel: K,
    x: &'a [f64],
    /// Targets per output being fitted.
    ys: Vec<Vec<f64>>,
    /// ln ℓ index: params[ls_offset(o) + j]; ln σ_f: sf_index(o); ln σ_n: sn_index(o).
    shared: bool,
    d: usize,
    lo: Vec<f64>,
    hi: Vec<f64>,
    penalty_weight: f64,
    cache: RefCell<Option<CachedEval>>,
    /// Best (penalised cost, params) evaluated so far: kept if a run aborts.
    best_seen: RefCell<Option<(f64, Vec<f64>)>>,
}

impl<K: Kernel + Clone> Problem<'_, K> {
    fn ls_offset(&self, o: usize) -> usize {
        if self.shared { 0 } else { o * (self.d + 2) + 1 }
    }
    fn sf_index(&self, o: usize) -> usize {
        if self.shared {
            self.d + 2 * o
        } else {
            o * (self.d + 2)
        }
    }
    fn sn_index(&self, o: usize) -> usize {
        if self.shared {
            self.d + 2 * o + 1
        } else {
            o * (self.d + 2) + self.d + 1
        }
    }
    fn n_params(&self) -> usize {
        self.ys.len() * 2
            + if self.shared {
                self.d
            } else {
                self.ys.len() * self.d
            }
    }

    /// Kernel log params and σ_n of output `o` from the full vector.
    fn output_params(&self, params: &[f64], o: usize, kp: &mut [f64]) -> f64 {
        kp[0] = params[self.sf_index(o)];
        let off = self.ls_offset(o);
        kp[1..].copy_from_slice(&params[off..off + self.d]);
        params[self.sn_index(o)].exp()
    }

    /// Unpenalised NLML per output, with the gradient of the sum if asked.
    fn eval(&self, params: &[f64], mut grad: Option<&mut [f64]>) -> Result<Vec<f64>> {
        let mut kernel = self.kernel.clone();
        let mut kp = vec![0.0; self.d + 1];
        let mut g = vec![0.0; self.d + 2];
        if let Some(gr) = grad.as_deref_mut() {
            gr.fill(0.0);
        }
        let mut values = Vec::with_capacity(self.ys.len());
        for (o, y) in self.ys.iter().enumerate() {
            let sn = self.output_params(params, o, &mut kp);
            kernel.set_log_params(&kp);
            let v = nlml(&kernel, sn, self.x, y, grad.as_ref().map(|_| &mut g[..]))?;
            values.push(v);
            if let Some(gr) = grad.as_deref_mut() {
                gr[self.sf_index(o)] += g[0];
                let off = self.ls_offset(o);
                for j in 0..self.d {
                    gr[off + j] += g[1 + j];
                }
                gr[self.sn_index(o)] += g[self.d + 1];
            }
        }
        Ok(values)
    }

    fn cost_and_grad(
        &self,
        params: &[f64],
    ) -> std::result::Result<(f64, Vec<f64>), argmin::core::Error> {
        if let Some((p, c, g)) = self.cache.borrow().as_ref()
            && p.as_slice() == params
        {
            return Ok((*c, g.clone()));
        }
        if params.iter().any(|v| !v.is_finite()) {
            return Err(argmin::core::Error::msg("non-finite parameter"));
        }
        // The likelihood is evaluated at the parameters clamped to the hard box
        // [lo − MARGIN, hi + MARGIN]; beyond the soft box [lo, hi] a quadratic penalty pulls
        // back. So huge trial steps of the line search stay finite and factorisable.
        let clamped: Vec<f64> = params
            .iter()
            .enumerate()
            .map(|(i, v)| v.clamp(self.lo[i] - HARD_MARGIN, self.hi[i] + HARD_MARGIN))
            .collect();
        let mut grad = vec![0.0; params.len()];
        let values = self
            .eval(&clamped, Some(&mut grad))
            .map_err(argmin::core::Error::msg)?;
        let mut cost: f64 = values.iter().sum();
        for (i, &v) in params.iter().enumerate() {
            if clamped[i] != v {
                grad[i] = 0.0;
            }
            let excess = if v > self.hi[i] {
                v - self.hi[i]
            } else if v < self.lo[i] {
                v - self.lo[i]
            } else {
                0.0
            };
            cost += self.penalty_weight * excess * excess;
            grad[i] += 2.0 * self.penalty_weight * excess;
        }
        // Optimise the per-sample NLML so the first L-BFGS step (−∇) has a sane length.
        let scale = 1.0 / self.penalty_weight;
        cost *= scale;
        for g in &mut grad {
            *g *= scale;
        }
        *self.cache.borrow_mut() = Some((params.to_vec(), cost, grad.clone()));
        let mut best = self.best_seen.borrow_mut();
        if cost.is_finite() && best.as_ref().is_none_or(|(c, _)| cost < *c) {
            *best = Some((cost, params.to_vec()));
        }
        Ok((cost, grad))
    }
}

impl<K: Kernel + Clone> CostFunction for Problem<'_, K> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Self::Param) -> std::result::Result<f64, argmin::core::Error> {
        Ok(self.cost_and_grad(p)?.0)
    }
}

impl<K: Kernel + Clone> Gradient for Problem<'_, K> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Self::Param) -> std::result::Result<Vec<f64>, argmin::core::Error> {
        Ok(self.cost_and_grad(p)?.1)
    }
}

/// Fits hyperparameters to inputs `x` (row-major n×d) and targets `y` (row-major n×p) on the
/// first `opts.max_samples` samples, starting from `kernel`'s kind (its current parameters
/// are ignored; see the module doc for initial values, bounds and restarts).
pub fn fit<K: Kernel + Clone + Sync>(
    kernel: &K,
    x: &[f64],
    y: &[f64],
    d: usize,
    p: usize,
    opts: &FitOptions,
) -> Result<FitResult> {
    if d != kernel.dim() {
        return Err(HyperfitError::Dimension {
            what: "input dimension",
            expected: kernel.dim(),
            found: d,
        });
    }
    if p == 0 || d == 0 {
        return Err(HyperfitError::Dimension {
            what: "outputs and inputs",
            expected: 1,
            found: 0,
        });
    }
    if !x.len().is_multiple_of(d) || !y.len().is_multiple_of(p) || x.len() / d != y.len() / p {
        return Err(HyperfitError::Dimension {
            what: "targets",
            expected: x.len() / d * p,
            found: y.len(),
        });
    }
    let n = (x.len() / d).min(opts.max_samples);
    if n < 2 {
        return Err(HyperfitError::TooFewSamples(n));
    }
    let x = &x[..n * d];
    let y = &y[..n * p];
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        return Err(HyperfitError::NonFinite {
            what: "inputs",
            sample: i / d,
        });
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(HyperfitError::NonFinite {
            what: "targets",
            sample: i / p,
        });
    }
    let x_std: Vec<f64> = (0..d)
        .map(|j| std_or_one(x.iter().skip(j).step_by(d).copied()))
        .collect();
    let ys: Vec<Vec<f64>> = (0..p).map(|t| column(y, p, t)).collect();
    let y_std: Vec<f64> = ys.iter().map(|c| std_or_one(c.iter().copied())).collect();

    match opts.mode {
        FitMode::SharedLengthscales => {
            let warm = opts.warm_start.as_deref();
            run_fits(kernel, x, ys, &x_std, &y_std, true, n, opts, warm)
        }
        FitMode::PerOutput => {
            // Independent problems: fit each output on its own (smaller L-BFGS problems),
            // `opts.threads` at a time; nothing of the O(n³) work is shared between them.
            let fit_one = |t: usize| {
                let warm = opts.warm_start.as_deref().and_then(|w| w.get(t..=t));
                run_fits(
                    kernel,
                    x,
                    vec![ys[t].clone()],
                    &x_std,
                    &y_std[t..=t],
                    false,
                    n,
                    opts,
                    warm,
                )
            };
            let results: Vec<Result<FitResult>> = if opts.threads > 1 && p > 1 {
                // Each thread takes the next output until none is left; results are put
                // back in output order.
                let next = AtomicUsize::new(0);
                let mut done: Vec<(usize, Result<FitResult>)> = std::thread::scope(|scope| {
                    let workers: Vec<_> = (0..opts.threads.min(p))
                        .map(|_| {
                            scope.spawn(|| {
                                let mut mine = Vec::new();
                                loop {
                                    let t = next.fetch_add(1, Ordering::Relaxed);
                                    if t >= p {
                                        return mine;
                                    }
                                    mine.push((t, fit_one(t)));
                                }
                            })
                        })
                        .collect();
                    workers
                        .into_iter()
                        .flat_map(|w| {
                            w.join().unwrap_or_else(|_| {
                                vec![(
                                    p,
                                    Err(HyperfitError::Optimizer(
                                        "a fitting thread panicked".into(),
                                    )),
                                )]
                            })
                        })
                        .collect()
                });
                done.sort_by_key(|(t, _)| *t);
                done.into_iter().map(|(_, r)| r).collect()
            } else {
                (0..p).map(fit_one).collect()
            };
            let mut outputs = Vec::with_capacity(p);
            let (mut nlml_sum, mut init_sum, mut per) = (0.0, 0.0, Vec::with_capacity(p));
            for r in results {
                let r = r?;
                nlml_sum += r.nlml;
                init_sum += r.nlml_init;
                per.push(r.nlml);
                outputs.extend(r.outputs);
            }
            Ok(FitResult {
                outputs,
                nlml: nlml_sum,
                nlml_per_output: per,
                nlml_init: init_sum,
                n_used: n,
            })
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_fits<K: Kernel + Clone>(
    kernel: &K,
    x: &[f64],
    ys: Vec<Vec<f64>>,
    x_std: &[f64],
    y_std: &[f64],
    shared: bool,
    n: usize,
    opts: &FitOptions,
    warm: Option<&[OutputHyper]>,
) -> Result<FitResult> {
    let d = x_std.len();
    let p = ys.len();
    let mut problem = Problem {
        kernel: kernel.clone(),
        x,
        ys,
        shared,
        d,
        lo: Vec::new(),
        hi: Vec::new(),
        penalty_weight: (n * p) as f64,
        cache: RefCell::new(None),
        best_seen: RefCell::new(None),
    };
    let n_ls_blocks = if shared { 1 } else { p };
    let (lo, hi, init) = start_and_bounds(&problem, x_std, y_std, n_ls_blocks);
    problem.lo = lo;
    problem.hi = hi;

    let init_values = problem.eval(&init, None)?;
    let nlml_init: f64 = init_values.iter().sum();
    let warm = warm.and_then(|w| warm_params(&problem, w, n_ls_blocks));
    let best_params = best_of_restarts(&problem, &init, n_ls_blocks, opts, warm)?;
    let mut params: Vec<f64> = best_params
        .iter()
        .enumerate()
        .map(|(i, v)| v.clamp(problem.lo[i], problem.hi[i]))
        .collect();
    let mut per = problem.eval(&params, None)?;
    if per.iter().sum::<f64>() > nlml_init {
        params = init;
        per = init_values;
    }
    Ok(FitResult {
        outputs: output_hypers(&problem, &params, p),
        nlml: per.iter().sum(),
        nlml_per_output: per,
        nlml_init,
        n_used: n,
    })
}

/// The factor of the lengthscales' start over the inputs' stds: √d (see the module doc).
fn start_scale(d: usize) -> f64 {
    (d as f64).sqrt()
}

/// The soft bounds (lo, hi) and the start point, all ln units, from the inputs' and
/// targets' standard deviations (the start's lengthscales scaled by √d, see the module doc).
fn start_and_bounds<K: Kernel + Clone>(
    problem: &Problem<'_, K>,
    x_std: &[f64],
    y_std: &[f64],
    n_ls_blocks: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let d = problem.d;
    let np = problem.n_params();
    let (mut lo, mut hi, mut init) = (vec![0.0; np], vec![0.0; np], vec![0.0; np]);
    for (o, sy) in y_std.iter().enumerate() {
        let (sf, sn) = (problem.sf_index(o), problem.sn_index(o));
        let s = sy.ln();
        init[sf] = s;
        lo[sf] = s + 1e-3f64.ln();
        hi[sf] = s + 1e3f64.ln();
        init[sn] = s + 0.1f64.ln();
        lo[sn] = s + 1e-3f64.ln();
        hi[sn] = s + 10f64.ln();
    }
    let ln_start_scale = start_scale(d).ln();
    for o in 0..n_ls_blocks {
        let off = problem.ls_offset(o);
        for j in 0..d {
            let s = x_std[j].ln();
            init[off + j] = s + ln_start_scale;
            lo[off + j] = s + 1e-4f64.ln();
            hi[off + j] = s + 1e4f64.ln();
        }
    }
    (lo, hi, init)
}

/// The best parameters of `opts.restarts + 1` L-BFGS runs from `init` with the lengthscales
/// scaled; `init` itself when no run found a point, an error when they all failed.
fn best_of_restarts<K: Kernel + Clone>(
    problem: &Problem<'_, K>,
    init: &[f64],
    n_ls_blocks: usize,
    opts: &FitOptions,
    warm: Option<Vec<f64>>,
) -> Result<Vec<f64>> {
    let d = problem.d;
    let mut best: Option<(f64, Vec<f64>)> = None;
    let mut last_err = String::new();
    // The second start is the input stds themselves.
    let unscaled = 1.0 / start_scale(d);
    let scales = [1.0, unscaled, 1.0 / 3.0, 3.0, 0.1, 10.0, 1.0 / 30.0, 30.0];
    let scaled = (0..=opts.restarts).map(|r| {
        let scale: f64 = scales.get(r).copied().unwrap_or(1.0 / (r as f64 + 1.0));
        let mut start = init.to_vec();
        for o in 0..n_ls_blocks {
            let off = problem.ls_offset(o);
            for v in &mut start[off..off + d] {
                *v += scale.ln();
            }
        }
        start
    });
    for start in scaled.chain(warm) {
        *problem.best_seen.borrow_mut() = None;
        let outcome = match optimise(problem, start, opts.max_iters) {
            Ok(found) => Some(found),
            Err(e) => {
                // An aborted run (e.g. a failed line search) keeps its best point.
                last_err = e;
                problem.best_seen.borrow_mut().take()
            }
        };
        if let Some((c, params)) = outcome
            && best.as_ref().is_none_or(|(bc, _)| c < *bc)
        {
            best = Some((c, params));
        }
    }
    // Never return something worse than the start.
    match best {
        Some((_, params)) => Ok(params),
        None if !last_err.is_empty() => Err(HyperfitError::Optimizer(last_err)),
        None => Ok(init.to_vec()),
    }
}

/// The parameter vector (ln units, clamped to the bounds) of the given hyperparameters,
/// `None` if they do not fit the problem's shape or are not positive and finite.
fn warm_params<K: Kernel + Clone>(
    problem: &Problem<'_, K>,
    hypers: &[OutputHyper],
    n_ls_blocks: usize,
) -> Option<Vec<f64>> {
    let (d, p) = (problem.d, problem.ys.len());
    let usable = |h: &OutputHyper| {
        h.lengthscales.len() == d
            && std::iter::once(h.sigma_f)
                .chain(std::iter::once(h.sigma_n))
                .chain(h.lengthscales.iter().copied())
                .all(|v| v.is_finite() && v > 0.0)
    };
    if hypers.len() != p || !hypers.iter().all(usable) {
        return None;
    }
    let mut v = vec![0.0; problem.n_params()];
    for (o, h) in hypers.iter().enumerate() {
        v[problem.sf_index(o)] = h.sigma_f.ln();
        v[problem.sn_index(o)] = h.sigma_n.ln();
    }
    for (o, h) in hypers.iter().enumerate().take(n_ls_blocks) {
        let off = problem.ls_offset(o);
        for (vj, l) in v[off..off + d].iter_mut().zip(&h.lengthscales) {
            *vj = l.ln();
        }
    }
    for (i, vi) in v.iter_mut().enumerate() {
        *vi = vi.clamp(problem.lo[i], problem.hi[i]);
    }
    Some(v)
}

/// The hyperparameters of each of the `p` outputs from the full parameter vector.
fn output_hypers<K: Kernel + Clone>(
    problem: &Problem<'_, K>,
    params: &[f64],
    p: usize,
) -> Vec<OutputHyper> {
    let mut kp = vec![0.0; problem.d + 1];
    (0..p)
        .map(|o| {
            let sigma_n = problem.output_params(params, o, &mut kp);
            OutputHyper {
                sigma_f: kp[0].exp(),
                sigma_n,
                lengthscales: kp[1..].iter().map(|v| v.exp()).collect(),
            }
        })
        .collect()
}

/// One L-BFGS run; returns (penalised cost, params) of the best point.
fn optimise<K: Kernel + Clone>(
    problem: &Problem<'_, K>,
    start: Vec<f64>,
    max_iters: u64,
) -> std::result::Result<(f64, Vec<f64>), String> {
    let linesearch = MoreThuenteLineSearch::new();
    let solver = LBFGS::new(linesearch, 7)
        .with_tolerance_grad(1e-6)
        .and_then(|s| s.with_tolerance_cost(1e-10))
        .map_err(|e| e.to_string())?;
    let wrapped = ProblemRef(problem);
    let res = Executor::new(wrapped, solver)
        .configure(|state| state.param(start).max_iters(max_iters))
        .run()
        .map_err(|e| e.to_string())?;
    let state = res.state();
    let params = state
        .get_best_param()
        .cloned()
        .ok_or_else(|| "no parameters".to_string())?;
    Ok((state.get_best_cost(), params))
}

/// Borrowing adapter so the same problem (and its data) serves several runs.
struct ProblemRef<'p, 'a, K: Kernel + Clone>(&'p Problem<'a, K>);

impl<K: Kernel + Clone> CostFunction for ProblemRef<'_, '_, K> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Self::Param) -> std::result::Result<f64, argmin::core::Error> {
        self.0.cost(p)
    }
}

impl<K: Kernel + Clone> Gradient for ProblemRef<'_, '_, K> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Self::Param) -> std::result::Result<Vec<f64>, argmin::core::Error> {
        self.0.gradient(p)
    }
}
