//! Dense O(n³) baselines (spec §1.1, §1.2, §1.5): exact RCGP, CaGP and the exact GP, one
//! output each, written directly from their textbook formulas with full n×n matrices. They
//! share no code path with the block-sparse RCaGP posterior beyond the kernel profile and the
//! weights, so the tests can use them as independent references (S = I ⇒ RCaGP = RCGP, etc.).
//!
//! Every baseline predicts the latent f: mean m(x) + k_xᵀ v and variance k(x,x) − k_xᵀ P k_x
//! with its own (v, P).

use nalgebra::{DMatrix, DVector};

use crate::error::RcagpError;
use crate::kernel::KernelParams;
use crate::posterior::{OutputData, OutputParams, output_weights};

/// A dense GP-style posterior: representer weights v and the matrix P of the variance
/// reduction (K̃⁻¹ for exact models, S(SᵀK̂S)⁻¹Sᵀ for CaGP).
#[derive(Debug, Clone, PartialEq)]
pub struct DensePosterior {
    kernel: KernelParams,
    x: Vec<f64>,
    d: usize,
    prior_mean: f64,
    v: DVector<f64>,
    p: DMatrix<f64>,
}

fn kernel_matrix(kernel: &KernelParams, x: &[f64], d: usize) -> DMatrix<f64> {
    let n = x.len() / d;
    DMatrix::from_fn(n, n, |j, l| {
        kernel.value_raw(&x[j * d..(j + 1) * d], &x[l * d..(l + 1) * d])
    })
}

fn spd_inverse(m: DMatrix<f64>) -> Result<DMatrix<f64>, RcagpError> {
    let size = m.nrows();
    m.cholesky()
        .map(|c| c.inverse())
        .ok_or(RcagpError::NotPositiveDefinite { size })
}

impl DensePosterior {
    /// Exact RCGP (spec §1.2): K̃ = K + D, v = K̃⁻¹(y − m_w), P = K̃⁻¹, with the weights of
    /// `data` under `params` (s_f² in `params` replaces `kernel.outputscale`). `prior_mean`
    /// is the constant m used at test inputs.
    pub fn exact_rcgp(
        kernel: &KernelParams,
        x: &[f64],
        d: usize,
        data: &OutputData,
        params: &OutputParams,
        prior_mean: f64,
    ) -> Result<Self, RcagpError> {
        let kernel = KernelParams {
            outputscale: params.outputscale,
            ..kernel.clone()
        };
        let (w, _) = output_weights(data, params);
        let mut kt = kernel_matrix(&kernel, x, d);
        for (l, wl) in w.iter().enumerate() {
            kt[(l, l)] += wl.d;
        }
        let p = spd_inverse(kt)?;
        let r = DVector::from_iterator(w.len(), w.iter().map(|wl| wl.r));
        Ok(Self {
            v: &p * r,
            p,
            kernel,
            x: x.to_vec(),
            d,
            prior_mean,
        })
    }

    /// The exact GP with per-point noise σ²ν_l: K̂ = K + diag(σ²ν), v = K̂⁻¹(y − m).
    pub fn exact_gp(
        kernel: &KernelParams,
        x: &[f64],
        d: usize,
        data: &OutputData,
        params: &OutputParams,
        prior_mean: f64,
    ) -> Result<Self, RcagpError> {
        let kernel = KernelParams {
            outputscale: params.outputscale,
            ..kernel.clone()
        };
        let mut kh = kernel_matrix(&kernel, x, d);
        for l in 0..data.n() {
            kh[(l, l)] += params.sigma2 * data.noise[l];
        }
        let p = spd_inverse(kh)?;
        let resid = DVector::from_iterator(
            data.n(),
            (0..data.n()).map(|l| data.y[l] - data.prior_mean[l]),
        );
        Ok(Self {
            v: &p * resid,
            p,
            kernel,
            x: x.to_vec(),
            d,
            prior_mean,
        })
    }

    /// CaGP (spec §1.1) with dense actions `s` (n×i): K̂ = K + diag(σ²ν),
    /// C_i = S(SᵀK̂S)⁻¹Sᵀ, v = C_i(y − m), P = C_i.
    pub fn cagp(
        kernel: &KernelParams,
        x: &[f64],
        d: usize,
        data: &OutputData,
        params: &OutputParams,
        s: &DMatrix<f64>,
        prior_mean: f64,
    ) -> Result<Self, RcagpError> {
        let kernel = KernelParams {
            outputscale: params.outputscale,
            ..kernel.clone()
        };
        let mut kh = kernel_matrix(&kernel, x, d);
        for l in 0..data.n() {
            kh[(l, l)] += params.sigma2 * data.noise[l];
        }
        let proj = s.transpose() * &kh * s;
        let proj = (&proj + proj.transpose()) * 0.5;
        let c = s * spd_inverse(proj)? * s.transpose();
        let resid = DVector::from_iterator(
            data.n(),
            (0..data.n()).map(|l| data.y[l] - data.prior_mean[l]),
        );
        Ok(Self {
            v: &c * resid,
            p: c,
            kernel,
            x: x.to_vec(),
            d,
            prior_mean,
        })
    }

    /// Latent mean and variance at `xq` (raw input).
    pub fn predict(&self, xq: &[f64]) -> (f64, f64) {
        let d = self.d;
        let n = self.x.len() / d;
        let k = DVector::from_iterator(
            n,
            (0..n).map(|l| self.kernel.value_raw(xq, &self.x[l * d..(l + 1) * d])),
        );
        let mean = self.prior_mean + k.dot(&self.v);
        let var = self.kernel.outputscale - k.dot(&(&self.p * &k));
        (mean, var)
    }

    /// The representer weights v.
    pub fn weights(&self) -> &DVector<f64> {
        &self.v
    }
}
