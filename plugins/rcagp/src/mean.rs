//! The robust prior mean from expert corrections (spec §1.6, A7, with the fixes of §5
//! item 17): a constant m built from flagged outliers, their noisy corrections and their
//! nearest inliers.
//!
//! For each flagged outlier o with input x_o, contaminated value y_o and correction ȳ_o:
//!
//! 1. label belief: α_o = |y_o − ȳ|/s_y (z-score against all data, s_y with ddof = 1),
//!    β_o = 1e−2, label ō_o = 1 ⇒ E\[δ_o\] = (α_o + 1)/(α_o + β_o + 1);
//! 2. the J = 3 inliers with the largest RBF k(x_o, ·) (the reference code's unfitted
//!    kernel, ℓ = 0.693): μ_o = their mean y, τ_o = 1/(unbiased variance + 1e−6), the
//!    *precision* (the paper's Algorithm 1 writes the variance);
//! 3. E\[μ̄_o\] = (τ_o μ_o + ȳ_o/σ²_corr)/(τ_o + 1/σ²_corr);
//! 4. m = ((1/|O|) Σ_o E\[δ_o\] E\[μ̄_o\] − μ_y)/s_std, with (μ_y, s_std) the statistics that
//!    standardise the targets (corrections are in raw units; pass (0, 1) to stay raw).

use crate::error::RcagpError;

/// Neighbours per outlier (J).
pub const NEIGHBOURS: usize = 3;
/// β_o of the label belief (the reference code's value).
pub const BETA_O: f64 = 1e-2;
/// Lengthscale of the neighbour kernel (GPyTorch's unfitted default softplus(0)).
pub const NEIGHBOUR_LENGTHSCALE: f64 = std::f64::consts::LN_2;

/// Inputs of [`expert_mean`].
#[derive(Debug, Clone, Copy)]
pub struct ExpertInput<'a> {
    /// Inputs, n×d row-major.
    pub x: &'a [f64],
    /// Input dimension.
    pub d: usize,
    /// Targets (raw units), n.
    pub y: &'a [f64],
    /// Indices of the flagged outliers.
    pub flagged: &'a [usize],
    /// The expert's corrections ȳ_o (raw units), one per flagged index.
    pub corrections: &'a [f64],
    /// σ²_corr, the variance of a correction (1.0 in the paper).
    pub correction_var: f64,
    /// μ_y and s_y that standardise the targets.
    pub standardize: (f64, f64),
}

/// The expert-guided constant prior mean (see the module doc).
pub fn expert_mean(input: &ExpertInput<'_>) -> Result<f64, RcagpError> {
    let (x, d, y) = (input.x, input.d, input.y);
    let n = y.len();
    if d == 0 || x.len() != n * d {
        return Err(RcagpError::Dimension {
            what: "x",
            expected: n * d.max(1),
            found: x.len(),
        });
    }
    if input.flagged.is_empty() || input.flagged.len() != input.corrections.len() {
        return Err(RcagpError::Invalid(format!(
            "expert mean needs ≥ 1 flagged outlier and one correction each, found {} and {}",
            input.flagged.len(),
            input.corrections.len()
        )));
    }
    if input.flagged.iter().any(|&o| o >= n) {
        return Err(RcagpError::Invalid("flagged index out of range".into()));
    }
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if n < 2 || !positive(input.correction_var) || !positive(input.standardize.1) {
        return Err(RcagpError::Invalid(
            "expert mean needs n ≥ 2, correction_var > 0 and a positive target scale".into(),
        ));
    }
    let mean = y.iter().sum::<f64>() / n as f64;
    let sd = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let inliers: Vec<usize> = (0..n).filter(|l| !input.flagged.contains(l)).collect();
    if inliers.len() < NEIGHBOURS {
        return Err(RcagpError::Invalid(format!(
            "expert mean needs ≥ {NEIGHBOURS} inliers, found {}",
            inliers.len()
        )));
    }
    let mut total = 0.0;
    for (&o, &corr) in input.flagged.iter().zip(input.corrections) {
        let alpha_o = if sd > 0.0 {
            (y[o] - mean).abs() / sd
        } else {
            0.0
        };
        let e_delta = (alpha_o + 1.0) / (alpha_o + BETA_O + 1.0);
        let xo = &x[o * d..(o + 1) * d];
        // Largest kernel value = smallest distance; ties keep the lower index.
        let mut ranked: Vec<(f64, usize)> = inliers
            .iter()
            .map(|&l| {
                let r2: f64 = x[l * d..(l + 1) * d]
                    .iter()
                    .zip(xo)
                    .map(|(a, b)| ((a - b) / NEIGHBOUR_LENGTHSCALE).powi(2))
                    .sum();
                (r2, l)
            })
            .collect();
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let nb: Vec<f64> = ranked[..NEIGHBOURS].iter().map(|&(_, l)| y[l]).collect();
        let mu_o = nb.iter().sum::<f64>() / NEIGHBOURS as f64;
        let var_o = nb.iter().map(|v| (v - mu_o).powi(2)).sum::<f64>() / (NEIGHBOURS - 1) as f64;
        let tau_o = 1.0 / (var_o + 1e-6);
        let prec_c = 1.0 / input.correction_var;
        let e_mu = (tau_o * mu_o + corr * prec_c) / (tau_o + prec_c);
        total += e_delta * e_mu;
    }
    let (mu_y, s_y) = input.standardize;
    Ok((total / input.flagged.len() as f64 - mu_y) / s_y)
}
