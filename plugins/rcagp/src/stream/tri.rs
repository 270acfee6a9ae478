//! A Cholesky factor of the projected system matrix M on fixed-capacity packed storage:
//! full factorisation with the jitter schedule of spec A3.5, extension by one row and column
//! (a new singleton action), triangular solves and an allocation-free copy (what publishing
//! a snapshot needs, and what `gpn_gp_core::cholesky::PackedCholesky` does not offer).
//!
//! Storage: the lower triangle row by row (row r at offset r(r+1)/2). No allocation after
//! [`Tri::with_capacity`].

use gpn_gp_core::cholesky::dot;

use crate::error::RcagpError;

#[inline]
fn row_start(r: usize) -> usize {
    r * (r + 1) / 2
}

/// Diagonal jitters tried after a failed factorisation (spec A3.5), before ×10 steps up to
/// 1e−4·mean(diag).
const JITTERS: [f64; 3] = [1e-8, 1e-7, 1e-6];

/// L with L Lᵀ = M (+ jitter·I), packed. See the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct Tri {
    cap: usize,
    n: usize,
    data: Vec<f64>,
    jitter: f64,
}

impl Tri {
    /// An empty factor able to hold `capacity` rows. **Allocates.**
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            cap: capacity,
            n: 0,
            data: vec![0.0; row_start(capacity)],
            jitter: 0.0,
        }
    }

    /// Current size.
    pub fn len(&self) -> usize {
        self.n
    }

    /// The diagonal jitter the last full factorisation needed (0 if none).
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// Copies `other` into `self` (capacities must match). No allocation.
    pub fn copy_from(&mut self, other: &Tri) {
        debug_assert_eq!(self.cap, other.cap);
        let k = row_start(other.n);
        self.data[..k].copy_from_slice(&other.data[..k]);
        self.n = other.n;
        self.jitter = other.jitter;
    }

    fn try_factor(&mut self, n: usize, jitter: f64, entry: &impl Fn(usize, usize) -> f64) -> bool {
        self.n = 0;
        for i in 0..n {
            let ri = row_start(i);
            for j in 0..=i {
                self.data[ri + j] = entry(i, j);
            }
            self.data[ri + i] += jitter;
        }
        for i in 0..n {
            let ri = row_start(i);
            let (head, tail) = self.data.split_at_mut(ri);
            let row_i = &mut tail[..=i];
            for j in 0..i {
                let rj = row_start(j);
                let row_j = &head[rj..=rj + j];
                let s = row_i[j] - dot(&row_i[..j], &row_j[..j]);
                row_i[j] = s / row_j[j];
            }
            let s = row_i[i] - dot(&row_i[..i], &row_i[..i]);
            if !(s > 0.0 && s.is_finite()) {
                return false;
            }
            row_i[i] = s.sqrt();
        }
        self.n = n;
        true
    }

    /// Factorises the n×n matrix with entries `entry(i, j)` (j ≤ i is read), trying the
    /// jitter schedule 0, 1e−8, 1e−7, 1e−6, then ×10 up to 1e−4·mean(diag). No allocation.
    pub fn factor(
        &mut self,
        n: usize,
        entry: impl Fn(usize, usize) -> f64,
    ) -> Result<(), RcagpError> {
        if n > self.cap {
            return Err(RcagpError::Dimension {
                what: "factor size",
                expected: self.cap,
                found: n,
            });
        }
        if n == 0 {
            self.n = 0;
            self.jitter = 0.0;
            return Ok(());
        }
        let cap = 1e-4 * ((0..n).map(|a| entry(a, a)).sum::<f64>() / n as f64).abs();
        let mut jitter = 0.0;
        let mut k = 0;
        loop {
            if self.try_factor(n, jitter, &entry) {
                self.jitter = jitter;
                return Ok(());
            }
            jitter = if k < JITTERS.len() {
                JITTERS[k]
            } else if jitter < cap {
                (jitter * 10.0).min(cap)
            } else {
                return Err(RcagpError::NotPositiveDefinite { size: n });
            };
            k += 1;
        }
    }

    /// Appends a row and column: `row` holds M's new entries M[n, 0..n] on entry (it is
    /// overwritten with L⁻¹ of them) and `diag` is M[n, n]. Fails (leaving the factor
    /// unchanged in size) if the new pivot is not positive. No allocation.
    pub fn extend(&mut self, row: &mut [f64], diag: f64) -> Result<(), RcagpError> {
        let n = self.n;
        if n + 1 > self.cap {
            return Err(RcagpError::Dimension {
                what: "factor size",
                expected: self.cap,
                found: n + 1,
            });
        }
        debug_assert_eq!(row.len(), n);
        self.solve_lower_mut(row);
        let pivot = diag + self.jitter - dot(row, row);
        if !(pivot > 0.0 && pivot.is_finite()) {
            return Err(RcagpError::NotPositiveDefinite { size: n + 1 });
        }
        let rn = row_start(n);
        self.data[rn..rn + n].copy_from_slice(row);
        self.data[rn + n] = pivot.sqrt();
        self.n = n + 1;
        Ok(())
    }

    /// b ← L⁻¹ b. No allocation.
    #[inline]
    pub fn solve_lower_mut(&self, b: &mut [f64]) {
        debug_assert_eq!(b.len(), self.n);
        for i in 0..b.len() {
            let rs = row_start(i);
            let row = &self.data[rs..=rs + i];
            b[i] = (b[i] - dot(&row[..i], &b[..i])) / row[i];
        }
    }

    /// b ← L⁻ᵀ b. No allocation.
    pub fn solve_upper_mut(&self, b: &mut [f64]) {
        debug_assert_eq!(b.len(), self.n);
        for i in (0..b.len()).rev() {
            let rs = row_start(i);
            let row = &self.data[rs..=rs + i];
            let wi = b[i] / row[i];
            b[i] = wi;
            for (bk, &lik) in b[..i].iter_mut().zip(&row[..i]) {
                *bk -= lik * wi;
            }
        }
    }

    /// b ← M⁻¹ b. No allocation.
    pub fn solve_mut(&self, b: &mut [f64]) {
        self.solve_lower_mut(b);
        self.solve_upper_mut(b);
    }

    /// The packed rows in use (for persistence).
    pub fn packed(&self) -> &[f64] {
        &self.data[..row_start(self.n)]
    }

    /// Restores a factor of size `n` from packed rows and its jitter (for persistence).
    pub fn set_packed(&mut self, n: usize, packed: &[f64], jitter: f64) -> Result<(), RcagpError> {
        if n > self.cap || packed.len() != row_start(n) {
            return Err(RcagpError::Dimension {
                what: "packed factor",
                expected: row_start(n.min(self.cap)),
                found: packed.len(),
            });
        }
        self.data[..packed.len()].copy_from_slice(packed);
        self.n = n;
        self.jitter = jitter;
        Ok(())
    }
}
