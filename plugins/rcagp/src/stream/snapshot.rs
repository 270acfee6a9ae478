//! The immutable snapshot the real-time path predicts from (spec §6.3 "RT path").
//!
//! Snapshot = {scaled inputs X (n×d), action entries s (n), block size, per output o: the
//! representer weights α^{(o)} (interleaved n×p), the Cholesky factor L^{(o)} of
//! M^{(o)} = s_f,o² G_C + diag(δ^{(o)}) (i×i), s_f,o² and the prior mean}. A snapshot is
//! built by the block path ([`super::engine`]) and never changed while shared.
//!
//! Prediction at x, one pass over the n window points (shared by all outputs):
//! c_l = φ(‖x/ℓ − x_l/ℓ‖²), μ_o += α_{l,o} c_l, u_{a(l)} += s_l c_l; then per output
//! t = L_o⁻¹ (s_f,o² u), var_o = s_f,o² − ‖t‖² (latent, clamped at 0) and
//! μ_o = m_o + s_f,o² Σ_l α_{l,o} c_l. Cost O(n d + p i²). **No allocation**: the caller
//! owns the scratch ([`PredictScratch`]).

use gpn_gp_core::cholesky::PackedCholesky;

use crate::kernel::{KernelKind, sq_dist};

/// An immutable posterior of the window. Buffers are sized for the full window at
/// construction, so a recycled snapshot is rebuilt without allocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Publication counter (0 = the prior, before any block).
    pub version: u64,
    /// Version of the hyperparameters it was built with.
    pub params_version: u64,
    pub(crate) kind: KernelKind,
    pub(crate) d: usize,
    pub(crate) p: usize,
    pub(crate) block_size: usize,
    /// Active blocks i (0 = prior only).
    pub(crate) n_blocks: usize,
    pub(crate) inv_ell: Vec<f64>,
    /// Scaled inputs, n×d (capacity: the full window).
    pub(crate) xs: Vec<f64>,
    /// Action entries (n).
    pub(crate) s: Vec<f64>,
    /// α, n×p interleaved (point-major).
    pub(crate) alpha: Vec<f64>,
    /// L per output.
    pub(crate) chol: Vec<PackedCholesky>,
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
    /// Scratch for d inputs and up to `blocks` blocks. **Allocates.**
    pub fn new(d: usize, blocks: usize) -> Self {
        Self {
            xq: vec![0.0; d],
            u: vec![0.0; blocks],
            t: vec![0.0; blocks],
        }
    }
}

impl Snapshot {
    /// The prior snapshot (no data) with buffers for a window of `blocks` × `block_size`.
    /// **Allocates.**
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
        let n = blocks * block_size;
        Self {
            version: 0,
            params_version: 0,
            kind,
            d,
            p,
            block_size,
            n_blocks: 0,
            inv_ell: inv_ell.to_vec(),
            xs: Vec::with_capacity(n * d),
            s: Vec::with_capacity(n),
            alpha: Vec::with_capacity(n * p),
            chol: (0..p).map(|_| PackedCholesky::with_capacity(blocks)).collect(),
            outputscale: outputscale.to_vec(),
            kappa: vec![1.0; p],
            prior_mean: prior_mean.to_vec(),
            c: vec![f64::NAN; p],
        }
    }

    /// Window points in this snapshot, n = i·k_b.
    pub fn n_points(&self) -> usize {
        self.n_blocks * self.block_size
    }

    /// Active blocks i.
    pub fn n_blocks(&self) -> usize {
        self.n_blocks
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
    pub fn predict(&self, x: &[f64], mean: &mut [f64], var: &mut [f64], scratch: &mut PredictScratch) {
        let (d, p, kb, nb) = (self.d, self.p, self.block_size, self.n_blocks);
        if nb == 0 {
            mean.copy_from_slice(&self.prior_mean);
            var.copy_from_slice(&self.outputscale);
            return;
        }
        let xq = &mut scratch.xq[..d];
        for ((q, &v), &w) in xq.iter_mut().zip(x).zip(&self.inv_ell) {
            *q = v * w;
        }
        mean.fill(0.0);
        let u = &mut scratch.u[..nb];
        for (a, ua) in u.iter_mut().enumerate() {
            let mut acc = 0.0;
            for l in a * kb..(a + 1) * kb {
                let c = self.kind.profile(sq_dist(xq, &self.xs[l * d..(l + 1) * d]));
                acc += self.s[l] * c;
                for (m, &al) in mean.iter_mut().zip(&self.alpha[l * p..(l + 1) * p]) {
                    *m += al * c;
                }
            }
            *ua = acc;
        }
        for o in 0..p {
            let sf2 = self.outputscale[o];
            mean[o] = self.prior_mean[o] + sf2 * mean[o];
            let t = &mut scratch.t[..nb];
            for (ti, &ui) in t.iter_mut().zip(u.iter()) {
                *ti = sf2 * ui;
            }
            self.chol[o].solve_lower_mut(t);
            let tt: f64 = t.iter().map(|v| v * v).sum();
            var[o] = (sf2 - tt).max(0.0);
        }
    }
}
