//! Initial hyperparameters of a kernel on standardised data (spec §2.5 [REC]), optionally
//! seeded by the `"hyper"` key the node and `gp-node eval` pass (an ARD-SE fit:
//! σ_f, σ_n, lengthscales in original units), and the multi-start candidates.
//!
//! Base values, with the data standardised (targets to unit variance):
//!
//! * each signal variance: 1/n_s, n_s = number of variance-carrying terms (the unit target
//!   variance split across them; an unscaled LIN counts as one and gets weights
//!   1/ℓ_j² = 1/(|dims|·n_s));
//! * SE/RQ lengthscale ℓ_j: the seed's ℓ_j/x_scale_j if given, else the median of |Δx_j|
//!   over sample pairs times √|dims| (so that r² ≈ 1 for a typical pair with |dims| inputs);
//! * PER: ℓ_j = √|dims| (dimensionless in the R&W form), p_j = half the range of input j;
//! * RQ α = 1; a scaled LIN's free weights 1 (its first is fixed to 1);
//! * noise s² = mean_o σ_n,o²/y_scale_o² from the seed, else 0.1.
//!
//! Candidates (multi-start; the paper gives no initialisation): a grid around the base
//! values — periods × 0.8^k (k = 0..9), noise × {1, 0.1, 0.01}, lengthscales (SE/RQ/PER ℓ)
//! × {1, ½, 2} — base first, cut at `count`; the offline phase scores them by the
//! collapsed bound on the first data and optimises the best few.

use crate::expr::Base;
use crate::kernel::{KernelSpec, ParamKind};
use crate::rng::Rng;

/// Data summaries the initial values need (standardised units).
#[derive(Debug, Clone, PartialEq)]
pub struct DataSummary {
    /// Median |Δx_j| over sample pairs, per input.
    pub median_abs_diff: Vec<f64>,
    /// max − min of each input.
    pub range: Vec<f64>,
    /// Lengthscales from the seed (standardised), if given.
    pub seed_lengthscales: Option<Vec<f64>>,
    /// Noise variance from the seed (standardised), if given.
    pub seed_noise_var: Option<f64>,
}

impl DataSummary {
    /// Summaries of n standardised inputs (row-major n×d), from at most 2,000 random
    /// pairs.
    pub fn of(x: &[f64], d: usize, rng: &mut Rng) -> DataSummary {
        let n = x.len() / d.max(1);
        let mut range = vec![0.0; d];
        let mut median_abs_diff = vec![1.0; d];
        if n >= 2 {
            for (j, r) in range.iter_mut().enumerate() {
                let (lo, hi) = (0..n)
                    .map(|i| x[i * d + j])
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                        (lo.min(v), hi.max(v))
                    });
                *r = hi - lo;
            }
            let pairs = 2000.min(n * (n - 1) / 2);
            let mut diffs = vec![Vec::with_capacity(pairs); d];
            for _ in 0..pairs {
                let a = rng.below(n);
                let mut b = rng.below(n - 1);
                if b >= a {
                    b += 1;
                }
                for (j, dj) in diffs.iter_mut().enumerate() {
                    dj.push((x[a * d + j] - x[b * d + j]).abs());
                }
            }
            for (j, dj) in diffs.iter_mut().enumerate() {
                dj.sort_by(f64::total_cmp);
                let med = dj[dj.len() / 2];
                median_abs_diff[j] = if med > 1e-9 { med } else { 1.0 };
                if range[j] <= 1e-9 {
                    range[j] = 1.0;
                }
            }
        } else {
            range.fill(1.0);
        }
        DataSummary {
            median_abs_diff,
            range,
            seed_lengthscales: None,
            seed_noise_var: None,
        }
    }
}

/// The base initial log-parameters of `spec` (kernel parameters, then ln s²).
pub fn base_psi(spec: &KernelSpec, data: &DataSummary) -> Vec<f64> {
    let n_scale = spec
        .leaves
        .iter()
        .filter(|l| l.base == Base::Lin && !l.lin_fixed_first)
        .count()
        + spec
            .params()
            .iter()
            .filter(|p| p.kind == ParamKind::Variance)
            .count();
    let n_scale = n_scale.max(1) as f64;
    let mut psi = vec![0.0; spec.n_params() + 1];
    for leaf in &spec.leaves {
        let dl = leaf.dims.len() as f64;
        if let Some(v) = leaf.var {
            psi[v] = (1.0 / n_scale).ln();
        }
        let ell_dims = if leaf.lin_fixed_first {
            &leaf.dims[1..]
        } else {
            &leaf.dims[..]
        };
        for (k, &j) in ell_dims.iter().enumerate() {
            let ell = match leaf.base {
                Base::Se | Base::Rq => match &data.seed_lengthscales {
                    Some(s) => s[j],
                    None => data.median_abs_diff[j] * dl.sqrt(),
                },
                Base::Per => dl.sqrt(),
                Base::Lin if leaf.lin_fixed_first => 1.0,
                Base::Lin => (dl * n_scale).sqrt(),
            };
            psi[leaf.ell0 + k] = ell.ln();
        }
        match leaf.base {
            Base::Per => {
                for (k, &j) in leaf.dims.iter().enumerate() {
                    psi[leaf.extra0 + k] = (0.5 * data.range[j]).ln();
                }
            }
            Base::Rq => psi[leaf.extra0] = 0.0,
            Base::Se | Base::Lin => {}
        }
    }
    for (i, p) in spec.params().iter().enumerate() {
        // Product variances (not owned by a leaf).
        if p.kind == ParamKind::Variance && p.owner.starts_with("prod#") {
            psi[i] = (1.0 / n_scale).ln();
        }
    }
    let noise = data.seed_noise_var.unwrap_or(0.1).clamp(1e-6, 10.0);
    psi[spec.n_params()] = noise.ln();
    psi
}

/// Periods tried, as factors of half the input range: a geometric grid (ratio 0.8) down
/// to about a fifteenth of the range.
const PERIOD_FACTORS: [f64; 10] = [
    1.0,
    0.8,
    0.64,
    0.512,
    0.4096,
    0.32768,
    0.262144,
    0.2097152,
    0.16777216,
    0.134217728,
];

/// Up to `count` initial points: the base values first, then the variations listed in
/// the module doc (only those that change something for this kernel).
pub fn candidates(spec: &KernelSpec, data: &DataSummary, count: usize) -> Vec<Vec<f64>> {
    let base = base_psi(spec, data);
    let has_per = spec.leaves.iter().any(|l| l.base == Base::Per);
    let has_ell = spec
        .params()
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Lengthscale { .. }));
    // A grid of (lengthscale factor, period factor, noise factor), base first: the data
    // pick the basin (periods especially are multimodal), the optimiser refines it.
    let ell_f: &[f64] = if has_ell { &[1.0, 0.5, 2.0] } else { &[1.0] };
    let per_f: &[f64] = if has_per { &PERIOD_FACTORS } else { &[1.0] };
    let noise_f: [f64; 3] = [1.0, 0.1, 0.01];
    let noise_at = spec.n_params();
    let mut out = Vec::new();
    for &pf in per_f {
        for &nf in &noise_f {
            for &lf in ell_f {
                if out.len() >= count {
                    break;
                }
                let mut psi = base.clone();
                for (i, p) in spec.params().iter().enumerate() {
                    match p.kind {
                        ParamKind::Lengthscale { .. } => psi[i] += lf.ln(),
                        ParamKind::Period { .. } => psi[i] += pf.ln(),
                        _ => {}
                    }
                }
                psi[noise_at] += nf.ln();
                out.push(psi);
            }
        }
    }
    out.truncate(count.max(1));
    out
}
