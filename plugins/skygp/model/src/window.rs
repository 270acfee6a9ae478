//! Candidate window around the previous nearest expert ν_prev (spec §3.4 P2, Alg. 1
//! Steps I–II). Returns a half-open range of list positions. No allocation.

use crate::config::{ValidConfig, WindowMode};
use gpn_gp_core::kernel::{ArdKernel, Kernel};

/// Candidate positions [lo, hi) among `n` experts for input `x`, given the previous
/// step's input and nearest position (`None` before the first selection: all experts).
pub(crate) fn candidates(
    cfg: &ValidConfig,
    kernel: &ArdKernel,
    x: &[f64],
    prev: Option<(usize, &[f64])>,
    n: usize,
) -> (usize, usize) {
    let Some((nu, x_prev)) = prev else {
        return (0, n);
    };
    let nu = nu.min(n.saturating_sub(1));
    let w_bar = cfg.w_bar as f64;
    match cfg.window_mode {
        WindowMode::Reference => {
            // s = int(min(W̄, exp(‖(x − x_prev) ⊘ ℓ‖ / ϱ))), h = s // 2.
            let s = if cfg.use_adaptive_window {
                let r = kernel.scaled_sq_dist(x, x_prev).sqrt();
                w_bar.min((r / cfg.rho_window).exp()) as usize
            } else {
                cfg.w_bar
            };
            let h = s / 2;
            (nu.saturating_sub(h), n.min(nu + h + 1))
        }
        WindowMode::Paper => {
            // W = min(W̄, ⌊exp((1/κ(x_prev, x))/ϱ)⌋), candidates ν ± W.
            let w = if cfg.use_adaptive_window {
                let d_tmp = 1.0 / kernel.value(x_prev, x);
                w_bar.min((d_tmp / cfg.rho_window).exp()).floor() as usize
            } else {
                cfg.w_bar
            };
            (nu.saturating_sub(w), n.min(nu + w + 1))
        }
    }
}
