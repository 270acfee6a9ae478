//! A Cholesky factor of the projected system matrix M: `gpn_gp_core`'s
//! [`PackedCholesky`] (packed rows, triangular solves, allocation-free copy and restore)
//! plus what RCaGP's spec adds to it: the jitter schedule of spec A3.5 for a full
//! factorisation, and the same jitter on the pivot when a row and column (a new singleton
//! action) are appended.
//!
//! No allocation after [`Tri::with_capacity`].

use gpn_gp_core::cholesky::PackedCholesky;

use crate::error::RcagpError;

/// Diagonal jitters tried after a failed factorisation (spec A3.5), before ×10 steps up to
/// 1e−4·mean(diag).
const JITTERS: [f64; 3] = [1e-8, 1e-7, 1e-6];

/// A row replacement whose pivot falls below this fraction of its old square fails (and the
/// caller refactors from scratch) rather than carry a factor that lost its precision.
const REPLACE_MIN_PIVOT_RATIO: f64 = 1e-8;

/// L with L Lᵀ = M (+ jitter·I), packed. See the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct Tri {
    factor: PackedCholesky,
    jitter: f64,
}

impl Tri {
    /// An empty factor able to hold `capacity` rows. **Allocates.**
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            factor: PackedCholesky::with_capacity(capacity),
            jitter: 0.0,
        }
    }

    /// Current size.
    pub fn len(&self) -> usize {
        self.factor.len()
    }

    /// The diagonal jitter the last full factorisation needed (0 if none).
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// Copies `other` into `self` (capacities must match). No allocation.
    pub fn copy_from(&mut self, other: &Tri) {
        self.factor.copy_from(&other.factor);
        self.jitter = other.jitter;
    }

    /// Factorises the n×n matrix with entries `entry(i, j)` (j ≤ i is read), trying the
    /// jitter schedule 0, 1e−8, 1e−7, 1e−6, then ×10 up to 1e−4·mean(diag). No allocation.
    pub fn factor(
        &mut self,
        n: usize,
        entry: impl Fn(usize, usize) -> f64,
    ) -> Result<(), RcagpError> {
        let capacity = self.factor.capacity();
        if n > capacity {
            return Err(RcagpError::Dimension {
                what: "factor size",
                expected: capacity,
                found: n,
            });
        }
        if n == 0 {
            self.factor.clear();
            self.jitter = 0.0;
            return Ok(());
        }
        let cap = 1e-4 * ((0..n).map(|a| entry(a, a)).sum::<f64>() / n as f64).abs();
        let mut jitter = 0.0;
        let mut k = 0;
        loop {
            if self.factor.factor_mut(n, jitter, &entry).is_ok() {
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
    /// overwritten with L⁻¹ of them) and `diag` is M[n, n]; the pivot gets the jitter of the
    /// last full factorisation. Fails (leaving the factor unchanged in size) if the new pivot
    /// is not positive. No allocation.
    pub fn extend(&mut self, row: &mut [f64], diag: f64) -> Result<(), RcagpError> {
        let n = self.len();
        let capacity = self.factor.capacity();
        if n + 1 > capacity {
            return Err(RcagpError::Dimension {
                what: "factor size",
                expected: capacity,
                found: n + 1,
            });
        }
        debug_assert_eq!(row.len(), n);
        self.factor.solve_lower_mut(row);
        // Pivot floor 0: a pivot that is not positive and finite fails, as the spec asks.
        self.factor
            .extend_with_solved_mut(row, diag + self.jitter, 0.0)
            .map_err(|_| RcagpError::NotPositiveDefinite { size: n + 1 })?;
        Ok(())
    }

    /// Keeps the leading `n` rows and columns (drops the newest actions). No allocation.
    pub fn truncate(&mut self, n: usize) {
        self.factor.truncate(n);
    }

    /// Replaces row and column `s` by M's new column `col` (length = the current size; the
    /// pivot `col[s]` gets the jitter of the last full factorisation), in O(n²). On failure
    /// the factor is invalid and must be rebuilt with [`Tri::factor`]. `scratch` needs
    /// 2(n − s − 1) entries. No allocation.
    pub fn replace(
        &mut self,
        s: usize,
        col: &mut [f64],
        scratch: &mut [f64],
    ) -> Result<(), RcagpError> {
        let n = self.len();
        col[s] += self.jitter;
        self.factor
            .replace_row_mut(s, col, REPLACE_MIN_PIVOT_RATIO, scratch)
            .map_err(|_| RcagpError::NotPositiveDefinite { size: n })
    }

    /// b ← L⁻¹ b. No allocation.
    #[inline]
    pub fn solve_lower_mut(&self, b: &mut [f64]) {
        self.factor.solve_lower_mut(b);
    }

    /// b ← M⁻¹ b. No allocation.
    pub fn solve_mut(&self, b: &mut [f64]) {
        self.factor.solve_mut(b);
    }

    /// The packed rows in use (for persistence).
    pub fn packed(&self) -> &[f64] {
        self.factor.packed()
    }

    /// Restores a factor of size `n` from packed rows and its jitter (for persistence).
    pub fn set_packed(&mut self, n: usize, packed: &[f64], jitter: f64) -> Result<(), RcagpError> {
        let fits = n.min(self.factor.capacity());
        self.factor
            .set_packed(n, packed)
            .map_err(|_| RcagpError::Dimension {
                what: "packed factor",
                expected: fits * (fits + 1) / 2,
                found: packed.len(),
            })?;
        self.jitter = jitter;
        Ok(())
    }
}
