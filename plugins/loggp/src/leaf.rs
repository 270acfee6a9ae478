//! One leaf's exact GP over at most N̄ points: its storage (preallocated), the rank-one
//! growth, the oldest-point replacement, the full refactorisation after a split, and the
//! local prediction. All outputs share the points; each has its own kernel, factor and α.
//! No method allocates.

use gpn_gp_core::cholesky::{CholeskyError, PackedCholesky, dot};
use gpn_gp_core::kernel::{ArdKernel, Kernel};

/// Smallest ratio of a replaced row's pivots to their old values before the factor is
/// rebuilt instead (the O(N̄²) replacement lost too much precision).
const REPLACE_MIN_PIVOT_RATIO: f64 = 1e-8;

/// One point, as the tree hands it to a leaf.
#[derive(Debug, Clone, Copy)]
pub struct Point<'a> {
    /// Input (d).
    pub x: &'a [f64],
    /// Targets (p).
    pub y: &'a [f64],
    /// Noise variance of each output (p).
    pub noise: &'a [f64],
    /// Insertion order (the oldest point has the smallest).
    pub stamp: u64,
}

/// Scratch a leaf needs for its updates (N̄ each, 2N̄ for `row`).
#[derive(Debug, Clone)]
pub struct Scratch {
    /// A kernel column.
    pub col: Vec<f64>,
    /// The replacement's Givens workspace.
    pub row: Vec<f64>,
}

impl Scratch {
    /// Scratch for leaves of `cap` points.
    pub fn new(cap: usize) -> Self {
        Self {
            col: vec![0.0; cap],
            row: vec![0.0; 2 * cap],
        }
    }
}

/// A leaf's storage.
#[derive(Debug, Clone)]
pub struct Leaf {
    /// Points held.
    pub n: usize,
    d: usize,
    cap: usize,
    /// Inputs, row-major (cap × d).
    pub x: Vec<f64>,
    /// Targets, output-major (p × cap).
    pub y: Vec<f64>,
    /// Noise variances, output-major (p × cap).
    pub noise: Vec<f64>,
    /// Insertion stamps (cap).
    pub stamp: Vec<u64>,
    /// Factor of K + diag(noise), per output.
    pub chol: Vec<PackedCholesky>,
    /// α = (K + diag(noise))⁻¹ y, output-major (p × cap).
    pub alpha: Vec<f64>,
}

impl Leaf {
    /// An empty leaf for `cap` points of dimension `d` with `p` outputs. Allocates.
    pub fn new(cap: usize, d: usize, p: usize) -> Self {
        Self {
            n: 0,
            d,
            cap,
            x: vec![0.0; cap * d],
            y: vec![0.0; p * cap],
            noise: vec![0.0; p * cap],
            stamp: vec![0; cap],
            chol: (0..p).map(|_| PackedCholesky::with_capacity(cap)).collect(),
            alpha: vec![0.0; p * cap],
        }
    }

    /// Whether it holds N̄ points.
    pub fn is_full(&self) -> bool {
        self.n == self.cap
    }

    /// Input i.
    pub fn input(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// Forgets every point (the factor is rebuilt by the next [`Self::refactor`]).
    pub fn clear(&mut self) {
        self.n = 0;
        self.chol.iter_mut().for_each(PackedCholesky::clear);
    }

    /// Stores `pt` at index i (no factor change).
    fn store(&mut self, i: usize, pt: Point<'_>) {
        let (d, cap) = (self.d, self.cap);
        self.x[i * d..(i + 1) * d].copy_from_slice(pt.x);
        for (o, (&y, &v)) in pt.y.iter().zip(pt.noise).enumerate() {
            self.y[o * cap + i] = y;
            self.noise[o * cap + i] = v;
        }
        self.stamp[i] = pt.stamp;
    }

    /// Appends a point without touching the factors (for [`Self::refactor`] after a split).
    pub fn push_raw(&mut self, pt: Point<'_>) {
        debug_assert!(self.n < self.cap);
        self.store(self.n, pt);
        self.n += 1;
    }

    /// Appends a point by a rank-one extension of every output's factor, O(p·N̄²). The
    /// caller checks the leaf is not full. On a numerical failure the leaf is refactorised.
    pub fn push(
        &mut self,
        kernels: &[ArdKernel],
        pt: Point<'_>,
        scratch: &mut Scratch,
    ) -> Result<(), CholeskyError> {
        let n = self.n;
        self.store(n, pt);
        let mut failed = false;
        for (o, k) in kernels.iter().enumerate() {
            let col = &mut scratch.col[..n];
            k.values_to_rows(&self.x[..n * self.d], pt.x, col);
            let c = k.sigma_f2() + pt.noise[o];
            if self.chol[o].extend_mut(col, c, 0.0).is_err() {
                failed = true;
                break;
            }
        }
        self.n = n + 1;
        if failed {
            return self.refactor(kernels);
        }
        self.solve_alpha();
        Ok(())
    }

    /// Replaces the oldest point by `pt` (O(p·N̄²) row replacements; a factor whose
    /// replacement lost precision is rebuilt). Returns the replaced index.
    pub fn replace_oldest(
        &mut self,
        kernels: &[ArdKernel],
        pt: Point<'_>,
        scratch: &mut Scratch,
    ) -> Result<usize, CholeskyError> {
        let n = self.n;
        let s = (0..n).min_by_key(|&i| self.stamp[i]).unwrap_or(0);
        self.store(s, pt);
        let mut failed = false;
        for (o, k) in kernels.iter().enumerate() {
            let col = &mut scratch.col[..n];
            k.values_to_rows(&self.x[..n * self.d], pt.x, col);
            col[s] = k.sigma_f2() + pt.noise[o];
            if self.chol[o]
                .replace_row_mut(s, col, REPLACE_MIN_PIVOT_RATIO, &mut scratch.row)
                .is_err()
            {
                failed = true;
            }
        }
        if failed {
            self.refactor(kernels)?;
        } else {
            self.solve_alpha();
        }
        Ok(s)
    }

    /// Factorises every output's K + diag(noise) from scratch, O(p·n³/3), and solves α.
    pub fn refactor(&mut self, kernels: &[ArdKernel]) -> Result<(), CholeskyError> {
        let (n, d, cap) = (self.n, self.d, self.cap);
        for (o, k) in kernels.iter().enumerate() {
            let (x, noise) = (&self.x, &self.noise[o * cap..]);
            self.chol[o].factor_mut(n, 0.0, |i, j| {
                let v = k.value(&x[i * d..(i + 1) * d], &x[j * d..(j + 1) * d]);
                if i == j { v + noise[i] } else { v }
            })?;
        }
        self.solve_alpha();
        Ok(())
    }

    fn solve_alpha(&mut self) {
        let (n, cap) = (self.n, self.cap);
        for (o, chol) in self.chol.iter().enumerate() {
            let a = &mut self.alpha[o * cap..o * cap + n];
            a.copy_from_slice(&self.y[o * cap..o * cap + n]);
            chol.solve_mut(a);
        }
    }

    /// Output o's mean and latent variance at x (the prior, 0 and σ_f², when empty).
    pub fn predict(&self, o: usize, k: &ArdKernel, x: &[f64], col: &mut [f64]) -> (f64, f64) {
        let n = self.n;
        if n == 0 {
            return (0.0, k.sigma_f2());
        }
        let col = &mut col[..n];
        k.values_to_rows(&self.x[..n * self.d], x, col);
        let mean = dot(col, &self.alpha[o * self.cap..o * self.cap + n]);
        self.chol[o].solve_lower_mut(col);
        (mean, (k.sigma_f2() - dot(col, col)).max(0.0))
    }
}
