//! Small dense linear algebra on row-major square matrices held in slices: Cholesky,
//! triangular solves (vector and multi-column), the O(n²) rank-one Cholesky update and
//! log-determinants.
//!
//! Why our own: the hot path needs in-place, allocation-free routines on preallocated
//! buffers (nalgebra's are generic over storage and allocate on several paths). **No
//! function here allocates.** A lower factor L of an n×n matrix lives in the lower
//! triangle of an n×n row-major slice; the strict upper triangle is zero.

use gpn_gp_core::cholesky::dot;

/// Cholesky failure: the matrix is not numerically positive definite at `row`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NotPositiveDefinite {
    /// Row of the failed pivot.
    pub row: usize,
    /// The pivot before the square root.
    pub pivot: f64,
}

/// Overwrite the n×n symmetric matrix `a` (lower triangle read) with its lower Cholesky
/// factor L (A = L·Lᵀ), zeroing the strict upper triangle.
pub fn cholesky_in_place(a: &mut [f64], n: usize) -> Result<(), NotPositiveDefinite> {
    debug_assert!(a.len() >= n * n);
    for i in 0..n {
        for j in 0..=i {
            let (ri, rj) = (i * n, j * n);
            let s = a[ri + j] - dot(&a[ri..ri + j], &a[rj..rj + j]);
            if i == j {
                if !(s > 0.0 && s.is_finite()) {
                    return Err(NotPositiveDefinite { row: i, pivot: s });
                }
                a[ri + i] = s.sqrt();
            } else {
                a[ri + j] = s / a[rj + j];
            }
        }
        for j in i + 1..n {
            a[i * n + j] = 0.0;
        }
    }
    Ok(())
}

/// b ← L⁻¹ b (forward substitution).
pub fn solve_lower(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let row = &l[i * n..i * n + i];
        b[i] = (b[i] - dot(row, &b[..i])) / l[i * n + i];
    }
}

/// b ← L⁻ᵀ b (back substitution, row-oriented axpys).
pub fn solve_lower_t(l: &[f64], n: usize, b: &mut [f64]) {
    for i in (0..n).rev() {
        b[i] /= l[i * n + i];
        let xi = b[i];
        let row = &l[i * n..i * n + i];
        for (bk, &lik) in b[..i].iter_mut().zip(row) {
            *bk -= lik * xi;
        }
    }
}

/// b ← (L Lᵀ)⁻¹ b.
pub fn solve_spd(l: &[f64], n: usize, b: &mut [f64]) {
    solve_lower(l, n, b);
    solve_lower_t(l, n, b);
}

/// X ← L⁻¹ X for X of n rows and `cols` columns, row-major.
pub fn solve_lower_mat(l: &[f64], n: usize, x: &mut [f64], cols: usize) {
    for i in 0..n {
        let (done, rest) = x.split_at_mut(i * cols);
        let xi = &mut rest[..cols];
        for k in 0..i {
            let lik = l[i * n + k];
            if lik != 0.0 {
                let xk = &done[k * cols..(k + 1) * cols];
                for (a, &b) in xi.iter_mut().zip(xk) {
                    *a -= lik * b;
                }
            }
        }
        let inv = 1.0 / l[i * n + i];
        for a in xi.iter_mut() {
            *a *= inv;
        }
    }
}

/// X ← L⁻ᵀ X for X of n rows and `cols` columns, row-major.
pub fn solve_lower_t_mat(l: &[f64], n: usize, x: &mut [f64], cols: usize) {
    for i in (0..n).rev() {
        let inv = 1.0 / l[i * n + i];
        let (head, tail) = x.split_at_mut(i * cols);
        let xi = &mut tail[..cols];
        for a in xi.iter_mut() {
            *a *= inv;
        }
        for k in 0..i {
            let lik = l[i * n + k];
            if lik != 0.0 {
                let xk = &mut head[k * cols..(k + 1) * cols];
                for (a, &b) in xk.iter_mut().zip(xi.iter()) {
                    *a -= lik * b;
                }
            }
        }
    }
}

/// L ← chol(L Lᵀ + x xᵀ) in O(n²); `x` is used as scratch (destroyed).
pub fn cholesky_rank1_update(l: &mut [f64], n: usize, x: &mut [f64]) {
    for k in 0..n {
        let lkk = l[k * n + k];
        let xk = x[k];
        if xk == 0.0 {
            continue;
        }
        let r = lkk.hypot(xk);
        let c = r / lkk;
        let s = xk / lkk;
        l[k * n + k] = r;
        for i in k + 1..n {
            let lik = (l[i * n + k] + s * x[i]) / c;
            x[i] = c * x[i] - s * lik;
            l[i * n + k] = lik;
        }
    }
}

/// ln det(L Lᵀ) = 2 Σ ln L_ii.
pub fn ln_det(l: &[f64], n: usize) -> f64 {
    2.0 * (0..n).map(|i| l[i * n + i].ln()).sum::<f64>()
}

/// y ← A x for an n×m row-major A.
pub fn mat_vec(a: &[f64], n: usize, m: usize, x: &[f64], y: &mut [f64]) {
    for (i, yi) in y.iter_mut().enumerate().take(n) {
        *yi = dot(&a[i * m..(i + 1) * m], &x[..m]);
    }
}

/// C ← X Xᵀ (n×n, full) for X of n rows and `cols` columns, row-major.
pub fn gram_rows(x: &[f64], n: usize, cols: usize, c: &mut [f64]) {
    for i in 0..n {
        for j in 0..=i {
            let v = dot(&x[i * cols..(i + 1) * cols], &x[j * cols..(j + 1) * cols]);
            c[i * n + j] = v;
            c[j * n + i] = v;
        }
    }
}

/// Fill the strict upper triangle of the n×n `a` from its lower triangle.
pub fn symmetrize_from_lower(a: &mut [f64], n: usize) {
    for i in 0..n {
        for j in 0..i {
            a[j * n + i] = a[i * n + j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(n: usize) -> Vec<f64> {
        let mut x = vec![0.0; n * (n + 2)];
        for (k, v) in x.iter_mut().enumerate() {
            *v = ((k * 37 % 101) as f64 / 50.0 - 1.0) * 0.9;
        }
        let mut a = vec![0.0; n * n];
        gram_rows(&x, n, n + 2, &mut a);
        for i in 0..n {
            a[i * n + i] += 0.5;
        }
        a
    }

    #[test]
    fn factor_solve_and_update_agree_with_recomputation() {
        let n = 7;
        let a = spd(n);
        let mut l = a.clone();
        cholesky_in_place(&mut l, n).unwrap();
        let b: Vec<f64> = (0..n).map(|i| i as f64 - 2.5).collect();
        let mut x = b.clone();
        solve_spd(&l, n, &mut x);
        let mut ax = vec![0.0; n];
        mat_vec(&a, n, n, &x, &mut ax);
        for (u, v) in ax.iter().zip(&b) {
            assert!((u - v).abs() < 1e-10);
        }
        // Rank-one update against refactorisation.
        let v: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
        let mut a2 = a.clone();
        for i in 0..n {
            for j in 0..n {
                a2[i * n + j] += v[i] * v[j];
            }
        }
        let mut l2 = a2.clone();
        cholesky_in_place(&mut l2, n).unwrap();
        let mut scratch = v.clone();
        cholesky_rank1_update(&mut l, n, &mut scratch);
        for (p, q) in l.iter().zip(&l2) {
            assert!((p - q).abs() < 1e-12);
        }
        // Multi-column solves against vector solves.
        let cols = 3;
        let mut xm: Vec<f64> = (0..n * cols).map(|k| (k as f64 * 0.31).cos()).collect();
        let orig = xm.clone();
        solve_lower_mat(&l2, n, &mut xm, cols);
        solve_lower_t_mat(&l2, n, &mut xm, cols);
        for c in 0..cols {
            let mut col: Vec<f64> = (0..n).map(|i| orig[i * cols + c]).collect();
            solve_spd(&l2, n, &mut col);
            for i in 0..n {
                assert!((col[i] - xm[i * cols + c]).abs() < 1e-10);
            }
        }
        assert!(cholesky_in_place(&mut [1.0, 2.0, 2.0, 1.0], 2).is_err());
    }
}
