//! The time-varying objective: a trait for any f(x, t) on a box, the paper's synthetic
//! function (spec §5.1), its reference policies (§8 #7) and the one-off ML-II fit of the
//! kernel (§7 #11).

use super::rng::SplitMix64;
use super::ucb::refine_1d;
use super::{Result, TvgpError};
use gpn_gp_core::hyperfit::nlml;
use gpn_gp_core::kernel::ArdKernel;

/// A function f_t(x) on a box D, observed with Gaussian noise.
pub trait TimeVaryingProblem: Sync {
    /// The box D, one (lo, hi) per input.
    fn domain(&self) -> &[(f64, f64)];
    /// f_t(x), t = 1, 2, ….
    fn value(&self, x: &[f64], t: usize) -> f64;
    /// max_x f_t(x) (for the regret only).
    fn max_value(&self, t: usize) -> f64;
    /// σ² of a bandit observation.
    fn noise_var(&self) -> f64;
    /// Input dimension d.
    fn dim(&self) -> usize {
        self.domain().len()
    }
}

/// f(x, t) = exp(−0.05 (x − 5 sin(0.1 t))²) + 0.5 cos(0.2 x) + 1.5 on D = [−50, 50],
/// σ² = 0.01 (paper §4.1).
#[derive(Debug, Clone)]
pub struct Synthetic1d {
    domain: [(f64, f64); 1],
    noise_var: f64,
    /// max_x f_t for t = 1..=maxima.len() (index t − 1).
    maxima: Vec<f64>,
}

impl Synthetic1d {
    /// The paper's function and noise, maxima precomputed for t ≤ 1000.
    pub fn paper() -> Self {
        Self::with_horizon(1000)
    }

    /// The paper's function with maxima precomputed for t ≤ `horizon`.
    pub fn with_horizon(horizon: usize) -> Self {
        let mut s = Self {
            domain: [(-50.0, 50.0)],
            noise_var: 0.01,
            maxima: Vec::new(),
        };
        s.maxima = (1..=horizon).map(|t| s.argmax(t).1).collect();
        s
    }

    /// f(x, t) for a scalar x.
    pub fn f(x: f64, t: usize) -> f64 {
        let c = 5.0 * (0.1 * t as f64).sin();
        (-0.05 * (x - c) * (x - c)).exp() + 0.5 * (0.2 * x).cos() + 1.5
    }

    /// (argmax, max) of f_t over D: a grid of step 0.05, then golden-section refinement
    /// around the best grid point.
    pub fn argmax(&self, t: usize) -> (f64, f64) {
        let (lo, hi) = self.domain[0];
        let cells = 2000;
        let h = (hi - lo) / cells as f64;
        let (mut xb, mut fb) = (lo, f64::NEG_INFINITY);
        for k in 0..=cells {
            let x = lo + h * k as f64;
            let v = Self::f(x, t);
            if v > fb {
                (xb, fb) = (x, v);
            }
        }
        refine_1d(xb, h, lo, hi, 80, |x| Self::f(x, t))
    }

    /// Mean of f_t over D (Simpson's rule, 20 000 intervals).
    pub fn mean_over_domain(&self, t: usize) -> f64 {
        let (lo, hi) = self.domain[0];
        let n = 20_000;
        let h = (hi - lo) / n as f64;
        let mut s = Self::f(lo, t) + Self::f(hi, t);
        for k in 1..n {
            let w = if k % 2 == 1 { 4.0 } else { 2.0 };
            s += w * Self::f(lo + h * k as f64, t);
        }
        s * h / 3.0 / (hi - lo)
    }

    /// Average regret over t = 1..=T of always playing `x0` (§8 #7: x = 0 gives ≈ 0.313).
    pub fn stay_regret(&self, x0: f64, horizon: usize) -> f64 {
        (1..=horizon)
            .map(|t| self.max_value(t) - Self::f(x0, t))
            .sum::<f64>()
            / horizon as f64
    }

    /// Expected average regret over t = 1..=T of uniform random play (§8 #7: ≈ 1.347).
    pub fn random_regret(&self, horizon: usize) -> f64 {
        (1..=horizon)
            .map(|t| self.max_value(t) - self.mean_over_domain(t))
            .sum::<f64>()
            / horizon as f64
    }

    /// sup_x |f_{t+1}(x) − f_t(x)| on a grid of step 0.01 (§5.1: ≈ 0.0957 at most).
    pub fn drift_sup(&self, t: usize) -> f64 {
        let (lo, hi) = self.domain[0];
        (0..=10_000)
            .map(|k| {
                let x = lo + (hi - lo) * k as f64 / 10_000.0;
                (Self::f(x, t + 1) - Self::f(x, t)).abs()
            })
            .fold(0.0, f64::max)
    }
}

impl TimeVaryingProblem for Synthetic1d {
    fn domain(&self) -> &[(f64, f64)] {
        &self.domain
    }

    fn value(&self, x: &[f64], t: usize) -> f64 {
        Self::f(x[0], t)
    }

    fn max_value(&self, t: usize) -> f64 {
        match t.checked_sub(1).and_then(|i| self.maxima.get(i)) {
            Some(&m) => m,
            None => self.argmax(t).1,
        }
    }

    fn noise_var(&self) -> f64 {
        self.noise_var
    }
}

/// The frozen kernel and prior-mean offset of §7 #10–#11.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedHyper {
    /// Signal standard deviation s.
    pub sigma_f: f64,
    /// SE lengthscale ℓ.
    pub lengthscale: f64,
    /// Prior mean offset m0 = mean of the fitting targets.
    pub m0: f64,
    /// Negative log marginal likelihood at the optimum.
    pub nlml: f64,
}

/// The ML-II fitting data of §7 #11: `n` uniform samples of f(·, 1) plus N(0, σ²) noise,
/// seeded. Returns (x, y) with y uncentred.
pub fn fitting_sample<P: TimeVaryingProblem>(
    problem: &P,
    n: usize,
    seed: u64,
) -> (Vec<f64>, Vec<f64>) {
    let d = problem.dim();
    let sd = problem.noise_var().sqrt();
    let mut rng = SplitMix64::stream(seed, 0xF17);
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let start = x.len();
        for &(lo, hi) in problem.domain() {
            x.push(rng.uniform_in(lo, hi));
        }
        y.push(problem.value(&x[start..], 1) + sd * rng.normal());
    }
    (x, y)
}

/// ML-II for an SE kernel on [`fitting_sample`] (§7 #11): σ² fixed at the problem's noise,
/// targets centred by their mean m0; see [`fit_se_fixed_noise`].
pub fn fit_hyperparameters<P: TimeVaryingProblem>(
    problem: &P,
    n: usize,
    seed: u64,
) -> Result<FittedHyper> {
    if problem.dim() != 1 {
        return Err(TvgpError::Config(
            "the ML-II fit of the harness is one-dimensional".into(),
        ));
    }
    let (x, y) = fitting_sample(problem, n, seed);
    let (lo, hi) = problem.domain()[0];
    fit_se_fixed_noise(&x, &y, problem.noise_var(), hi - lo)
}

/// Maximises the marginal likelihood of a 1-D SE kernel over (σ_f, ℓ) with the noise
/// variance fixed, on targets centred by their mean (returned as m0). BFGS with
/// backtracking in (ln σ_f, ln ℓ) from ℓ ∈ {1, 3, 10}·range/100, σ_f = std(y); the best
/// run wins. Deterministic.
pub fn fit_se_fixed_noise(
    x: &[f64],
    y_raw: &[f64],
    noise_var: f64,
    range: f64,
) -> Result<FittedHyper> {
    let n = y_raw.len();
    if n < 2 || x.len() != n {
        return Err(TvgpError::Input(
            gpn_gp_core::model::ModelError::Dimension {
                what: "fitting data",
                expected: n.max(2),
                found: x.len(),
            },
        ));
    }
    let sd = noise_var.sqrt();
    let m0 = y_raw.iter().sum::<f64>() / n as f64;
    let y: Vec<f64> = y_raw.iter().map(|v| v - m0).collect();
    let std_y = (y.iter().map(|v| v * v).sum::<f64>() / n as f64)
        .sqrt()
        .max(1e-6);
    let objective = |p: [f64; 2], grad: Option<&mut [f64; 2]>| -> Option<f64> {
        let kernel = ArdKernel::se(p[0].exp(), &[p[1].exp()]).ok()?;
        let mut g = [0.0; 3];
        let v = nlml(&kernel, sd, x, &y, Some(&mut g)).ok()?;
        if let Some(out) = grad {
            *out = [g[0], g[1]];
        }
        v.is_finite().then_some(v)
    };
    let mut best: Option<([f64; 2], f64)> = None;
    for scale in [1.0, 3.0, 10.0] {
        let mut p = [std_y.ln(), (scale * range / 100.0).ln()];
        let mut g = [0.0; 2];
        let Some(mut v) = objective(p, Some(&mut g)) else {
            continue;
        };
        // BFGS in two dimensions with a backtracking (Armijo) line search.
        let mut h = [[1.0, 0.0], [0.0, 1.0]];
        for _ in 0..100 {
            let dir = [
                -(h[0][0] * g[0] + h[0][1] * g[1]),
                -(h[1][0] * g[0] + h[1][1] * g[1]),
            ];
            let slope = dir[0] * g[0] + dir[1] * g[1];
            if slope >= 0.0 {
                h = [[1.0, 0.0], [0.0, 1.0]];
                continue;
            }
            // Cap the step at 1 in log space (a factor e), then backtrack.
            let norm = (dir[0] * dir[0] + dir[1] * dir[1]).sqrt();
            let mut step = (1.0 / norm).min(1.0);
            let mut accepted = None;
            while step > 1e-8 {
                let trial = [p[0] + step * dir[0], p[1] + step * dir[1]];
                let mut gt = [0.0; 2];
                if let Some(vt) = objective(trial, Some(&mut gt))
                    && vt <= v + 1e-4 * step * slope
                {
                    accepted = Some((trial, vt, gt));
                    break;
                }
                step *= 0.5;
            }
            let Some((pn, vn, gn)) = accepted else {
                break;
            };
            let s_k = [pn[0] - p[0], pn[1] - p[1]];
            let y_k = [gn[0] - g[0], gn[1] - g[1]];
            let sy = s_k[0] * y_k[0] + s_k[1] * y_k[1];
            let done = (v - vn).abs() < 1e-10 * (1.0 + v.abs());
            (p, v, g) = (pn, vn, gn);
            if done {
                break;
            }
            if sy > 1e-12 {
                // H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ.
                let rho = 1.0 / sy;
                let mut a = [[0.0; 2]; 2];
                for (i, row) in a.iter_mut().enumerate() {
                    for (j, e) in row.iter_mut().enumerate() {
                        *e = f64::from(u8::from(i == j)) - rho * s_k[i] * y_k[j];
                    }
                }
                let mut ah = [[0.0; 2]; 2];
                for i in 0..2 {
                    for j in 0..2 {
                        ah[i][j] = a[i][0] * h[0][j] + a[i][1] * h[1][j];
                    }
                }
                for i in 0..2 {
                    for j in 0..2 {
                        h[i][j] = ah[i][0] * a[j][0] + ah[i][1] * a[j][1] + rho * s_k[i] * s_k[j];
                    }
                }
            }
        }
        if best.is_none_or(|(_, b)| v < b) {
            best = Some((p, v));
        }
    }
    let (p, v) = best.ok_or(TvgpError::NotPositiveDefinite("ML-II fit"))?;
    Ok(FittedHyper {
        sigma_f: p[0].exp(),
        lengthscale: p[1].exp(),
        m0,
        nlml: v,
    })
}
