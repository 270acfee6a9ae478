//! Stationary kernels on inputs pre-scaled by the inverse lengthscales (spec §1.4, §8).
//!
//! Every kernel here is k(x, x') = s_f² · φ(r²) with r² = Σ_t ((x_t − x'_t)/ℓ_t)² (ARD; an
//! isotropic kernel has all ℓ_t equal). Inputs are scaled once by 1/ℓ ([`scale_rows`]) so a
//! kernel value costs d subtractions, d multiply-adds and one `exp`. The gradient with respect
//! to a lengthscale follows from the profile's derivative:
//!
//!   ∂k/∂ℓ_t = s_f² · φ'(r²) · (−2 u_t / ℓ_t),   u_t = ((x_t − x'_t)/ℓ_t)²,
//!
//! and ∂k/∂s_f² = k/s_f². No allocation anywhere in this module.

/// The profile φ of a stationary kernel, as a function of the scaled squared distance r².
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// Matérn ν = 1/2: φ = e^{−r}.
    Matern12,
    /// Matérn ν = 3/2: φ = (1 + √3 r) e^{−√3 r}.
    Matern32,
    /// Matérn ν = 5/2: φ = (1 + √5 r + 5r²/3) e^{−√5 r}.
    Matern52,
    /// Squared exponential (RBF): φ = e^{−r²/2}.
    Rbf,
}

const SQRT3: f64 = 1.732_050_807_568_877_2;
const SQRT5: f64 = 2.236_067_977_499_79;

impl KernelKind {
    /// Parses a config name: `matern12`, `matern32`, `matern52`, `rbf` or `se` (the same as
    /// `rbf`, the name the rest of the workspace uses).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "matern12" => Some(Self::Matern12),
            "matern32" => Some(Self::Matern32),
            "matern52" => Some(Self::Matern52),
            "rbf" | "se" => Some(Self::Rbf),
            _ => None,
        }
    }

    /// The config name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Matern12 => "matern12",
            Self::Matern32 => "matern32",
            Self::Matern52 => "matern52",
            Self::Rbf => "se",
        }
    }

    /// φ(r²), the kernel with unit outputscale.
    #[inline]
    pub fn profile(self, r2: f64) -> f64 {
        match self {
            Self::Matern12 => (-r2.sqrt()).exp(),
            Self::Matern32 => {
                let sr = SQRT3 * r2.sqrt();
                (1.0 + sr) * (-sr).exp()
            }
            Self::Matern52 => {
                let sr = SQRT5 * r2.sqrt();
                (1.0 + sr + 5.0 / 3.0 * r2) * (-sr).exp()
            }
            Self::Rbf => (-0.5 * r2).exp(),
        }
    }

    /// (φ(r²), dφ/d(r²)). For Matérn 1/2 the derivative is −e^{−r}/(2r), unbounded at r = 0;
    /// there it is returned as 0, because every use multiplies it by a component u_t of r²,
    /// and u_t/r → 0.
    #[inline]
    pub fn profile_and_slope(self, r2: f64) -> (f64, f64) {
        match self {
            Self::Matern12 => {
                let r = r2.sqrt();
                let e = (-r).exp();
                (e, if r > 0.0 { -e / (2.0 * r) } else { 0.0 })
            }
            Self::Matern32 => {
                let sr = SQRT3 * r2.sqrt();
                let e = (-sr).exp();
                ((1.0 + sr) * e, -1.5 * e)
            }
            Self::Matern52 => {
                let sr = SQRT5 * r2.sqrt();
                let e = (-sr).exp();
                ((1.0 + sr + 5.0 / 3.0 * r2) * e, -5.0 / 6.0 * (1.0 + sr) * e)
            }
            Self::Rbf => {
                let e = (-0.5 * r2).exp();
                (e, -0.5 * e)
            }
        }
    }
}

/// Squared Euclidean distance of two pre-scaled inputs (four accumulators).
#[inline]
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let n4 = a.len() / 4 * 4;
    let (a4, ar) = a.split_at(n4);
    let (b4, br) = b.split_at(n4);
    let mut s = [0.0f64; 4];
    for (x, y) in a4.chunks_exact(4).zip(b4.chunks_exact(4)) {
        let t0 = x[0] - y[0];
        let t1 = x[1] - y[1];
        let t2 = x[2] - y[2];
        let t3 = x[3] - y[3];
        s[0] += t0 * t0;
        s[1] += t1 * t1;
        s[2] += t2 * t2;
        s[3] += t3 * t3;
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for (x, y) in ar.iter().zip(br) {
        let v = x - y;
        t += v * v;
    }
    t
}

/// Scales the rows of `x` (n×d, row-major) by 1/ℓ into `out` (same shape).
pub fn scale_rows(x: &[f64], inv_ell: &[f64], out: &mut [f64]) {
    let d = inv_ell.len();
    debug_assert_eq!(x.len(), out.len());
    for (row_out, row_in) in out.chunks_exact_mut(d).zip(x.chunks_exact(d)) {
        for ((o, &v), &w) in row_out.iter_mut().zip(row_in).zip(inv_ell) {
            *o = v * w;
        }
    }
}

/// Kernel hyperparameters: the profile, one lengthscale per input (equal values for an
/// isotropic kernel) and the outputscale s_f² (a variance).
#[derive(Debug, Clone, PartialEq)]
pub struct KernelParams {
    /// The profile φ.
    pub kind: KernelKind,
    /// ℓ_1..ℓ_d.
    pub lengthscales: Vec<f64>,
    /// s_f² = k(x, x).
    pub outputscale: f64,
}

impl KernelParams {
    /// 1/ℓ_t for every input. **Allocates.**
    pub fn inv_lengthscales(&self) -> Vec<f64> {
        self.lengthscales.iter().map(|l| 1.0 / l).collect()
    }

    /// k(a, b) for raw (unscaled) inputs. For tests and diagnostics (not the fast path).
    pub fn value_raw(&self, a: &[f64], b: &[f64]) -> f64 {
        let r2: f64 = a
            .iter()
            .zip(b)
            .zip(&self.lengthscales)
            .map(|((x, y), l)| ((x - y) / l).powi(2))
            .sum();
        self.outputscale * self.kind.profile(r2)
    }
}
