//! Covariance kernels: ARD squared exponential, Matérn 3/2 and Matérn 5/2.
//!
//! Boundary: pure numerics on `&[f64]` inputs of length d. No allocation in `value`, `diag`
//! or `gradient`; construction allocates the inverse-lengthscale vector once.
//!
//! All three kernels are stationary functions of the lengthscale-scaled distance
//! r = ‖(a − b) ⊘ ℓ‖₂ and share the hyperparameter vector (log space)
//! `[ln σ_f, ln ℓ_1, …, ln ℓ_d]`, so they are one struct, [`ArdKernel`], with a
//! [`KernelKind`] that selects the formula.

/// A stationary covariance function with hyperparameters handled in log space.
///
/// Parameter vector order (log space): `[ln σ_f, ln ℓ_1, …, ln ℓ_d]`.
pub trait Kernel {
    /// Input dimension d.
    fn dim(&self) -> usize;
    /// κ(a, b).
    fn value(&self, a: &[f64], b: &[f64]) -> f64;
    /// κ(x, x) = σ_f² for the stationary kernels here.
    fn diag(&self) -> f64;
    /// Number of hyperparameters (1 + d).
    fn n_params(&self) -> usize;
    /// Current hyperparameters, log space, into `out` (len `n_params`).
    fn log_params(&self, out: &mut [f64]);
    /// Replace the hyperparameters from a log-space vector (len `n_params`).
    fn set_log_params(&mut self, p: &[f64]);
    /// ∂κ(a, b)/∂(log params) into `out` (len `n_params`).
    fn gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]);
}

/// Errors from building a kernel.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelError {
    /// σ_f or a lengthscale was not finite and positive.
    #[error("kernel hyperparameter {what} must be finite and > 0, found {value}")]
    BadHyperparameter {
        /// Which parameter (`sigma_f` or `lengthscales[j]`).
        what: String,
        /// The offending value.
        value: f64,
    },
    /// No lengthscale was given.
    #[error("kernel needs at least one lengthscale")]
    NoLengthscales,
}

/// The formula of an [`ArdKernel`], as a function of the scaled distance
/// r = ‖(a − b) ⊘ ℓ‖₂.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KernelKind {
    /// Squared exponential (RBF): κ = σ_f² · exp(−r²/2).
    #[default]
    SquaredExponential,
    /// Matérn ν = 3/2: κ = σ_f² · (1 + √3 r) · exp(−√3 r).
    Matern32,
    /// Matérn ν = 5/2: κ = σ_f² · (1 + √5 r + 5r²/3) · exp(−√5 r).
    Matern52,
}

const SQRT3: f64 = 1.732_050_807_568_877_2;
const SQRT5: f64 = 2.236_067_977_499_79;

/// An ARD stationary kernel κ(a, b) = σ_f² · g(r), r² = Σ_j (a_j − b_j)²/ℓ_j², with g given
/// by [`KernelKind`].
///
/// Gradients w.r.t. the log parameters, with u_j = (a_j − b_j)²/ℓ_j²:
/// * ∂κ/∂ln σ_f = 2κ for every kind;
/// * SE: ∂κ/∂ln ℓ_j = κ · u_j;
/// * Matérn 3/2: ∂κ/∂ln ℓ_j = 3 σ_f² · exp(−√3 r) · u_j;
/// * Matérn 5/2: ∂κ/∂ln ℓ_j = (5/3) σ_f² · (1 + √5 r) · exp(−√5 r) · u_j.
///
/// The inverse lengthscales are stored, so `value` is d subtractions, d multiplications and
/// one `exp`, with no allocation.
#[derive(Debug, Clone, PartialEq)]
pub struct ArdKernel {
    kind: KernelKind,
    sigma_f2: f64,
    inv_ell: Vec<f64>,
}

impl ArdKernel {
    /// Builds a kernel from σ_f (a standard deviation) and one lengthscale per input.
    /// Allocates the inverse-lengthscale vector.
    pub fn new(kind: KernelKind, sigma_f: f64, lengthscales: &[f64]) -> Result<Self, KernelError> {
        if !(sigma_f.is_finite() && sigma_f > 0.0) {
            return Err(KernelError::BadHyperparameter {
                what: "sigma_f".into(),
                value: sigma_f,
            });
        }
        if lengthscales.is_empty() {
            return Err(KernelError::NoLengthscales);
        }
        for (j, &l) in lengthscales.iter().enumerate() {
            if !(l.is_finite() && l > 0.0) {
                return Err(KernelError::BadHyperparameter {
                    what: format!("lengthscales[{j}]"),
                    value: l,
                });
            }
        }
        Ok(Self {
            kind,
            sigma_f2: sigma_f * sigma_f,
            inv_ell: lengthscales.iter().map(|l| 1.0 / l).collect(),
        })
    }

    /// Squared-exponential kernel; see [`KernelKind::SquaredExponential`].
    pub fn se(sigma_f: f64, lengthscales: &[f64]) -> Result<Self, KernelError> {
        Self::new(KernelKind::SquaredExponential, sigma_f, lengthscales)
    }

    /// Matérn 3/2 kernel; see [`KernelKind::Matern32`].
    pub fn matern32(sigma_f: f64, lengthscales: &[f64]) -> Result<Self, KernelError> {
        Self::new(KernelKind::Matern32, sigma_f, lengthscales)
    }

    /// Matérn 5/2 kernel; see [`KernelKind::Matern52`].
    pub fn matern52(sigma_f: f64, lengthscales: &[f64]) -> Result<Self, KernelError> {
        Self::new(KernelKind::Matern52, sigma_f, lengthscales)
    }

    /// The formula in use.
    pub fn kind(&self) -> KernelKind {
        self.kind
    }

    /// σ_f (standard deviation).
    pub fn sigma_f(&self) -> f64 {
        self.sigma_f2.sqrt()
    }

    /// σ_f², the prior variance κ(x, x).
    pub fn sigma_f2(&self) -> f64 {
        self.sigma_f2
    }

    /// 1/ℓ_j for every input j.
    pub fn inv_lengthscales(&self) -> &[f64] {
        &self.inv_ell
    }

    /// Lengthscale j (computed as 1/(1/ℓ_j)).
    pub fn lengthscale(&self, j: usize) -> f64 {
        1.0 / self.inv_ell[j]
    }

    /// Scaled squared distance r² = Σ_j ((a_j − b_j)/ℓ_j)². No allocation.
    ///
    /// On x86-64 CPUs with AVX2 the same sums run in 256-bit registers: the same operations
    /// in the same order per lane (Rust does not fuse into FMA), so the same bits.
    #[inline]
    pub fn scaled_sq_dist(&self, a: &[f64], b: &[f64]) -> f64 {
        debug_assert_eq!(a.len(), self.inv_ell.len());
        debug_assert_eq!(b.len(), self.inv_ell.len());
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { scaled_sq_dist_avx2(a, b, &self.inv_ell) };
        }
        scaled_sq_dist_lanes(a, b, &self.inv_ell)
    }

    /// The scaled squared distance of x to every row of `rows` (row-major, x.len()
    /// columns) into `out` (one entry per row): the same numbers as
    /// [`Self::scaled_sq_dist`] row by row, with one CPU dispatch for all rows.
    pub fn sq_dists_to_rows(&self, rows: &[f64], x: &[f64], out: &mut [f64]) {
        self.map_rows(rows, x, out, |r2| r2);
    }

    /// κ(row, x) for every row of `rows` (row-major, x.len() columns) into `out` (one
    /// entry per row): the same numbers as [`Kernel::value`] row by row, with one CPU
    /// dispatch for all rows.
    pub fn values_to_rows(&self, rows: &[f64], x: &[f64], out: &mut [f64]) {
        self.map_rows(rows, x, out, |r2| self.value_from_sq_dist(r2));
    }

    #[inline(always)]
    fn map_rows(&self, rows: &[f64], x: &[f64], out: &mut [f64], f: impl Fn(f64) -> f64) {
        let d = x.len();
        debug_assert_eq!(d, self.inv_ell.len());
        debug_assert_eq!(rows.len(), out.len() * d);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { map_rows_avx2(rows, x, &self.inv_ell, out, f) };
        }
        for (o, row) in out.iter_mut().zip(rows.chunks_exact(d.max(1))) {
            *o = f(scaled_sq_dist_lanes(row, x, &self.inv_ell));
        }
    }

    /// κ as a function of r² (the kernel's profile times σ_f²).
    #[inline]
    pub fn value_from_sq_dist(&self, r2: f64) -> f64 {
        match self.kind {
            KernelKind::SquaredExponential => self.sigma_f2 * (-0.5 * r2).exp(),
            KernelKind::Matern32 => {
                let sr = SQRT3 * r2.sqrt();
                self.sigma_f2 * (1.0 + sr) * (-sr).exp()
            }
            KernelKind::Matern52 => {
                let r = r2.sqrt();
                let sr = SQRT5 * r;
                self.sigma_f2 * (1.0 + sr + 5.0 / 3.0 * r2) * (-sr).exp()
            }
        }
    }

    /// True when both kernels have the same kind and lengthscales (σ_f may differ).
    pub fn same_shape(&self, other: &Self) -> bool {
        self.kind == other.kind && self.inv_ell == other.inv_ell
    }
}

impl Kernel for ArdKernel {
    fn dim(&self) -> usize {
        self.inv_ell.len()
    }

    #[inline]
    fn value(&self, a: &[f64], b: &[f64]) -> f64 {
        self.value_from_sq_dist(self.scaled_sq_dist(a, b))
    }

    fn diag(&self) -> f64 {
        self.sigma_f2
    }

    fn n_params(&self) -> usize {
        1 + self.inv_ell.len()
    }

    fn log_params(&self, out: &mut [f64]) {
        debug_assert_eq!(out.len(), self.n_params());
        out[0] = 0.5 * self.sigma_f2.ln();
        for (o, &w) in out[1..].iter_mut().zip(&self.inv_ell) {
            *o = -w.ln();
        }
    }

    fn set_log_params(&mut self, p: &[f64]) {
        debug_assert_eq!(p.len(), self.n_params());
        self.sigma_f2 = (2.0 * p[0]).exp();
        for (w, &lp) in self.inv_ell.iter_mut().zip(&p[1..]) {
            *w = (-lp).exp();
        }
    }

    fn gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]) {
        debug_assert_eq!(out.len(), self.n_params());
        let r2 = self.scaled_sq_dist(a, b);
        let k = self.value_from_sq_dist(r2);
        out[0] = 2.0 * k;
        // Factor f such that ∂κ/∂ln ℓ_j = f · u_j.
        let f = match self.kind {
            KernelKind::SquaredExponential => k,
            KernelKind::Matern32 => 3.0 * self.sigma_f2 * (-SQRT3 * r2.sqrt()).exp(),
            KernelKind::Matern52 => {
                let sr = SQRT5 * r2.sqrt();
                5.0 / 3.0 * self.sigma_f2 * (1.0 + sr) * (-sr).exp()
            }
        };
        for (((o, &ai), &bi), &w) in out[1..].iter_mut().zip(a).zip(b).zip(&self.inv_ell) {
            let t = (ai - bi) * w;
            *o = f * t * t;
        }
    }
}

/// [`scaled_sq_dist_lanes`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scaled_sq_dist_avx2(a: &[f64], b: &[f64], w: &[f64]) -> f64 {
    crate::avx2::scaled_sq_dist(a, b, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn map_rows_avx2(
    rows: &[f64],
    x: &[f64],
    w: &[f64],
    out: &mut [f64],
    f: impl Fn(f64) -> f64,
) {
    for (o, row) in out.iter_mut().zip(rows.chunks_exact(x.len().max(1))) {
        *o = f(crate::avx2::scaled_sq_dist(row, x, w));
    }
}

/// Σ_j ((a_j − b_j)·w_j)² in four partial sums, so that the loop vectorises instead of
/// waiting on one accumulator (the distance is most of a prediction's cost for d ≥ 8).
#[inline(always)]
fn scaled_sq_dist_lanes(a: &[f64], b: &[f64], w: &[f64]) -> f64 {
    let n4 = a.len() / 4 * 4;
    let mut s = [0.0f64; 4];
    for ((x, y), v) in a[..n4]
        .chunks_exact(4)
        .zip(b[..n4].chunks_exact(4))
        .zip(w[..n4].chunks_exact(4))
    {
        for k in 0..4 {
            let t = (x[k] - y[k]) * v[k];
            s[k] += t * t;
        }
    }
    let mut r2 = (s[0] + s[1]) + (s[2] + s[3]);
    for ((&ai, &bi), &wi) in a[n4..].iter().zip(&b[n4..]).zip(&w[n4..]) {
        let t = (ai - bi) * wi;
        r2 += t * t;
    }
    r2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row-batched distances and kernel values are the pairwise ones, bit for bit.
    #[test]
    fn rows_give_the_pairwise_numbers() {
        for d in [1, 3, 8, 32] {
            let ell: Vec<f64> = (0..d).map(|i| 0.4 + 0.13 * i as f64).collect();
            for kind in [
                KernelKind::SquaredExponential,
                KernelKind::Matern32,
                KernelKind::Matern52,
            ] {
                let k = ArdKernel::new(kind, 1.7, &ell).expect("valid kernel");
                let n = 11;
                let rows: Vec<f64> = (0..n * d).map(|i| (0.71 * i as f64).sin() * 2.0).collect();
                let x: Vec<f64> = (0..d).map(|i| (0.3 * i as f64).cos()).collect();
                let (mut r2, mut kv) = (vec![0.0; n], vec![0.0; n]);
                k.sq_dists_to_rows(&rows, &x, &mut r2);
                k.values_to_rows(&rows, &x, &mut kv);
                for (s, row) in rows.chunks_exact(d).enumerate() {
                    assert_eq!(r2[s].to_bits(), k.scaled_sq_dist(row, &x).to_bits());
                    assert_eq!(kv[s].to_bits(), k.value(row, &x).to_bits());
                }
            }
        }
    }

    /// The AVX2 copy and the portable one give the same bits, for every length (the four
    /// lanes and the tail), so results do not depend on the CPU.
    #[test]
    fn the_avx2_distance_has_the_same_bits() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            for d in 1..=37 {
                let a: Vec<f64> = (0..d).map(|i| (0.37 * i as f64).sin() * 3.1).collect();
                let b: Vec<f64> = (0..d).map(|i| (1.3 * i as f64).cos() * 0.7).collect();
                let w: Vec<f64> = (0..d).map(|i| 1.0 / (0.2 + 0.11 * i as f64)).collect();
                let portable = scaled_sq_dist_lanes(&a, &b, &w);
                // SAFETY: AVX2 is supported, checked above.
                let wide = unsafe { scaled_sq_dist_avx2(&a, &b, &w) };
                assert_eq!(portable.to_bits(), wide.to_bits(), "d = {d}");
            }
            return;
        }
        eprintln!("no AVX2 on this CPU: only the portable distance runs");
    }
}
