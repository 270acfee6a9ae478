//! IMQ robust weights, the quantities of the robust pseudo-likelihood derived from them
//! (spec §1.2, A1), and the soft threshold c (A2).
//!
//! For one point with target y, weight centre γ (the prior mean m in the paper; see the
//! plugin's `weight_center` for the streaming variant), threshold c², per-point noise σ²
//! and height β:
//!
//! * t = y − γ, w² = β² / (1 + u²/c²) with u = t for the paper's IMQ and
//!   u = max(|t| − c, 0) for the flat-top IMQ ([`WeightProfile`])
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

/// The shape of w² as a function of t = y − γ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightProfile {
    /// The paper's IMQ, w² = β²/(1 + t²/c²): every point with t ≠ 0 loses weight, so on
    /// clean data each point's noise is inflated by 1 + t²/c² (on average 1 + E[t²]/c² ≈ 1.5
    /// for a Gaussian t with c its 85 % quantile; with γ the prior mean, t is the signal).
    #[default]
    Imq,
    /// Full weight inside the threshold, the IMQ's decay outside it: w² = β² for |t| ≤ c,
    /// else β²/(1 + (|t| − c)²/c²). C¹ at |t| = c, the same 1/t² tail (bounded influence,
    /// spec §1.2), and ε keeps its meaning of the share of points allowed to lose weight.
    /// A documented deviation from the paper (ADR 0005 item 9).
    FlatImq,
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
/// squared threshold `c2`, noise variance `sigma2` (and β² = `beta2`), weight shape
/// `profile`. No allocation.
#[inline]
pub fn point(
    y: f64,
    center: f64,
    prior_mean: f64,
    c2: f64,
    sigma2: f64,
    beta2: f64,
    profile: WeightProfile,
) -> PointWeight {
    let t = y - center;
    // u: the part of t the weight decays with; h = ∂_y log w² = −2u·sign(t)/(c² + u²).
    let u = match profile {
        WeightProfile::Imq => t,
        WeightProfile::FlatImq => t.signum() * (t.abs() - c2.sqrt()).max(0.0),
    };
    let u2 = u * u;
    let w2 = beta2 * c2 / (c2 + u2);
    let h = -2.0 * u / (c2 + u2);
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

#[cfg(test)]
mod tests {
    use super::*;

    const C: f64 = 0.7;
    const S2: f64 = 0.04;

    fn at(t: f64, profile: WeightProfile) -> PointWeight {
        point(
            0.3 + t,
            0.3,
            0.1,
            C * C,
            S2,
            Beta::Normalized.beta2(S2),
            profile,
        )
    }

    #[test]
    fn flat_imq_keeps_full_weight_inside_the_threshold() {
        for t in [-C, -0.5 * C, 0.0, 0.2 * C, C] {
            let w = at(t, WeightProfile::FlatImq);
            assert_eq!(w.w2, 0.5 * S2, "t = {t}");
            assert_eq!(w.h, 0.0, "t = {t}");
            assert!((w.d - S2).abs() < 1e-15, "d = σ² inside, t = {t}: {}", w.d);
            assert!(
                (w.r - (0.3 + t - 0.1)).abs() < 1e-15,
                "r = y − m inside, t = {t}"
            );
        }
        // The paper's IMQ already inflates a point at t = c/2 by 1 + 1/4.
        let imq = at(0.5 * C, WeightProfile::Imq);
        assert!((imq.d / S2 - 1.25).abs() < 1e-12, "{}", imq.d / S2);
    }

    #[test]
    fn flat_imq_outside_is_the_imq_of_the_excess() {
        for t in [1.5 * C, -2.0 * C, 9.0 * C] {
            let flat = at(t, WeightProfile::FlatImq);
            let excess = t.signum() * (t.abs() - C);
            let imq = at(excess, WeightProfile::Imq);
            assert!((flat.w2 - imq.w2).abs() < 1e-15 && (flat.h - imq.h).abs() < 1e-15);
        }
        // Bounded influence: the weight falls like 1/t² far out.
        let far = at(1e4 * C, WeightProfile::FlatImq);
        assert!(far.w2 * 1e8 / (0.5 * S2) < 1.01, "{}", far.w2);
    }

    #[test]
    fn h_is_the_derivative_of_log_w2_for_both_profiles() {
        for profile in [WeightProfile::Imq, WeightProfile::FlatImq] {
            for t in [-3.0 * C, -1.2 * C, -0.3 * C, 0.4 * C, 1.05 * C, 2.5 * C] {
                let e = 1e-6;
                let (lo, hi) = (at(t - e, profile).w2.ln(), at(t + e, profile).w2.ln());
                let fd = (hi - lo) / (2.0 * e);
                let h = at(t, profile).h;
                assert!((h - fd).abs() < 1e-6, "{profile:?} t = {t}: h {h} vs {fd}");
                assert!((at(t, profile).g - h * at(t, profile).w2).abs() < 1e-15);
            }
        }
    }
}
