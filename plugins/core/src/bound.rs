//! Prediction-error bounds: SkyGP Lemma 1 (η = β·σ + γ) and an empirically calibrated bound
//! η_cal = β_cal·σ. Theorem 2's tracking bound and its Lyapunov equation are control
//! quantities: they live in `gpn_control` (`control::lyapunov`), which takes η̄ from here.
//!
//! Boundary: plain numbers and slices in, numbers out, so any model (SkyGP or not) can use it.
//! No allocation except in [`CalibratedBound::new`].
//!
//! # Lemma 1 (`specs/skygp.md` §4, with its recommended choices)
//!
//! With probability ≥ 1 − Ncal·δ, for all x in the box X,
//! |f(x) − μ̃(x)| ≤ η(x) = β·σ(x) + γ(x), where, over the aggregated experts i:
//!
//! * σ(x) = Σ_i ω_i σ_i(x), the weighted **standard deviations** (not the aggregated σ̃);
//! * γ(x) = Σ_i ω_i γ_i;
//! * β = 2·(2 Σ_j log⌈(√m/(2τ))(x̄_j − x̲_j)⌉ − 2 log(δ/m))^{1/2} (eq. 13, [`beta`]);
//! * γ_i = β·ω_σ,i(τ) + Γ·√(2 L_κ τ) + L_{μ,i}·τ ([`expert_gamma`]): gap 1 (√β_δ := β), gap 2
//!   (the RKHS term is Γ√(2L_κτ), the "square-root fix") and gap 5 (the modulus of continuity
//!   ω_σ(τ) of the posterior standard deviation replaces L_{σ,i}·τ);
//! * constants for SE-ARD (gap 5): L_κ ≤ σ_f² e^{−1/2}/min_j ℓ_j ([`kernel_lipschitz_se`]),
//!   L_{μ,i} ≤ L_κ‖α_i‖₁ ([`mean_lipschitz`]),
//!   ω_σ(τ) = sqrt(2τL_κ(1 + N_i‖(K_i+σ_n²I)⁻¹‖σ_f²)) ([`sigma_modulus`]), where
//!   ‖(K_i+σ_n²I)⁻¹‖ ≤ 1/σ_n² may be used when the exact norm is not at hand.
//!
//! **Weights (gap 3).** The proof needs ω_i ≥ 0 and Σω_i = 1, which fails for BCM/rBCM. The
//! documented default, [`WeightRule::Normalise`], clamps negative weights to 0 and divides by
//! their sum (uniform weights if the sum is 0). [`WeightRule::PriorTerm`] instead uses the
//! weights as given and adds |1 − Σω_i|·Γ·σ_f (since |f(x)| ≤ Γσ_f). [`WeightRule::AsGiven`]
//! trusts the caller (MoE, normalised PoE).
//!
//! [`LemmaOne`] bundles these for an SE-ARD kernel shared by all experts; [`eta_practical`] is
//! Remark 2's η ≈ 2β·σ.
//!
//! # Calibrated bound
//!
//! [`CalibratedBound`] collects r = |y − μ|/σ over the first `n_cal` samples it is given,
//! then freezes β_cal = the `level` quantile of those r (default 95 %), and η_cal = β_cal·σ.

/// Errors of the bound computations.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BoundError {
    /// An argument was outside its domain.
    #[error("invalid argument {what} = {value}: {why}")]
    Invalid {
        /// Which argument.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The requirement.
        why: &'static str,
    },
    /// Slices of different or wrong lengths.
    #[error("{what}: expected length {expected}, found {found}")]
    Dimension {
        /// Which argument.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Length found.
        found: usize,
    },
}

/// Result alias of this module.
pub type Result<T> = std::result::Result<T, BoundError>;

fn positive(what: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(BoundError::Invalid {
            what,
            value,
            why: "must be finite and > 0",
        })
    }
}

fn non_negative(what: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(BoundError::Invalid {
            what,
            value,
            why: "must be finite and >= 0",
        })
    }
}

/// β of eq. 13: 2·(2 Σ_j log⌈(√m/(2τ))(x̄_j − x̲_j)⌉ − 2 log(δ/m))^{1/2}, for the input box
/// [`lower`, `upper`] (m = its dimension), grid constant τ > 0 and δ ∈ (0, 1).
///
/// A degenerate side (x̄_j = x̲_j) gives ⌈0⌉ = 0 grid points; it is counted as 1 (one grid
/// point covers it), so its log term is 0. The Lemma's union bound also needs δ < 1/Ncal;
/// the caller checks that.
pub fn beta(lower: &[f64], upper: &[f64], tau: f64, delta: f64) -> Result<f64> {
    if lower.len() != upper.len() {
        return Err(BoundError::Dimension {
            what: "upper",
            expected: lower.len(),
            found: upper.len(),
        });
    }
    if lower.is_empty() {
        return Err(BoundError::Dimension {
            what: "lower",
            expected: 1,
            found: 0,
        });
    }
    positive("tau", tau)?;
    if !(delta > 0.0 && delta < 1.0) {
        return Err(BoundError::Invalid {
            what: "delta",
            value: delta,
            why: "must be in (0, 1)",
        });
    }
    let m = lower.len() as f64;
    let scale = m.sqrt() / (2.0 * tau);
    let mut sum = 0.0;
    for (&lo, &hi) in lower.iter().zip(upper) {
        let width = hi - lo;
        if !(width.is_finite() && width >= 0.0) {
            return Err(BoundError::Invalid {
                what: "box width",
                value: width,
                why: "upper >= lower, finite",
            });
        }
        sum += (scale * width).ceil().max(1.0).ln();
    }
    Ok(2.0 * (2.0 * sum - 2.0 * (delta / m).ln()).sqrt())
}

/// Lipschitz constant of an ARD squared-exponential kernel: L_κ = σ_f² e^{−1/2}/min_j ℓ_j.
pub fn kernel_lipschitz_se(sigma_f: f64, lengthscales: &[f64]) -> Result<f64> {
    positive("sigma_f", sigma_f)?;
    let mut min_l = f64::INFINITY;
    for &l in lengthscales {
        min_l = min_l.min(positive("lengthscale", l)?);
    }
    if lengthscales.is_empty() {
        return Err(BoundError::Dimension {
            what: "lengthscales",
            expected: 1,
            found: 0,
        });
    }
    Ok(sigma_f * sigma_f * (-0.5f64).exp() / min_l)
}

/// Lipschitz constant of an expert's posterior mean μ_i = k(x)ᵀα_i: L_{μ,i} ≤ L_κ‖α_i‖₁.
pub fn mean_lipschitz(l_kappa: f64, alpha: &[f64]) -> f64 {
    l_kappa * alpha.iter().map(|a| a.abs()).sum::<f64>()
}

/// Modulus of continuity of an expert's posterior standard deviation (Lederer et al. 2019):
/// ω_σ(τ) = sqrt(2τL_κ(1 + N_i‖(K_i + σ_n²I)⁻¹‖σ_f²)), with N_i the expert's point count and
/// `inv_norm` = ‖(K_i + σ_n²I)⁻¹‖₂ (≤ 1/σ_n², a safe choice when the exact norm is unknown).
pub fn sigma_modulus(tau: f64, l_kappa: f64, n_points: usize, inv_norm: f64, sigma_f: f64) -> f64 {
    (2.0 * tau * l_kappa * (1.0 + n_points as f64 * inv_norm * sigma_f * sigma_f)).sqrt()
}

/// The RKHS term Γ·√(2 L_κ τ) (|f(x) − f(x')| ≤ Γ√(2L_κ‖x − x'‖), spec §4 gap 2).
pub fn rkhs_term(gamma_norm: f64, l_kappa: f64, tau: f64) -> f64 {
    gamma_norm * (2.0 * l_kappa * tau).sqrt()
}

/// γ_i = β·ω_σ,i(τ) + Γ√(2L_κτ) + L_{μ,i}·τ (eq. 14 with gaps 1, 2 and 5 applied).
pub fn expert_gamma(
    beta: f64,
    omega_sigma: f64,
    gamma_norm: f64,
    l_kappa: f64,
    l_mu: f64,
    tau: f64,
) -> f64 {
    beta * omega_sigma + rkhs_term(gamma_norm, l_kappa, tau) + l_mu * tau
}

/// How the aggregation weights ω_i enter σ(x) and γ(x) (spec §4 gap 3).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum WeightRule {
    /// Clamp ω_i at ≥ 0, then divide by their sum (uniform if the sum is 0). Default: valid
    /// for every aggregation, BCM and rBCM included.
    #[default]
    Normalise,
    /// Use the weights as given (MoE, normalised PoE/gPoE, where Σω = 1 already).
    AsGiven,
    /// Use the weights as given and add |1 − Σω_i|·Γ·σ_f.
    PriorTerm {
        /// RKHS-norm bound Γ.
        gamma_norm: f64,
        /// Prior standard deviation σ_f.
        sigma_f: f64,
    },
}

/// Lemma 1's η(x) = β·σ(x) + γ(x) with σ(x) = Σ ω_i σ_i and γ(x) = Σ ω_i γ_i over the
/// aggregated experts (`weights`, `sigmas` = posterior **standard deviations**, `gammas`, all
/// of the same length), weights treated by `rule`. No allocation.
pub fn eta(
    beta: f64,
    weights: &[f64],
    sigmas: &[f64],
    gammas: &[f64],
    rule: WeightRule,
) -> Result<f64> {
    let m = weights.len();
    if sigmas.len() != m {
        return Err(BoundError::Dimension {
            what: "sigmas",
            expected: m,
            found: sigmas.len(),
        });
    }
    if gammas.len() != m {
        return Err(BoundError::Dimension {
            what: "gammas",
            expected: m,
            found: gammas.len(),
        });
    }
    let (sigma, gamma) = weighted_sigma_gamma(weights, sigmas, gammas, rule);
    let extra = match rule {
        WeightRule::PriorTerm {
            gamma_norm,
            sigma_f,
        } => (1.0 - weights.iter().sum::<f64>()).abs() * gamma_norm * sigma_f,
        _ => 0.0,
    };
    Ok(beta * sigma + gamma + extra)
}

/// (σ(x), γ(x)) = (Σ ω_i σ_i, Σ ω_i γ_i) with the weights treated by `rule`. Slices must have
/// equal lengths (checked by [`eta`]; here the shortest wins).
pub fn weighted_sigma_gamma(
    weights: &[f64],
    sigmas: &[f64],
    gammas: &[f64],
    rule: WeightRule,
) -> (f64, f64) {
    let it = weights.iter().zip(sigmas).zip(gammas);
    match rule {
        WeightRule::Normalise => {
            let total: f64 = weights.iter().map(|w| w.max(0.0)).sum();
            if total > 0.0 {
                let (s, g) = it.fold((0.0, 0.0), |(s, g), ((w, si), gi)| {
                    let w = w.max(0.0);
                    (s + w * si, g + w * gi)
                });
                (s / total, g / total)
            } else {
                let n = weights.len().max(1) as f64;
                let (s, g) = it.fold((0.0, 0.0), |(s, g), ((_, si), gi)| (s + si, g + gi));
                (s / n, g / n)
            }
        }
        WeightRule::AsGiven | WeightRule::PriorTerm { .. } => {
            it.fold((0.0, 0.0), |(s, g), ((w, si), gi)| (s + w * si, g + w * gi))
        }
    }
}

/// Remark 2's practical bound η(x) ≈ 2β·σ(x) (γ ≪ βσ for a small enough τ).
pub fn eta_practical(beta: f64, sigma: f64) -> f64 {
    2.0 * beta * sigma
}

/// Lemma 1 set up once for an ARD squared-exponential kernel shared by the experts: β from
/// the input box, τ and δ; L_κ from σ_f and ℓ; the RKHS term from Γ. Per expert, call
/// [`LemmaOne::expert_gamma`] with ‖α_i‖₁ and N_i, then [`LemmaOne::eta`].
///
/// ω_σ uses the safe bound ‖(K_i + σ_n²I)⁻¹‖ ≤ 1/σ_n², so σ_n must be > 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LemmaOne {
    /// β of eq. 13.
    pub beta: f64,
    /// Grid constant τ.
    pub tau: f64,
    /// RKHS-norm bound Γ.
    pub gamma_norm: f64,
    /// Kernel Lipschitz constant L_κ.
    pub l_kappa: f64,
    /// σ_f.
    pub sigma_f: f64,
    /// σ_n².
    pub noise_var: f64,
    /// Weight treatment (gap 3).
    pub rule: WeightRule,
}

impl LemmaOne {
    /// Sets up the bound for an SE-ARD kernel (σ_f, ℓ) with noise σ_n > 0 on the box
    /// [`lower`, `upper`], grid constant τ, failure probability δ per expert and RKHS bound Γ;
    /// weights normalised ([`WeightRule::Normalise`]).
    #[allow(clippy::too_many_arguments)]
    pub fn se(
        lower: &[f64],
        upper: &[f64],
        tau: f64,
        delta: f64,
        gamma_norm: f64,
        sigma_f: f64,
        lengthscales: &[f64],
        sigma_n: f64,
    ) -> Result<Self> {
        non_negative("gamma_norm", gamma_norm)?;
        positive("sigma_n", sigma_n)?;
        if lengthscales.len() != lower.len() {
            return Err(BoundError::Dimension {
                what: "lengthscales",
                expected: lower.len(),
                found: lengthscales.len(),
            });
        }
        Ok(Self {
            beta: beta(lower, upper, tau, delta)?,
            tau,
            gamma_norm,
            l_kappa: kernel_lipschitz_se(sigma_f, lengthscales)?,
            sigma_f,
            noise_var: sigma_n * sigma_n,
            rule: WeightRule::Normalise,
        })
    }

    /// γ_i of an expert with ‖α_i‖₁ = `alpha_l1` and `n_points` stored points.
    pub fn expert_gamma(&self, alpha_l1: f64, n_points: usize) -> f64 {
        let omega = sigma_modulus(
            self.tau,
            self.l_kappa,
            n_points,
            1.0 / self.noise_var,
            self.sigma_f,
        );
        expert_gamma(
            self.beta,
            omega,
            self.gamma_norm,
            self.l_kappa,
            self.l_kappa * alpha_l1,
            self.tau,
        )
    }

    /// η(x) from the aggregated experts' weights, posterior standard deviations and γ_i.
    pub fn eta(&self, weights: &[f64], sigmas: &[f64], gammas: &[f64]) -> Result<f64> {
        eta(self.beta, weights, sigmas, gammas, self.rule)
    }
}

/// An empirically calibrated error bound η_cal = β_cal·σ.
///
/// Calibration: the first `n_cal` calls of [`CalibratedBound::observe`] each record
/// r = |y − μ|/max(σ, `sigma_floor`) (σ a standard deviation, y what the model learns from).
/// On the `n_cal`-th sample β_cal is frozen to the `level` quantile of the recorded r
/// (linear interpolation between order statistics, NumPy's default "linear" method); later
/// calls are ignored. [`CalibratedBound::freeze`] freezes early on what was recorded. To
/// calibrate on "the first half" of a stream of known length N, use `n_cal` = the number of
/// predicted samples in that half. Before freezing, [`CalibratedBound::eta`] returns `None`.
///
/// The buffer of `n_cal` ratios is allocated once in `new`; `observe` does not allocate, and
/// the freeze selects the two order statistics in place (O(n_cal), once: it runs on the
/// control thread, at the tick of the `n_cal`-th sample).
#[derive(Debug, Clone)]
pub struct CalibratedBound {
    n_cal: usize,
    level: f64,
    sigma_floor: f64,
    ratios: Vec<f64>,
    beta_cal: Option<f64>,
}

impl CalibratedBound {
    /// Calibrates on the first `n_cal` ≥ 1 samples at quantile `level` ∈ (0, 1] (0.95 in the
    /// design), with σ floored at 1e-12.
    pub fn new(n_cal: usize, level: f64) -> Result<Self> {
        if n_cal == 0 {
            return Err(BoundError::Invalid {
                what: "n_cal",
                value: 0.0,
                why: "must be >= 1",
            });
        }
        if !(level > 0.0 && level <= 1.0) {
            return Err(BoundError::Invalid {
                what: "level",
                value: level,
                why: "must be in (0, 1]",
            });
        }
        Ok(Self {
            n_cal,
            level,
            sigma_floor: 1e-12,
            ratios: Vec::with_capacity(n_cal),
            beta_cal: None,
        })
    }

    /// Changes the floor applied to σ in the ratio.
    pub fn with_sigma_floor(mut self, sigma_floor: f64) -> Self {
        self.sigma_floor = sigma_floor;
        self
    }

    /// Records one sample while calibrating; freezes on the `n_cal`-th. Non-finite ratios are
    /// skipped (not counted). Returns true once frozen.
    pub fn observe(&mut self, y: f64, mu: f64, sigma: f64) -> bool {
        if self.beta_cal.is_none() {
            let r = (y - mu).abs() / sigma.max(self.sigma_floor);
            if r.is_finite() {
                self.ratios.push(r);
            }
            if self.ratios.len() >= self.n_cal {
                self.freeze();
            }
        }
        self.beta_cal.is_some()
    }

    /// Freezes β_cal on the ratios recorded so far (no-op if frozen or nothing recorded).
    pub fn freeze(&mut self) {
        if self.beta_cal.is_some() || self.ratios.is_empty() {
            return;
        }
        self.beta_cal = Some(quantile_in_place(&mut self.ratios, self.level));
    }

    /// Starts calibrating afresh (keeps the buffer's capacity; no allocation).
    pub fn reset(&mut self) {
        self.ratios.clear();
        self.beta_cal = None;
    }

    /// Samples recorded so far.
    pub fn recorded(&self) -> usize {
        self.ratios.len()
    }

    /// β_cal once frozen.
    pub fn beta_cal(&self) -> Option<f64> {
        self.beta_cal
    }

    /// η_cal = β_cal·σ once frozen.
    pub fn eta(&self, sigma: f64) -> Option<f64> {
        self.beta_cal.map(|b| b * sigma)
    }
}

/// Quantile with linear interpolation between order statistics (position h = level·(n − 1)),
/// by selection: `values` (finite, non-empty) is reordered.
fn quantile_in_place(values: &mut [f64], level: f64) -> f64 {
    let n = values.len();
    let h = level * (n - 1) as f64;
    let lo = (h.floor() as usize).min(n - 1);
    let (_, at_lo, above) = values.select_nth_unstable_by(lo, f64::total_cmp);
    let at_lo = *at_lo;
    // The next order statistic is the smallest of those above (none: lo is the last).
    let at_hi = above.iter().copied().fold(f64::INFINITY, f64::min);
    if at_hi.is_finite() {
        at_lo + (h - lo as f64) * (at_hi - at_lo)
    } else {
        at_lo
    }
}
