//! INSERT_POS (spec §3.6.2, eqs. 7–8): where a new expert enters 𝒯 next to the nearest
//! expert ν_nr. No allocation.

use crate::config::InsertSide;
use gpn_gp_core::kernel::ArdKernel;

/// Insertion index for a new expert, given ν_nr, |𝒯| = n ≥ 2 and the similarity
/// `sim(pos)` of x to the center at list position `pos` (larger = closer). Neighbours:
/// left = max(ν_nr − 1, 0), right = min(ν_nr + 1, n − 1).
///
/// * Paper ([R]): insert at ν_nr + 1 if the right one is closer (d_right < d_left), else
///   at ν_nr, so the new expert sits between ν_nr and its closer neighbour.
/// * RefMirror ([C]): insert at ν_nr + 1 iff sim_right < sim_left, else at ν_nr (the
///   mirror image); `sim` should then be [`reference_similarity`].
pub(crate) fn position(
    side: InsertSide,
    nu_nr: usize,
    n: usize,
    mut sim: impl FnMut(usize) -> f64,
) -> usize {
    debug_assert!(n >= 2 && nu_nr < n);
    let (s_left, s_right) = (sim(nu_nr.saturating_sub(1)), sim((nu_nr + 1).min(n - 1)));
    let after = match side {
        InsertSide::Paper => s_right > s_left,
        InsertSide::RefMirror => s_right < s_left,
    };
    if after { nu_nr + 1 } else { nu_nr }
}

/// The similarity the reference code actually compares when inserting: its kernel
/// helper receives row vectors where it expects columns, and NumPy broadcasting turns
/// the result into σ_f²·exp(−½ (x₀ − c₀)² Σ_j ℓ_j⁻²) — only the **first** input
/// coordinate counts. Reproducing it is what makes the list order (and so the selected
/// positions and expert counts) match the reference step for step (anchors: all 22
/// insertions of the first 500 KIN40K steps, Fast and Dense).
pub(crate) fn reference_similarity(kernel: &ArdKernel, x: &[f64], c: &[f64]) -> f64 {
    let d0 = x[0] - c[0];
    let s: f64 = kernel
        .inv_lengthscales()
        .iter()
        .map(|w| (d0 * w) * (d0 * w))
        .sum();
    kernel.sigma_f2() * (-0.5 * s).exp()
}
