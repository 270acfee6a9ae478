//! The immutable snapshot the real-time path predicts from (spec §6.3 "RT path").
//!
//! A snapshot holds the window as the posterior sees it: the committed blocks (scaled
//! inputs and action entries, k_b points each) followed by the samples of the open block
//! as singleton actions (s = 1; the newest data enter the model at once instead of after
//! the block fills), and per output o the compressed weights v̄^{(o)} (one per action), the
//! Cholesky factor L^{(o)} of M^{(o)} = s_f,o² SᵀCS + SᵀDS and s_f,o². It is built by the
//! block path (`engine.rs`) and never changed while shared.
//!
//! Prediction at x, one pass over the window points (shared by all outputs):
//! c_l = φ(‖x/ℓ − x_l/ℓ‖²) and u_a = Σ_{l∈B_a} s_l c_l; then per output
//! μ_o = m_o + s_f,o² v̄_oᵀu (= m_o + k_xᵀα with α = S v̄), t = L_o⁻¹(s_f,o² u) and
//! var_o = s_f,o² − ‖t‖² (latent, clamped at 0). Cost O(n d + p i²). **No allocation**: the
//! caller owns the scratch ([`PredictScratch`]).

use crate::kernel::{KernelKind, sq_dist};

use super::tri::Tri;

/// An immutable posterior of the window. Buffers are sized for the full window at
/// construction, so a recycled snapshot is refilled without allocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Publication counter (0 = the prior, before any data).
    pub version: u64,
    /// Version of the hyperparameters it was built with.
    pub params_version: u64,
    pub(crate) kind: KernelKind,
    pub(crate) d: usize,
    pub(crate) p: usize,
    pub(crate) block_size: usize,
    /// Committed blocks.
    pub(crate) n_blocks: usize,
    /// Singleton actions (samples of the open block).
    pub(crate) n_singles: usize,
    /// Capacity of the action dimension (blocks + block_size).
    pub(crate) cap_actions: usize,
    pub(crate) inv_ell: Vec<f64>,
    /// Scaled inputs of the committed blocks then the singles, (n_blocks·k_b + n_singles)×d.
    pub(crate) xs: Vec<f64>,
    /// Action entries of the committed blocks' points.
    pub(crate) s: Vec<f64>,
    /// v̄ per output, stride `cap_actions`.
    pub(crate) vbar: Vec<f64>,
    /// L per output.
    pub(crate) chol: Vec<Tri>,
    /// s_f,o².
    pub(crate) outputscale: Vec<f64>,
    /// κ_o, the noise multiplier (diagnostic).
    pub(crate) kappa: Vec<f64>,
    /// m_o.
    pub(crate) prior_mean: Vec<f64>,
    /// The soft thresholds c_o the weights used (diagnostic).
    pub(crate) c: Vec<f64>,
}

/// Scratch of [`Snapshot::predict`], owned by the caller (allocated once).
#[derive(Debug, Clone, PartialEq)]
pub struct PredictScratch {
    xq: Vec<f64>,
    u: Vec<f64>,
    t: Vec<f64>,
}

impl PredictScratch {
    /// Scratch for d inputs and up to `actions` actions. **Allocates.**
    pub fn new(d: usize, actions: usize) -> Self {
        Self {
            xq: vec![0.0; d],
            u: vec![0.0; actions],
            t: vec![0.0; actions],
        }
    }
}

impl Snapshot {
    /// The prior snapshot (no data) with buffers for a window of `blocks` × `block_size`
    /// plus an open block. **Allocates.**
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn empty(
        kind: KernelKind,
        d: usize,
        p: usize,
        blocks: usize,
        block_size: usize,
        inv_ell: &[f64],
        outputscale: &[f64],
        prior_mean: &[f64],
    ) -> Self {
        let cap_points = (blocks + 1) * block_size;
        let cap_actions = blocks + block_size;
        Self {
            version: 0,
            params_version: 0,
            kind,
            d,
            p,
            block_size,
            n_blocks: 0,
            n_singles: 0,
            cap_actions,
            inv_ell: inv_ell.to_vec(),
            xs: Vec::with_capacity(cap_points * d),
            s: Vec::with_capacity(blocks * block_size),
            vbar: vec![0.0; p * cap_actions],
            chol: (0..p).map(|_| Tri::with_capacity(cap_actions)).collect(),
            outputscale: outputscale.to_vec(),
            kappa: vec![1.0; p],
            prior_mean: prior_mean.to_vec(),
            c: vec![f64::NAN; p],
        }
    }

    /// Window points in this snapshot (committed blocks and singles).
    pub fn n_points(&self) -> usize {
        self.n_blocks * self.block_size + self.n_singles
    }

    /// Committed blocks.
    pub fn n_blocks(&self) -> usize {
        self.n_blocks
    }

    /// Actions in use: committed blocks plus singles.
    pub fn n_actions(&self) -> usize {
        self.n_blocks + self.n_singles
    }

    /// The soft thresholds c_o in use.
    pub fn thresholds(&self) -> &[f64] {
        &self.c
    }

    /// s_f,o² of every output.
    pub fn outputscales(&self) -> &[f64] {
        &self.outputscale
    }

    /// κ_o of every output (σ_l² = κ_o ν_l).
    pub fn noise_multipliers(&self) -> &[f64] {
        &self.kappa
    }

    /// The lengthscales ℓ.
    pub fn lengthscales(&self) -> Vec<f64> {
        self.inv_ell.iter().map(|w| 1.0 / w).collect()
    }

    /// Latent mean and variance of every output at `x` (len d) into `mean`, `var` (len p).
    /// Real-time: no allocation, lock or I/O. The caller checks the lengths.
    pub fn predict(
        &self,
        x: &[f64],
        mean: &mut [f64],
        var: &mut [f64],
        scratch: &mut PredictScratch,
    ) {
        let (d, kb, nb, ns) = (self.d, self.block_size, self.n_blocks, self.n_singles);
        let na = nb + ns;
        if na == 0 {
            mean.copy_from_slice(&self.prior_mean);
            var.copy_from_slice(&self.outputscale);
            return;
        }
        let xq = &mut scratch.xq[..d];
        for ((q, &v), &w) in xq.iter_mut().zip(x).zip(&self.inv_ell) {
            *q = v * w;
        }
        let u = &mut scratch.u[..na];
        let kind = self.kind;
        for (a, ua) in u[..nb].iter_mut().enumerate() {
            let mut acc = 0.0;
            for l in a * kb..(a + 1) * kb {
                acc += self.s[l] * kind.profile(sq_dist(xq, &self.xs[l * d..(l + 1) * d]));
            }
            *ua = acc;
        }
        let base = nb * kb;
        for (j, ua) in u[nb..].iter_mut().enumerate() {
            let l = base + j;
            *ua = kind.profile(sq_dist(xq, &self.xs[l * d..(l + 1) * d]));
        }
        let cap = self.cap_actions;
        for o in 0..self.p {
            let sf2 = self.outputscale[o];
            let vbar = &self.vbar[o * cap..o * cap + na];
            let dotvu: f64 = vbar.iter().zip(u.iter()).map(|(a, b)| a * b).sum();
            mean[o] = self.prior_mean[o] + sf2 * dotvu;
            let t = &mut scratch.t[..na];
            for (ti, &ui) in t.iter_mut().zip(u.iter()) {
                *ti = sf2 * ui;
            }
            self.chol[o].solve_lower_mut(t);
            let tt: f64 = t.iter().map(|v| v * v).sum();
            var[o] = (sf2 - tt).max(0.0);
        }
    }
}
