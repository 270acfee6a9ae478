//! Hand-vectorised AVX2 copies of the two hot reductions: the dot product of the
//! triangular solves and the kernel's scaled squared distance.
//!
//! Each does, per lane, the same multiplications and additions in the same order as its
//! portable twin (four partial sums s_k over the blocks of four, reduced as
//! (s0 + s1) + (s2 + s3), then the tail in order), so the results have the same bits on
//! every CPU. Rust never contracts a multiply and an add into an FMA, here or there. The
//! compiler's own vectorisation of the portable loops keeps the four sums in two half
//! registers and shuffles them on every step; these keep them in one register.

use std::arch::x86_64::{
    __m256d, _mm_add_sd, _mm_cvtsd_f64, _mm256_add_pd, _mm256_castpd256_pd128,
    _mm256_extractf128_pd, _mm256_hadd_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd,
    _mm256_sub_pd,
};

/// Loads the four lanes of a block.
#[inline]
#[target_feature(enable = "avx2")]
fn load4(block: &[f64; 4]) -> __m256d {
    // SAFETY: `block` is four f64; the load is unaligned.
    unsafe { _mm256_loadu_pd(block.as_ptr()) }
}

/// The blocks of four of `s[..n4]` (n4 a multiple of four).
#[inline(always)]
fn blocks(s: &[f64], n4: usize) -> &[[f64; 4]] {
    s[..n4].as_chunks::<4>().0
}

/// (s0 + s1) + (s2 + s3) of the four lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn reduce(acc: __m256d) -> f64 {
    // hadd(a, a) = (s0 + s1, s0 + s1, s2 + s3, s2 + s3).
    let h = _mm256_hadd_pd(acc, acc);
    _mm_cvtsd_f64(_mm_add_sd(
        _mm256_castpd256_pd128(h),
        _mm256_extractf128_pd::<1>(h),
    ))
}

/// Σ a_i·b_i, as [`crate::cholesky::dot`].
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let n4 = n / 4 * 4;
    let mut acc = _mm256_setzero_pd();
    for (x, y) in blocks(a, n4).iter().zip(blocks(b, n4)) {
        acc = _mm256_add_pd(acc, _mm256_mul_pd(load4(x), load4(y)));
    }
    let mut t = reduce(acc);
    for i in n4..n {
        t += a[i] * b[i];
    }
    t
}

/// Σ ((a_j − b_j)·w_j)², as the kernel's portable `scaled_sq_dist_lanes`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn scaled_sq_dist(a: &[f64], b: &[f64], w: &[f64]) -> f64 {
    let n = a.len().min(b.len()).min(w.len());
    let n4 = n / 4 * 4;
    let mut acc = _mm256_setzero_pd();
    for ((x, y), v) in blocks(a, n4).iter().zip(blocks(b, n4)).zip(blocks(w, n4)) {
        let t = _mm256_mul_pd(_mm256_sub_pd(load4(x), load4(y)), load4(v));
        acc = _mm256_add_pd(acc, _mm256_mul_pd(t, t));
    }
    let mut r2 = reduce(acc);
    for i in n4..n {
        let t = (a[i] - b[i]) * w[i];
        r2 += t * t;
    }
    r2
}

#[cfg(test)]
mod tests {
    /// The AVX2 dot product and the portable one give the same bits, for every length
    /// (the blocks of four and the tail).
    #[test]
    fn the_avx2_dot_has_the_same_bits() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("no AVX2 on this CPU: only the portable dot product runs");
            return;
        }
        for n in 0..=37 {
            let a: Vec<f64> = (0..n).map(|i| (0.37 * i as f64).sin() * 3.1).collect();
            let b: Vec<f64> = (0..n).map(|i| (1.3 * i as f64).cos() * 0.7 - 0.2).collect();
            // SAFETY: AVX2 is supported, checked above.
            let wide = unsafe { super::dot(&a, &b) };
            let portable = crate::cholesky::dot(&a, &b);
            assert_eq!(portable.to_bits(), wide.to_bits(), "n = {n}");
        }
    }
}
