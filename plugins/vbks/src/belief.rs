//! The kernel belief (spec §1.3, §2.4, Alg. 4): a logistic-normal q(g) = N(m, C Cᵀ) over
//! kernel logits g ∈ R^K with prior N(μ₀, s_g² I), fitted to the local bounds ℓ_i by
//! maximising Σ_i E_q[softmax(g)_i] ℓ_i − KL[q(g) ‖ p(g)] with Monte-Carlo gradients and
//! Adam; the kernel posterior is q*(k_i) = E_q[softmax(g)_i] (eq. 13, by sampling).
//!
//! With η ~ N(0, I), g = Cη + m, p = softmax(g) and h = p ⊙ (ℓ − (p·ℓ)1):
//! ∇_m = mean h − (m − μ₀)/s_g²,  ∇_C = tril(mean h ηᵀ) − C/s_g² + diag(1/C_jj).
//! C is lower-triangular (or diagonal, for large K) with its diagonal held as exp of a
//! free parameter, so it stays positive. ℓ is shifted by its maximum first (the objective
//! changes by a constant because Σ p = 1).
//!
//! [`BeliefMode::Discrete`] is the alternative of spec gap #22, *not* the paper's method:
//! w_i ∝ exp(ℓ_i/τ) (uniform prior), the exact posterior at τ = 1.

use crate::adam::Adam;
use crate::rng::Rng;

/// How the kernel weights are formed from the local bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BeliefMode {
    /// The paper's logistic-normal q(g) (default).
    LogisticNormal,
    /// w ∝ exp(ℓ/τ): a tempered discrete posterior.
    Discrete {
        /// Temperature τ > 0.
        tau: f64,
    },
}

/// Settings of a belief fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BeliefSettings {
    /// Prior scale s_g.
    pub prior_scale: f64,
    /// Full lower-triangular C (else diagonal).
    pub full_covariance: bool,
    /// Adam step size.
    pub lr: f64,
    /// Monte-Carlo samples per gradient step (S_g).
    pub samples_per_step: usize,
    /// Samples for q*(k) (eq. 13; the paper's 2000).
    pub posterior_samples: usize,
}

/// A logistic-normal belief over K kernels.
#[derive(Debug, Clone, PartialEq)]
pub struct Belief {
    k: usize,
    full: bool,
    /// Packed parameters: m (K), ln C_jj (K), then C_ij for i > j row by row (if full).
    theta: Vec<f64>,
    /// Prior mean μ₀ (K).
    pub mu0: Vec<f64>,
    /// Prior scale s_g.
    pub s_g: f64,
    adam: Adam,
    // Scratch.
    eta: Vec<f64>,
    g: Vec<f64>,
    p: Vec<f64>,
    h: Vec<f64>,
    grad: Vec<f64>,
}

impl Belief {
    /// q(g) = p(g) = N(μ₀, s_g² I) (uniform belief when μ₀ = 0).
    pub fn prior(mu0: Vec<f64>, settings: &BeliefSettings) -> Belief {
        let k = mu0.len();
        let n = Self::n_theta(k, settings.full_covariance);
        let mut theta = vec![0.0; n];
        theta[..k].copy_from_slice(&mu0);
        for j in 0..k {
            theta[k + j] = settings.prior_scale.ln();
        }
        Belief {
            k,
            full: settings.full_covariance,
            theta,
            mu0,
            s_g: settings.prior_scale,
            adam: Adam::new(n, settings.lr),
            eta: vec![0.0; k],
            g: vec![0.0; k],
            p: vec![0.0; k],
            h: vec![0.0; k],
            grad: vec![0.0; n],
        }
    }

    fn n_theta(k: usize, full: bool) -> usize {
        2 * k + if full { k * (k - 1) / 2 } else { 0 }
    }

    /// Number of kernels K.
    pub fn len(&self) -> usize {
        self.k
    }

    /// True when K = 0.
    pub fn is_empty(&self) -> bool {
        self.k == 0
    }

    /// Mean m.
    pub fn mean(&self) -> &[f64] {
        &self.theta[..self.k]
    }

    /// C_ij (lower triangle; 0 above, and off the diagonal when diagonal).
    pub fn c(&self, i: usize, j: usize) -> f64 {
        let k = self.k;
        if i == j {
            self.theta[k + i].exp()
        } else if i > j && self.full {
            self.theta[2 * k + i * (i - 1) / 2 + j]
        } else {
            0.0
        }
    }

    /// g = C η + m into `self.g`.
    fn sample_g(&mut self) {
        let k = self.k;
        for i in 0..k {
            let mut v = self.theta[i] + self.theta[k + i].exp() * self.eta[i];
            if self.full {
                let row = 2 * k + i * (i.saturating_sub(1)) / 2;
                for j in 0..i {
                    v += self.theta[row + j] * self.eta[j];
                }
            }
            self.g[i] = v;
        }
    }

    /// Run `steps` Adam steps on the objective for local bounds `ell` (len K),
    /// continuing from the current q(g) (warm start).
    pub fn fit(&mut self, ell: &[f64], steps: usize, settings: &BeliefSettings, rng: &mut Rng) {
        let k = self.k;
        if k == 0 {
            return;
        }
        self.adam.lr = settings.lr;
        let top = ell.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let s = settings.samples_per_step.max(1);
        let inv_s2 = 1.0 / (self.s_g * self.s_g);
        for _ in 0..steps {
            self.grad.fill(0.0);
            for _ in 0..s {
                rng.fill_normal(&mut self.eta);
                self.sample_g();
                softmax(&self.g, &mut self.p);
                let pl: f64 = self.p.iter().zip(ell).map(|(p, l)| p * (l - top)).sum();
                for i in 0..k {
                    self.h[i] = self.p[i] * ((ell[i] - top) - pl);
                }
                for i in 0..k {
                    self.grad[i] += self.h[i];
                    // Diagonal of C (chain rule to ln C_jj below).
                    self.grad[k + i] += self.h[i] * self.eta[i];
                    if self.full {
                        let row = 2 * k + i * (i.saturating_sub(1)) / 2;
                        for j in 0..i {
                            self.grad[row + j] += self.h[i] * self.eta[j];
                        }
                    }
                }
            }
            let inv_n = 1.0 / s as f64;
            for i in 0..k {
                self.grad[i] = self.grad[i] * inv_n - (self.theta[i] - self.mu0[i]) * inv_s2;
                let cjj = self.theta[k + i].exp();
                let g_c = self.grad[k + i] * inv_n - cjj * inv_s2 + 1.0 / cjj;
                self.grad[k + i] = g_c * cjj;
            }
            if self.full {
                for idx in 2 * k..self.theta.len() {
                    self.grad[idx] = self.grad[idx] * inv_n - self.theta[idx] * inv_s2;
                }
            }
            self.adam.ascend(&mut self.theta, &self.grad);
        }
    }

    /// q*(k_i) = E_q[softmax(g)_i] by `n` samples into `out` (len K).
    pub fn probabilities(&mut self, n: usize, rng: &mut Rng, out: &mut [f64]) {
        out.fill(0.0);
        let n = n.max(1);
        for _ in 0..n {
            rng.fill_normal(&mut self.eta);
            self.sample_g();
            softmax(&self.g, &mut self.p);
            for (o, &p) in out.iter_mut().zip(&self.p) {
                *o += p;
            }
        }
        out.iter_mut().for_each(|o| *o /= n as f64);
    }

    /// KL[q(g) ‖ p(g)].
    pub fn kl(&self) -> f64 {
        let k = self.k;
        let inv_s2 = 1.0 / (self.s_g * self.s_g);
        let mut tr = 0.0;
        let mut ln_det_c = 0.0;
        for i in 0..k {
            for j in 0..=i {
                tr += self.c(i, j) * self.c(i, j);
            }
            ln_det_c += self.theta[k + i];
        }
        let mm: f64 = (0..k).map(|i| (self.theta[i] - self.mu0[i]).powi(2)).sum();
        0.5 * (tr * inv_s2 + mm * inv_s2 - k as f64 + k as f64 * (self.s_g * self.s_g).ln())
            - ln_det_c
    }

    /// The marginal of q(g) on the kernels `keep` (spec Alg. 6 step 2 initialisation),
    /// with prior N(μ₀_I, s_g² I) and fresh Adam state.
    pub fn restrict(&self, keep: &[usize], settings: &BeliefSettings) -> Belief {
        let mu0: Vec<f64> = keep.iter().map(|&i| self.mu0[i]).collect();
        let mut out = Belief::prior(mu0, settings);
        let kk = keep.len();
        for (a, &i) in keep.iter().enumerate() {
            out.theta[a] = self.theta[i];
        }
        // Σ_II = (C Cᵀ)_II, then its Cholesky factor.
        let mut sigma = vec![0.0; kk * kk];
        for (a, &i) in keep.iter().enumerate() {
            for (b, &j) in keep.iter().enumerate() {
                let mut v = 0.0;
                for l in 0..=i.min(j) {
                    v += self.c(i, l) * self.c(j, l);
                }
                sigma[a * kk + b] = v;
            }
        }
        if !out.full {
            for a in 0..kk {
                out.theta[kk + a] = 0.5 * sigma[a * kk + a].max(1e-300).ln();
            }
        } else if crate::linalg::cholesky_in_place(&mut sigma, kk).is_ok() {
            for a in 0..kk {
                out.theta[kk + a] = sigma[a * kk + a].ln();
                for b in 0..a {
                    out.theta[2 * kk + a * (a - 1) / 2 + b] = sigma[a * kk + b];
                }
            }
        }
        out
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        8 * (3 * self.theta.len() + self.mu0.len() + 5 * self.k)
    }

    /// The packed parameters (for persistence).
    pub(crate) fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// Replace the packed parameters (for persistence); false if the length is wrong.
    pub(crate) fn set_theta(&mut self, theta: &[f64]) -> bool {
        if theta.len() != self.theta.len() {
            return false;
        }
        self.theta.copy_from_slice(theta);
        true
    }
}

/// Numerically stable softmax of `g` into `out`.
pub fn softmax(g: &[f64], out: &mut [f64]) {
    let top = g.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut s = 0.0;
    for (o, &v) in out.iter_mut().zip(g) {
        *o = (v - top).exp();
        s += *o;
    }
    out.iter_mut().for_each(|o| *o /= s);
}

/// Weights of [`BeliefMode::Discrete`]: softmax(ℓ/τ) into `out`.
pub fn discrete_weights(ell: &[f64], tau: f64, out: &mut [f64]) {
    for (o, &l) in out.iter_mut().zip(ell) {
        *o = l / tau;
    }
    let top = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut s = 0.0;
    for o in out.iter_mut() {
        *o = (*o - top).exp();
        s += *o;
    }
    out.iter_mut().for_each(|o| *o /= s);
}
