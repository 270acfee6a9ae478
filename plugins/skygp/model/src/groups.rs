//! Output groups: outputs whose kernels differ only by σ_f and share the noise-to-signal
//! ratio σ_n²/σ_f² share one factorisation per expert.
//!
//! With K_o = s_o·K_g (s_o = σ_f,o²/σ_f,g²) the mean k_oᵀK_o⁻¹y_o = k_gᵀK_g⁻¹y_o needs no
//! scale, and σ_o² = s_o·(σ_f,g² − vᵀv). The group's factor is built with the kernel and
//! noise of its first output, so the pivot floor and refactor jitter act in that output's
//! units. Outputs with other lengthscales, another kernel formula or another ratio get
//! their own group (and factor).
//!
//! With drift (uncertainty injection) the injected variance ρ(age) is in the outputs' own
//! units and the same for all of them, so scaled outputs could no longer share a factor
//! exactly: K_o + diag(σ² + ρ) ≠ s_o·(K_g + diag(σ_g² + ρ)) unless s_o = 1. Then outputs
//! share a factor only when their kernels and noises are identical (`exact`).

use crate::config::OutputHyper;
use gpn_gp_core::kernel::ArdKernel;

/// One shared factorisation: its kernel and noise variance.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub kernel: ArdKernel,
    pub noise_var: f64,
}

/// How an output reads its group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutputMap {
    pub group: usize,
    /// σ_f,o² / σ_f,g².
    pub scale: f64,
    /// σ_f,o², the prior variance of this output.
    pub prior_var: f64,
}

/// The shape (kernel formula and lengthscales) of each group as an index into the distinct
/// shapes, in order of first appearance: groups of one shape (outputs that differ only in
/// σ_f and σ_n) share the scaled squared distances of a prediction.
pub(crate) fn shapes(groups: &[Group]) -> Vec<usize> {
    // The group index of each shape's first group.
    let mut leaders: Vec<usize> = Vec::new();
    let mut out = Vec::with_capacity(groups.len());
    for (gi, g) in groups.iter().enumerate() {
        let found = leaders
            .iter()
            .position(|&l| groups[l].kernel.same_shape(&g.kernel));
        out.push(found.unwrap_or_else(|| {
            leaders.push(gi);
            leaders.len() - 1
        }));
    }
    out
}

/// Groups the outputs (first output of each group defines it). Group 0 holds output 0,
/// whose kernel also ranks experts and sizes the window. `exact`: group only outputs with
/// identical σ_f and σ_n too (drift on).
pub(crate) fn build(hyper: &[OutputHyper], exact: bool) -> (Vec<Group>, Vec<OutputMap>) {
    let mut groups: Vec<Group> = Vec::new();
    let mut maps = Vec::with_capacity(hyper.len());
    for h in hyper {
        let ratio = h.noise_var / h.kernel.sigma_f2();
        let found = groups.iter().position(|g| {
            let gr = g.noise_var / g.kernel.sigma_f2();
            let same_scale = !exact
                || (g.kernel.sigma_f2() == h.kernel.sigma_f2() && g.noise_var == h.noise_var);
            g.kernel.same_shape(&h.kernel)
                && (gr - ratio).abs() <= 1e-12 * gr.abs().max(ratio.abs())
                && same_scale
        });
        let gi = found.unwrap_or_else(|| {
            groups.push(Group {
                kernel: h.kernel.clone(),
                noise_var: h.noise_var,
            });
            groups.len() - 1
        });
        let scale = h.kernel.sigma_f2() / groups[gi].kernel.sigma_f2();
        maps.push(OutputMap {
            group: gi,
            scale,
            prior_var: h.kernel.sigma_f2(),
        });
    }
    (groups, maps)
}
