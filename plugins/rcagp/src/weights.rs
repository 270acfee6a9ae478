//! IMQ robust weights, the quantities of the robust pseudo-likelihood derived from them
//! (spec §1.2, A1), and the soft threshold c (A2).
//!
//! For one point with target y, weight centre γ (the prior mean m in the paper; see the
//! plugin's `weight_center` for the streaming variant), threshold c², per-point noise σ²
//! and height β:
//!
//! * t = y − γ, w² = β² / (1 + t²/c²)
//! * h = ∂_y log w² = −2t/(c² + t²),  g = ∂_y w² = w² h
//! * d = σ⁴/(2w²) (effective noise variance), Λ = 2w²/σ⁴ (computed directly, not as 1/d)
//! * r = y − m − σ² h (the adjusted target; m is the prior mean at the point)
//!
//! β is either a number (the paper: 1) or [`Beta::Normalized`], β² = σ²/2 per point (the
//! RCGP reference code's choice, spec §5 item 9), which makes d = σ²(1 + t²/c²) so that
//! c → ∞ recovers a plain GP with noise σ². In normalized mode β is a constant for
//! gradients (stop-gradient), as the spec recommends.

/// The IMQ height β.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Beta {
    /// A fixed β (the paper uses 1).
    Fixed(f64),
    /// β² = σ²/2 at each point (treated as a constant for gradients).
    Normalized,
}

impl Beta {
    /// β² at a point with noise variance σ².
    #[inline]
    pub fn beta2(self, sigma2: f64) -> f64 {
        match self {
            Beta::Fixed(b) => b * b,
            Beta::Normalized => 0.5 * sigma2,
        }
    }
}

/// The weight-derived quantities of one point (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PointWeight {
    /// w².
    pub w2: f64,
    /// h = ∂_y log w².
    pub h: f64,
    /// g = ∂_y w².
    pub g: f64,
    /// d = σ⁴/(2w²).
    pub d: f64,
    /// Λ = 2w²/σ⁴.
    pub lam: f64,
    /// r = y − m − σ² h.
    pub r: f64,
}

/// The weights of one point: target `y`, weight centre `center`, prior mean `prior_mean`,
/// squared threshold `c2`, noise variance `sigma2` (and β² = `beta2`). No allocation.
#[inline]
pub fn point(
    y: f64,
    center: f64,
    prior_mean: f64,
    c2: f64,
    sigma2: f64,
    beta2: f64,
) -> PointWeight {
    let t = y - center;
    let t2 = t * t;
    let w2 = beta2 * c2 / (c2 + t2);
    let h = -2.0 * t / (c2 + t2);
    let s4 = sigma2 * sigma2;
    PointWeight {
        w2,
        h,
        g: w2 * h,
        d: s4 / (2.0 * w2),
        lam: 2.0 * w2 / s4,
        r: y - prior_mean - sigma2 * h,
    }
}

/// The `q` quantile of `values` with linear interpolation between order statistics (NumPy's
/// default), computed by selection; `values` is reordered. NaN for an empty slice. No
/// allocation.
pub fn quantile(values: &mut [f64], q: f64) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
    let lo = pos.floor() as usize;
    let frac = pos - lo as f64;
    let (_, &mut v_lo, upper) = values.select_nth_unstable_by(lo, f64::total_cmp);
    if frac == 0.0 || upper.is_empty() {
        return v_lo;
    }
    let v_hi = upper.iter().copied().fold(f64::INFINITY, f64::min);
    v_lo + frac * (v_hi - v_lo)
}

/// The soft threshold c = max(Q_{1−ε}(|t|), c_min) of spec A2 from the absolute residuals
/// `abs_resid` (reordered). No allocation.
pub fn soft_threshold(abs_resid: &mut [f64], epsilon: f64, c_min: f64) -> f64 {
    let q = quantile(abs_resid, 1.0 - epsilon);
    if q.is_finite() { q.max(c_min) } else { c_min }
}
