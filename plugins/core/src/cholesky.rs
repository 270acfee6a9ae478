//! Cholesky factors on fixed-capacity packed storage: full factorisation, rank-one
//! extension (append a row and column) and in-place triangular solves.
//!
//! Shaped like nalgebra's `Cholesky`: the constructors return `Result`, the hot path uses
//! in-place `_mut` methods. **Allocation:** only [`PackedCholesky::with_capacity`],
//! [`PackedCholesky::from_matrix`] and [`PackedCholesky::to_matrix`] allocate. Every other
//! method works inside the buffer reserved at construction.
//!
//! Storage: the lower triangle L of an n×n factor, n ≤ capacity, packed row by row
//! (row i holds L_i0 … L_ii at offset i(i+1)/2). Rows are contiguous, so the forward solve,
//! the back solve (column-oriented) and the rank-one extension all stream through memory.

use nalgebra::DMatrix;

/// Errors from factorising or extending.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CholeskyError {
    /// A pivot was not positive (or not finite): the matrix is not numerically SPD.
    #[error("matrix not positive definite: pivot {pivot} at row {row}")]
    NotPositiveDefinite {
        /// Row of the failed pivot.
        row: usize,
        /// The pivot value before the square root.
        pivot: f64,
    },
    /// The requested size exceeds the reserved capacity.
    #[error("factor size {requested} exceeds capacity {capacity}")]
    Capacity {
        /// Size asked for.
        requested: usize,
        /// Capacity reserved at construction.
        capacity: usize,
    },
    /// Packed rows given to [`PackedCholesky::set_packed`] of the wrong length for the size.
    #[error("packed factor of size {size} needs {expected} entries, found {found}")]
    PackedLength {
        /// Factor size n.
        size: usize,
        /// n(n+1)/2.
        expected: usize,
        /// Entries given.
        found: usize,
    },
    /// The matrix given to [`PackedCholesky::from_matrix`] was not square.
    #[error("matrix is {rows}×{cols}, not square")]
    NotSquare {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
}

/// Dot product of two equal-length slices with four independent accumulators.
#[inline(always)]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let n4 = a.len() / 4 * 4;
    let (a4, ar) = a.split_at(n4);
    let (b4, br) = b.split_at(n4);
    let mut s = [0.0f64; 4];
    for (x, y) in a4.chunks_exact(4).zip(b4.chunks_exact(4)) {
        s[0] += x[0] * y[0];
        s[1] += x[1] * y[1];
        s[2] += x[2] * y[2];
        s[3] += x[3] * y[3];
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for (x, y) in ar.iter().zip(br) {
        t += x * y;
    }
    t
}

/// Offset of row i in a row-packed lower triangle.
#[inline]
pub fn row_start(i: usize) -> usize {
    i * (i + 1) / 2
}

/// A lower-triangular Cholesky factor L (K = L·Lᵀ) of size n ≤ capacity, packed by rows
/// into a buffer reserved once.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedCholesky {
    cap: usize,
    n: usize,
    data: Vec<f64>,
    /// 1/L_ii, so that the solves multiply: a division's latency on their serial chain
    /// was most of a triangular solve's time.
    inv_diag: Vec<f64>,
}

impl PackedCholesky {
    /// An empty factor (n = 0) able to grow to `capacity` rows. **Allocates**
    /// capacity·(capacity+1)/2 doubles.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            cap: capacity,
            n: 0,
            data: vec![0.0; row_start(capacity)],
            inv_diag: vec![0.0; capacity],
        }
    }

    /// Factorises a dense SPD matrix (plus `jitter`·I). **Allocates** a factor whose
    /// capacity is the matrix size.
    pub fn from_matrix(k: &DMatrix<f64>, jitter: f64) -> Result<Self, CholeskyError> {
        if k.nrows() != k.ncols() {
            return Err(CholeskyError::NotSquare {
                rows: k.nrows(),
                cols: k.ncols(),
            });
        }
        let mut f = Self::with_capacity(k.nrows());
        f.factor_mut(k.nrows(), jitter, |i, j| k[(i, j)])?;
        Ok(f)
    }

    /// Maximum size.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Current size n.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when n = 0.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Drops all rows (n = 0). No allocation.
    pub fn clear(&mut self) {
        self.n = 0;
    }

    /// Bytes of the reserved buffer.
    pub fn memory_bytes(&self) -> usize {
        (self.data.len() + self.inv_diag.len()) * std::mem::size_of::<f64>()
    }

    /// Row i of L: the entries L_i0 … L_ii (length i + 1).
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        debug_assert!(i < self.n);
        let s = row_start(i);
        &self.data[s..s + i + 1]
    }

    /// L_ij (zero above the diagonal).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        if j > i {
            0.0
        } else {
            self.data[row_start(i) + j]
        }
    }

    /// Full factorisation in place: K_ij = `k(i, j)` for j ≤ i (only the lower triangle is
    /// read), plus `jitter` on the diagonal. No allocation. On error the factor is left
    /// empty (n = 0).
    pub fn factor_mut(
        &mut self,
        n: usize,
        jitter: f64,
        mut k: impl FnMut(usize, usize) -> f64,
    ) -> Result<(), CholeskyError> {
        if n > self.cap {
            return Err(CholeskyError::Capacity {
                requested: n,
                capacity: self.cap,
            });
        }
        self.n = 0;
        for i in 0..n {
            let ri = row_start(i);
            for j in 0..=i {
                self.data[ri + j] = k(i, j);
            }
            self.data[ri + i] += jitter;
        }
        // Cholesky–Banachiewicz, row by row, in place.
        for i in 0..n {
            let ri = row_start(i);
            let (head, tail) = self.data.split_at_mut(ri);
            let row_i = &mut tail[..=i];
            for j in 0..i {
                let rj = row_start(j);
                let s = row_i[j] - dot(&row_i[..j], &head[rj..rj + j]);
                row_i[j] = s * self.inv_diag[j];
            }
            let s = row_i[i] - dot(&row_i[..i], &row_i[..i]);
            if !(s > 0.0 && s.is_finite()) {
                return Err(CholeskyError::NotPositiveDefinite { row: i, pivot: s });
            }
            row_i[i] = s.sqrt();
            self.inv_diag[i] = 1.0 / row_i[i];
        }
        self.n = n;
        Ok(())
    }

    /// Rank-one extension: append the row and column of a new point to K.
    ///
    /// `b` holds K's new off-diagonal column [K_0n … K_(n−1)n] on entry and l = L⁻¹b on
    /// exit. `c` is the new diagonal entry K_nn. The new pivot is
    /// d = sqrt(max(c − lᵀl, `pivot_floor`)), and L becomes [[L, 0], [lᵀ, d]].
    /// Returns d. No allocation.
    pub fn extend_mut(
        &mut self,
        b: &mut [f64],
        c: f64,
        pivot_floor: f64,
    ) -> Result<f64, CholeskyError> {
        self.solve_lower_mut(b);
        self.extend_with_solved_mut(b, c, pivot_floor)
    }

    /// Rank-one extension when l = L⁻¹b is already known (e.g. cached from a prediction,
    /// where it is the v of the predictive variance). See [`Self::extend_mut`].
    pub fn extend_with_solved_mut(
        &mut self,
        l: &[f64],
        c: f64,
        pivot_floor: f64,
    ) -> Result<f64, CholeskyError> {
        let n = self.n;
        if n + 1 > self.cap {
            return Err(CholeskyError::Capacity {
                requested: n + 1,
                capacity: self.cap,
            });
        }
        debug_assert_eq!(l.len(), n);
        let d2 = c - dot(l, l);
        if d2.is_nan() || !c.is_finite() {
            return Err(CholeskyError::NotPositiveDefinite { row: n, pivot: d2 });
        }
        let d = d2.max(pivot_floor).sqrt();
        if d.is_nan() || d <= 0.0 {
            return Err(CholeskyError::NotPositiveDefinite { row: n, pivot: d2 });
        }
        let rn = row_start(n);
        self.data[rn..rn + n].copy_from_slice(l);
        self.data[rn + n] = d;
        self.inv_diag[n] = 1.0 / d;
        self.n = n + 1;
        Ok(d)
    }

    /// Replaces row and column s of the factored matrix A in O(n²) instead of refactoring
    /// in O(n³): afterwards L·Lᵀ = A′, where A′ equals A except that row and column s are
    /// `a_col` (length n, the new diagonal entry at `a_col[s]`).
    ///
    /// With L partitioned at s into blocks 1 (rows < s), 2 (row s) and 3 (rows > s), the
    /// leading block L₁₁ does not change; row s is l₂₁ = L₁₁⁻¹a₁, l₂₂ = √(a₂₂ − l₂₁ᵀl₂₁);
    /// column s below it is l₃₂ = (a₃ − L₃₁l₂₁)/l₂₂; and the trailing block must satisfy
    /// L₃₃′L₃₃′ᵀ = L₃₃L₃₃ᵀ + l₃₂l₃₂ᵀ − l₃₂′l₃₂′ᵀ, a rank-one update with the old column
    /// and a downdate with the new one (Givens form, one sweep over the columns).
    ///
    /// `scratch` needs 2(n − s − 1) entries. A pivot of the new row or of the downdate
    /// that is not above `min_pivot_ratio`·(its old value)² fails with
    /// [`CholeskyError::NotPositiveDefinite`]; the factor is then **invalid** and must be
    /// rebuilt (e.g. with [`Self::factor_mut`]). No allocation.
    pub fn replace_row_mut(
        &mut self,
        s: usize,
        a_col: &[f64],
        min_pivot_ratio: f64,
        scratch: &mut [f64],
    ) -> Result<(), CholeskyError> {
        let n = self.n;
        debug_assert!(s < n && a_col.len() == n);
        let m = n - s - 1;
        let (old, new) = scratch[..2 * m].split_at_mut(m);
        // Row s: l₂₁ by forward substitution with L₁₁, then the pivot.
        let rs = row_start(s);
        for (j, &a) in a_col[..s].iter().enumerate() {
            let rj = row_start(j);
            let t = a - dot(&self.data[rj..rj + j], &self.data[rs..rs + j]);
            self.data[rs + j] = t * self.inv_diag[j];
        }
        let old_pivot = self.data[rs + s];
        let p2 = a_col[s] - dot(&self.data[rs..rs + s], &self.data[rs..rs + s]);
        if !(p2 > min_pivot_ratio * old_pivot * old_pivot && p2.is_finite()) {
            return Err(CholeskyError::NotPositiveDefinite { row: s, pivot: p2 });
        }
        let pivot = p2.sqrt();
        let inv_pivot = 1.0 / pivot;
        self.data[rs + s] = pivot;
        self.inv_diag[s] = inv_pivot;
        // Column s below row s: keep the old values, write the new.
        for (k, i) in (s + 1..n).enumerate() {
            let ri = row_start(i);
            let (head, tail) = self.data.split_at_mut(ri);
            old[k] = tail[s];
            let t = a_col[i] - dot(&tail[..s], &head[rs..rs + s]);
            new[k] = t * inv_pivot;
            tail[s] = new[k];
        }
        // Trailing block: + old·oldᵀ − new·newᵀ, column by column.
        for k in 0..m {
            let kk = row_start(s + 1 + k) + s + 1 + k;
            let l = self.data[kk];
            let up = l.hypot(old[k]);
            let (cu, su) = (up / l, old[k] / l);
            let d2 = (up - new[k]) * (up + new[k]);
            if !(d2 > min_pivot_ratio * l * l && d2.is_finite()) {
                return Err(CholeskyError::NotPositiveDefinite {
                    row: s + 1 + k,
                    pivot: d2,
                });
            }
            let down = d2.sqrt();
            let (cd, sd) = (down / up, new[k] / up);
            self.data[kk] = down;
            self.inv_diag[s + 1 + k] = 1.0 / down;
            for i in k + 1..m {
                let ik = row_start(s + 1 + i) + s + 1 + k;
                let lu = (self.data[ik] + su * old[i]) / cu;
                old[i] = cu * old[i] - su * lu;
                let ld = (lu - sd * new[i]) / cd;
                new[i] = cd * new[i] - sd * ld;
                self.data[ik] = ld;
            }
        }
        Ok(())
    }

    /// Keeps the leading `n` rows and columns (no change if `n` ≥ the current size): the
    /// factor of K's leading n×n block. No allocation.
    pub fn truncate(&mut self, n: usize) {
        self.n = self.n.min(n);
    }

    /// Forward substitution in place: b ← L⁻¹ b (b has length n). No allocation.
    #[inline]
    pub fn solve_lower_mut(&self, b: &mut [f64]) {
        debug_assert_eq!(b.len(), self.n);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { self.solve_lower_avx2(b) };
        }
        self.solve_lower_rows(b);
    }

    /// [`Self::solve_lower_rows`] compiled for AVX2: the same operations in the same order
    /// per lane (no FMA contraction in Rust), so the same bits.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn solve_lower_avx2(&self, b: &mut [f64]) {
        for i in 0..b.len() {
            let rs = row_start(i);
            let row = &self.data[rs..=rs + i];
            let s = b[i] - crate::avx2::dot(&row[..i], &b[..i]);
            b[i] = s * self.inv_diag[i];
        }
    }

    #[inline(always)]
    fn solve_lower_rows(&self, b: &mut [f64]) {
        for i in 0..b.len() {
            let rs = row_start(i);
            let row = &self.data[rs..=rs + i];
            let s = b[i] - dot(&row[..i], &b[..i]);
            b[i] = s * self.inv_diag[i];
        }
    }

    /// Back substitution in place: b ← L⁻ᵀ b (b has length n). Column-oriented so that it
    /// reads rows of the packed storage. No allocation.
    #[inline]
    pub fn solve_upper_mut(&self, b: &mut [f64]) {
        debug_assert_eq!(b.len(), self.n);
        for i in (0..b.len()).rev() {
            let rs = row_start(i);
            let row = &self.data[rs..=rs + i];
            let wi = b[i] * self.inv_diag[i];
            b[i] = wi;
            for (bk, &lik) in b[..i].iter_mut().zip(&row[..i]) {
                *bk -= lik * wi;
            }
        }
    }

    /// b ← K⁻¹ b = L⁻ᵀ L⁻¹ b by two triangular solves. No allocation.
    pub fn solve_mut(&self, b: &mut [f64]) {
        self.solve_lower_mut(b);
        self.solve_upper_mut(b);
    }

    /// ln det K = 2 Σ ln L_ii.
    pub fn ln_det(&self) -> f64 {
        (0..self.n)
            .map(|i| self.data[row_start(i) + i].ln())
            .sum::<f64>()
            * 2.0
    }

    /// The rows in use, packed (row i at offset i(i+1)/2): what [`Self::set_packed`] takes
    /// back, e.g. to save and restore a factor.
    pub fn packed(&self) -> &[f64] {
        &self.data[..row_start(self.n)]
    }

    /// Restores a factor of size `n` from rows packed as [`Self::packed`] gives them. No
    /// allocation. On error the factor is unchanged.
    pub fn set_packed(&mut self, n: usize, packed: &[f64]) -> Result<(), CholeskyError> {
        if n > self.cap {
            return Err(CholeskyError::Capacity {
                requested: n,
                capacity: self.cap,
            });
        }
        if packed.len() != row_start(n) {
            return Err(CholeskyError::PackedLength {
                size: n,
                expected: row_start(n),
                found: packed.len(),
            });
        }
        self.data[..packed.len()].copy_from_slice(packed);
        for i in 0..n {
            self.inv_diag[i] = 1.0 / packed[row_start(i) + i];
        }
        self.n = n;
        Ok(())
    }

    /// Copies another factor of the same capacity into this one, without allocating (unlike
    /// `clone`), e.g. to publish a snapshot.
    pub fn copy_from(&mut self, other: &Self) {
        debug_assert_eq!(self.cap, other.cap);
        let used = row_start(other.n);
        self.data[..used].copy_from_slice(&other.data[..used]);
        self.inv_diag[..other.n].copy_from_slice(&other.inv_diag[..other.n]);
        self.n = other.n;
    }

    /// L as a dense n×n matrix. **Allocates**; for tests and diagnostics.
    pub fn to_matrix(&self) -> DMatrix<f64> {
        DMatrix::from_fn(self.n, self.n, |i, j| self.get(i, j))
    }

    /// Swaps contents with another factor of the same capacity (used to commit a
    /// factorisation done in scratch space). No allocation.
    pub fn swap(&mut self, other: &mut Self) {
        debug_assert_eq!(self.cap, other.cap);
        std::mem::swap(self, other);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factor_of_3() -> PackedCholesky {
        let k = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
        let mut f = PackedCholesky::with_capacity(4);
        f.factor_mut(3, 0.0, |i, j| k[(i, j)]).expect("SPD");
        f
    }

    #[test]
    fn packed_rows_restore_and_copy_the_same_factor() {
        let f = factor_of_3();
        assert_eq!(f.packed().len(), 6);
        let mut g = PackedCholesky::with_capacity(4);
        g.set_packed(3, f.packed()).expect("fits");
        assert_eq!(g.to_matrix(), f.to_matrix());
        let mut h = PackedCholesky::with_capacity(4);
        h.copy_from(&f);
        assert_eq!(h.packed(), f.packed());
        assert_eq!(h.len(), 3);
    }

    #[test]
    fn set_packed_rejects_a_wrong_size_and_keeps_the_factor() {
        let f = factor_of_3();
        let mut g = factor_of_3();
        assert!(matches!(
            g.set_packed(5, &[0.0; 15]),
            Err(CholeskyError::Capacity { requested: 5, .. })
        ));
        assert!(matches!(
            g.set_packed(2, &[1.0; 4]),
            Err(CholeskyError::PackedLength {
                size: 2,
                expected: 3,
                found: 4
            })
        ));
        assert_eq!(g, f);
    }

    /// An SE kernel matrix of points on a line plus noise: SPD, with cond ~1e3.
    fn kernel_matrix(xs: &[f64]) -> DMatrix<f64> {
        let n = xs.len();
        DMatrix::from_fn(n, n, |i, j| {
            let d = xs[i] - xs[j];
            (-0.5 * d * d).exp() + if i == j { 0.01 } else { 0.0 }
        })
    }

    #[test]
    fn replacing_a_row_gives_the_factor_of_the_new_matrix() {
        let xs: Vec<f64> = (0..12).map(|i| 0.37 * i as f64 - 1.9).collect();
        let a = kernel_matrix(&xs);
        for s in [0, 5, 11] {
            let mut ys = xs.clone();
            ys[s] = 0.41;
            let b = kernel_matrix(&ys);
            let mut f = PackedCholesky::with_capacity(12);
            f.factor_mut(12, 0.0, |i, j| a[(i, j)]).expect("SPD");
            let col: Vec<f64> = (0..12).map(|i| b[(i, s)]).collect();
            let mut scratch = [0.0; 24];
            f.replace_row_mut(s, &col, 1e-12, &mut scratch)
                .expect("the new matrix is SPD");
            let mut g = PackedCholesky::with_capacity(12);
            g.factor_mut(12, 0.0, |i, j| b[(i, j)]).expect("SPD");
            let err = (f.to_matrix() - g.to_matrix()).amax();
            assert!(err < 1e-12, "row {s}: factors differ by {err:e}");
        }
    }

    #[test]
    fn a_replacement_that_loses_definiteness_is_refused() {
        // Row 1 made equal to row 0: the new matrix is singular.
        let a = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
        let mut f = PackedCholesky::with_capacity(3);
        f.factor_mut(3, 0.0, |i, j| a[(i, j)]).expect("SPD");
        let mut scratch = [0.0; 4];
        let r = f.replace_row_mut(1, &[4.0, 4.0, 0.5], 1e-12, &mut scratch);
        assert!(matches!(
            r,
            Err(CholeskyError::NotPositiveDefinite { row: 1, .. })
        ));
    }

    #[test]
    fn triangular_solves_match_a_dense_solve_for_every_size() {
        for n in 1..=11 {
            let xs: Vec<f64> = (0..n).map(|i| 0.45 * i as f64).collect();
            let a = kernel_matrix(&xs);
            let f = PackedCholesky::from_matrix(&a, 0.0).expect("SPD");
            let rhs: Vec<f64> = (0..n).map(|i| (1.7 * i as f64).sin()).collect();
            let mut lower = rhs.clone();
            f.solve_lower_mut(&mut lower);
            let back = f.to_matrix() * nalgebra::DVector::from_vec(lower);
            let mut full = rhs.clone();
            f.solve_mut(&mut full);
            let back_full = &a * nalgebra::DVector::from_vec(full);
            for i in 0..n {
                assert!((back[i] - rhs[i]).abs() < 1e-12, "n {n}: L·(L⁻¹b) row {i}");
                assert!(
                    (back_full[i] - rhs[i]).abs() < 1e-9,
                    "n {n}: K·(K⁻¹b) row {i}"
                );
            }
        }
    }

    /// The AVX2 copy of the forward solve and the portable one give the same bits.
    #[test]
    fn the_avx2_forward_solve_has_the_same_bits() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let xs: Vec<f64> = (0..23).map(|i| 0.31 * i as f64).collect();
            let f = PackedCholesky::from_matrix(&kernel_matrix(&xs), 0.0).expect("SPD");
            let rhs: Vec<f64> = (0..23).map(|i| (0.9 * i as f64).sin()).collect();
            let (mut portable, mut wide) = (rhs.clone(), rhs);
            f.solve_lower_rows(&mut portable);
            // SAFETY: AVX2 is supported, checked above.
            unsafe { f.solve_lower_avx2(&mut wide) };
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&portable), bits(&wide));
        }
    }
}
