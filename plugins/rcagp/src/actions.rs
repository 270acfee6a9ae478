//! Action matrices S (spec §1.1 item 3, §6.2, §5 items 11 and 15): block-sparse actions
//! (column a nonzero only on block B_a; n numbers s_l in all), dense actions for the tests
//! and the inducing-point mode, and the initialisers.
//!
//! Blocks are contiguous index ranges. [`BlockLayout::uniform`] drops the tail that does not
//! fill a block (the paper's code); [`BlockLayout::balanced`] keeps every point with block
//! sizes ⌊n/i⌋ or ⌊n/i⌋ + 1 (the math only needs disjoint blocks).

use nalgebra::DMatrix;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernel::{KernelKind, sq_dist};

/// A partition of 0..n into i contiguous blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLayout {
    /// offsets[a]..offsets[a+1] is block a; offsets[0] = 0, offsets[i] = n.
    offsets: Vec<usize>,
}

impl BlockLayout {
    /// From explicit offsets (must start at 0 and increase strictly).
    pub fn from_offsets(offsets: Vec<usize>) -> Option<Self> {
        let ok = offsets.len() >= 2 && offsets[0] == 0 && offsets.windows(2).all(|w| w[0] < w[1]);
        ok.then_some(Self { offsets })
    }

    /// i blocks of k_b = ⌊n/i⌋ points each; the last n − i·k_b points are left out
    /// (spec A0.5). None if i = 0 or i > n.
    pub fn uniform(n: usize, i: usize) -> Option<Self> {
        if i == 0 || i > n {
            return None;
        }
        let kb = n / i;
        Some(Self {
            offsets: (0..=i).map(|a| a * kb).collect(),
        })
    }

    /// i blocks covering all n points, sizes ⌊n/i⌋ or ⌊n/i⌋ + 1 (larger ones first).
    pub fn balanced(n: usize, i: usize) -> Option<Self> {
        if i == 0 || i > n {
            return None;
        }
        let (kb, extra) = (n / i, n % i);
        let mut offsets = Vec::with_capacity(i + 1);
        let mut at = 0;
        offsets.push(0);
        for a in 0..i {
            at += kb + usize::from(a < extra);
            offsets.push(at);
        }
        Some(Self { offsets })
    }

    /// Number of points covered, n.
    pub fn n(&self) -> usize {
        self.offsets[self.offsets.len() - 1]
    }

    /// Number of blocks, i.
    pub fn i(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The index range of block a.
    pub fn block(&self, a: usize) -> std::ops::Range<usize> {
        self.offsets[a]..self.offsets[a + 1]
    }

    /// The block of every point (a(l) for l in 0..n). **Allocates.**
    pub fn block_of_each(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.n());
        for a in 0..self.i() {
            out.extend(std::iter::repeat_n(a, self.block(a).len()));
        }
        out
    }
}

/// An action matrix S (n×i).
#[derive(Debug, Clone, PartialEq)]
pub enum Actions {
    /// Block-sparse: S_{l,a} = s_l if l ∈ B_a, else 0.
    Block {
        /// The blocks.
        layout: BlockLayout,
        /// s_l for l in 0..n.
        s: Vec<f64>,
    },
    /// A dense n×i matrix (identity, inducing-point actions, tests).
    Dense(DMatrix<f64>),
}

impl Actions {
    /// Number of columns i.
    pub fn i(&self) -> usize {
        match self {
            Actions::Block { layout, .. } => layout.i(),
            Actions::Dense(s) => s.ncols(),
        }
    }

    /// Number of rows n.
    pub fn n(&self) -> usize {
        match self {
            Actions::Block { layout, .. } => layout.n(),
            Actions::Dense(s) => s.nrows(),
        }
    }

    /// S as a dense matrix. **Allocates**; for tests.
    pub fn to_dense(&self) -> DMatrix<f64> {
        match self {
            Actions::Block { layout, s } => {
                let mut m = DMatrix::zeros(layout.n(), layout.i());
                for a in 0..layout.i() {
                    for l in layout.block(a) {
                        m[(l, a)] = s[l];
                    }
                }
                m
            }
            Actions::Dense(s) => s.clone(),
        }
    }
}

/// The paper's initialisation: s_l ~ N(0, 1/k_b) with k_b the size of l's block, from a
/// seeded ChaCha8 stream (Box–Muller).
pub fn init_random(layout: &BlockLayout, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = vec![0.0; layout.n()];
    for a in 0..layout.i() {
        let range = layout.block(a);
        let sd = 1.0 / (range.len() as f64).sqrt();
        for l in range {
            let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
            let u2: f64 = rng.random::<f64>();
            s[l] = sd * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        }
    }
    s
}

/// Weight-aware actions (spec §6.2, a documented deviation from the paper): within each
/// block, s_l ∝ `precision[l]` normalised to unit Euclidean norm — a precision-weighted
/// average of the block's nearly repeated measurements, so a down-weighted glitch gets
/// s ≈ 0 and does not poison its block (§1.3). A block whose precisions are all zero gets
/// uniform entries. Writes `s` for the blocks' points; no allocation.
pub fn fill_weight_aware(layout: &BlockLayout, precision: &[f64], s: &mut [f64]) {
    for a in 0..layout.i() {
        let range = layout.block(a);
        normalize_block(&precision[range.clone()], &mut s[range]);
    }
}

/// One block of [`fill_weight_aware`]: `out` ∝ `precision`, unit norm. No allocation.
pub fn normalize_block(precision: &[f64], out: &mut [f64]) {
    let norm = precision.iter().map(|p| p * p).sum::<f64>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        for (o, p) in out.iter_mut().zip(precision) {
            *o = p / norm;
        }
    } else {
        let u = 1.0 / (out.len() as f64).sqrt();
        out.fill(u);
    }
}

/// The `targets` initialisation of the reference code with its intended per-block
/// normalisation (the code's division is not in place, spec §1.1): s_l = r_l/‖r_B‖.
pub fn init_targets(layout: &BlockLayout, targets: &[f64]) -> Vec<f64> {
    let mut s = vec![0.0; layout.n()];
    for a in 0..layout.i() {
        let range = layout.block(a);
        normalize_block(&targets[range.clone()], &mut s[range]);
    }
    s
}

/// The `eigen` initialisation: the top eigenvector of each diagonal block K(X_a, X_a)
/// (power iteration, 100 steps from the all-ones vector), for inputs `xs` pre-scaled by
/// 1/ℓ (n×d).
pub fn init_eigen(layout: &BlockLayout, kind: KernelKind, xs: &[f64], d: usize) -> Vec<f64> {
    let mut s = vec![0.0; layout.n()];
    for a in 0..layout.i() {
        let range = layout.block(a);
        let kb = range.len();
        let k: Vec<f64> = (0..kb * kb)
            .map(|ij| {
                let (p, q) = (range.start + ij / kb, range.start + ij % kb);
                kind.profile(sq_dist(&xs[p * d..(p + 1) * d], &xs[q * d..(q + 1) * d]))
            })
            .collect();
        let mut v = vec![1.0 / (kb as f64).sqrt(); kb];
        let mut next = vec![0.0; kb];
        for _ in 0..100 {
            for (p, nx) in next.iter_mut().enumerate() {
                *nx = k[p * kb..(p + 1) * kb]
                    .iter()
                    .zip(&v)
                    .map(|(a, b)| a * b)
                    .sum();
            }
            let norm = next.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm <= 0.0 {
                break;
            }
            v.iter_mut().zip(&next).for_each(|(vi, ni)| *vi = ni / norm);
        }
        s[range].copy_from_slice(&v);
    }
    s
}
