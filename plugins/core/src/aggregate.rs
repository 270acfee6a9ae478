//! Aggregation of local GP experts' predictions into one (SkyGP spec §3.7).
//!
//! Boundary: pure arithmetic over the M experts' (μ_i, σ_i²) at one input and the prior
//! variance σ_*² = κ(x, x). No allocation. Every rule also reports the per-expert weights
//! ω_i with μ̃ = Σ ω_i μ_i (needed by the SkyGP error bound, spec §4).
//!
//! Two families:
//! * textbook forms ([`Aggregation::MoE`], [`Aggregation::PoE`], [`Aggregation::GPoE`],
//!   [`Aggregation::BCM`], [`Aggregation::RBCM`]), the general forms of spec §3.7 with the
//!   prior weights w_i stated per variant;
//! * the SkyGP reference code's formulas ([`Aggregation::MoERef`], [`Aggregation::GPoERef`],
//!   [`Aggregation::BCMRef`]) with its exact 1e-9 constants, which produced the paper's numbers.
//!
//! Expert variances are clamped into [1e-12, σ_*²] by the textbook rules (an expert cannot
//! be more uncertain than the prior); the reference rules use them as given.

/// An expert-aggregation rule. M = number of experts, σ_*² = prior variance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Aggregation {
    /// Mixture of experts, w_i = 1/M: μ̃ = Σ w_i μ_i, σ̃² = Σ w_i (σ_i² + μ_i²) − μ̃²;
    /// ω_i = w_i.
    MoE,
    /// Product of experts, w_i = 1: σ̃⁻² = Σ σ_i⁻², μ̃ = σ̃² Σ σ_i⁻² μ_i; ω_i = σ_i⁻² σ̃².
    PoE,
    /// Generalised PoE with w_i = 1/M (Deisenroth & Ng 2015): σ̃⁻² = Σ w_i σ_i⁻²,
    /// μ̃ = σ̃² Σ w_i σ_i⁻² μ_i; ω_i = w_i σ_i⁻² σ̃².
    GPoE,
    /// Bayesian committee machine, w_i = 1: σ̃⁻² = Σ σ_i⁻² + (1 − M) σ_*⁻²,
    /// μ̃ = σ̃² Σ σ_i⁻² μ_i; ω_i = σ_i⁻² σ̃² (Σ ω_i ≥ 1).
    BCM,
    /// Robust BCM (Deisenroth & Ng 2015), w_i = ½(ln σ_*² − ln σ_i²):
    /// σ̃⁻² = Σ w_i σ_i⁻² + (1 − Σ w_i) σ_*⁻², μ̃ = σ̃² Σ w_i σ_i⁻² μ_i; ω_i = w_i σ_i⁻² σ̃².
    /// With M = 1 this is *not* the single expert (w_1 ≠ 1 in general).
    RBCM,
    /// Reference "MoE": μ̃ = mean μ_i, σ̃² = max(mean σ_i², 1e-6), no spread term; ω_i = 1/M.
    MoERef,
    /// Reference "gPoE": M = 1 returns the expert. Otherwise β_i = 1 − σ_i²/(max_j σ_j² + 1e-9),
    /// P = Σ β_i/(σ_i² + 1e-9), μ̃ = [Σ β_i μ_i/(σ_i² + 1e-9)]/(P + 1e-9), σ̃² = 1/(P + 1e-9);
    /// ω_i = β_i/(σ_i² + 1e-9)/(P + 1e-9). Guard (spec §3.7): if all variances are equal
    /// (Σ_i (max σ² − σ_i²) < 1e-12, i.e. Σβ_i vanishes but for the 1e-9 regulariser) the
    /// lowest-variance expert (the first on ties) is returned alone.
    GPoERef,
    /// Reference "rBCM", which is plain BCM with the code's constants:
    /// P = Σ 1/(σ_i² + 1e-9) − (M − 1)/σ_*², μ̃ = [Σ μ_i/(σ_i² + 1e-9)]/(P + 1e-9),
    /// σ̃² = 1/(P + 1e-9); ω_i = 1/(σ_i² + 1e-9)/(P + 1e-9).
    #[default]
    BCMRef,
}

const REF_EPS: f64 = 1e-9;
const VAR_MIN: f64 = 1e-12;

impl Aggregation {
    /// Combines M experts. `mean`, `var` and `weights` have length M; `weights` receives
    /// ω_i. Returns (μ̃, σ̃²). With M = 0 returns the prior (0, σ_*²). No allocation.
    pub fn combine(
        &self,
        mean: &[f64],
        var: &[f64],
        prior_var: f64,
        weights: &mut [f64],
    ) -> (f64, f64) {
        let m = mean.len();
        debug_assert_eq!(var.len(), m);
        debug_assert_eq!(weights.len(), m);
        if m == 0 {
            return (0.0, prior_var);
        }
        let clamp = |v: f64| v.max(VAR_MIN).min(prior_var.max(VAR_MIN));
        match self {
            Self::MoE => {
                let w = 1.0 / m as f64;
                let mut mu = 0.0;
                let mut second = 0.0;
                for i in 0..m {
                    weights[i] = w;
                    mu += w * mean[i];
                    second += w * (var[i] + mean[i] * mean[i]);
                }
                (mu, (second - mu * mu).max(0.0))
            }
            Self::PoE | Self::GPoE | Self::BCM | Self::RBCM => {
                let mut prec = 0.0;
                let mut wsum = 0.0;
                let mut num = 0.0;
                for i in 0..m {
                    let v = clamp(var[i]);
                    let w = match self {
                        Self::PoE | Self::BCM => 1.0,
                        Self::GPoE => 1.0 / m as f64,
                        _ => 0.5 * (prior_var.ln() - v.ln()),
                    };
                    // ω_i up to the final factor σ̃².
                    weights[i] = w / v;
                    prec += w / v;
                    num += w / v * mean[i];
                    wsum += w;
                }
                if matches!(self, Self::BCM | Self::RBCM) {
                    prec += (1.0 - wsum) / prior_var;
                }
                let s2 = 1.0 / prec;
                for w in weights.iter_mut() {
                    *w *= s2;
                }
                (num * s2, s2)
            }
            Self::MoERef => {
                let w = 1.0 / m as f64;
                let mut mu = 0.0;
                let mut v = 0.0;
                for i in 0..m {
                    weights[i] = w;
                    mu += mean[i];
                    v += var[i];
                }
                (mu / m as f64, (v / m as f64).max(1e-6))
            }
            Self::GPoERef => {
                if m == 1 {
                    weights[0] = 1.0;
                    return (mean[0], var[0]);
                }
                let vmax = var.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let spread: f64 = var.iter().map(|v| vmax - v).sum();
                if spread < 1e-12 {
                    let mut best = 0;
                    for i in 1..m {
                        if var[i] < var[best] {
                            best = i;
                        }
                    }
                    weights.fill(0.0);
                    weights[best] = 1.0;
                    return (mean[best], var[best]);
                }
                let mut p = 0.0;
                let mut num = 0.0;
                for i in 0..m {
                    let beta = 1.0 - var[i] / (vmax + REF_EPS);
                    let q = beta / (var[i] + REF_EPS);
                    weights[i] = q;
                    p += q;
                    num += q * mean[i];
                }
                let den = p + REF_EPS;
                for w in weights.iter_mut() {
                    *w /= den;
                }
                (num / den, 1.0 / den)
            }
            Self::BCMRef => {
                let mut p = 0.0;
                let mut num = 0.0;
                for i in 0..m {
                    let q = 1.0 / (var[i] + REF_EPS);
                    weights[i] = q;
                    p += q;
                    num += mean[i] * q;
                }
                p -= (m as f64 - 1.0) / prior_var;
                let den = p + REF_EPS;
                for w in weights.iter_mut() {
                    *w /= den;
                }
                (num / den, 1.0 / den)
            }
        }
    }

    /// Parses the config name: `moe`, `poe`, `gpoe`, `bcm`, `rbcm`, `moe_ref`, `gpoe_ref`,
    /// `bcm_ref`.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "moe" => Self::MoE,
            "poe" => Self::PoE,
            "gpoe" => Self::GPoE,
            "bcm" => Self::BCM,
            "rbcm" => Self::RBCM,
            "moe_ref" => Self::MoERef,
            "gpoe_ref" => Self::GPoERef,
            "bcm_ref" => Self::BCMRef,
            _ => return None,
        })
    }

    /// The config name (inverse of [`Self::from_name`]).
    pub fn name(&self) -> &'static str {
        match self {
            Self::MoE => "moe",
            Self::PoE => "poe",
            Self::GPoE => "gpoe",
            Self::BCM => "bcm",
            Self::RBCM => "rbcm",
            Self::MoERef => "moe_ref",
            Self::GPoERef => "gpoe_ref",
            Self::BCMRef => "bcm_ref",
        }
    }

    /// All rules, for test matrices.
    pub const ALL: [Self; 8] = [
        Self::MoE,
        Self::PoE,
        Self::GPoE,
        Self::BCM,
        Self::RBCM,
        Self::MoERef,
        Self::GPoERef,
        Self::BCMRef,
    ];
}
