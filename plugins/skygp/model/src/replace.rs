//! REPLACE (spec §3.6.1): does a full SkyGP-Dense expert swap the new point in, and for
//! which stored slot? Only the decision lives here; the swap itself is in `update.rs`.
//! No allocation.

use crate::config::ReplaceRule;
use crate::expert::Expert;
use gpn_gp_core::kernel::{ArdKernel, Kernel};

fn euclid(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// The stored slot s* that (x, y) should overwrite, or `None` to reject.
/// `use_drop_center = false` (ablation DC off) always applies the pre-first-drop rule.
pub(crate) fn victim(
    rule: ReplaceRule,
    use_drop_center: bool,
    e: &Expert,
    kernel: &ArdKernel,
    x: &[f64],
) -> Option<usize> {
    let (n, d) = (e.n, x.len());
    let c = &e.center[..];
    let c_off = &e.center_off[..];
    let with_drop = use_drop_center && e.n_off > 0;
    let xs = |s: usize| &e.x[s * d..(s + 1) * d];
    match rule {
        ReplaceRule::EuclidRef => {
            if with_drop {
                // e(z) = ‖z − c‖ − ‖z − c_off‖; argmax over stored ∪ {x}, ties → stored
                // (np.argmax returns the first maximum).
                let score = |z: &[f64]| euclid(z, c) - euclid(z, c_off);
                let (best, best_e) = first_max((0..n).map(|s| score(xs(s))));
                (best_e >= score(x)).then_some(best)
            } else {
                // s* = argmax ‖x_s − c‖; accept iff ‖x − c‖ < ‖x_s* − c‖.
                let (best, best_d) = first_max((0..n).map(|s| euclid(xs(s), c)));
                (euclid(x, c) < best_d).then_some(best)
            }
        }
        ReplaceRule::KernelMin => {
            if with_drop {
                // a(z) = κ(z, c) − κ(z, c_off); s* = argmin a(x_s); accept iff a(x_s*) < a(x).
                let a = |z: &[f64]| kernel.value(z, c) - kernel.value(z, c_off);
                let (best, best_a) = first_max((0..n).map(|s| -a(xs(s))));
                (-best_a < a(x)).then_some(best)
            } else {
                // s* = argmin κ(x_s, c); accept iff κ(x, c) > κ(x_s*, c).
                let (best, neg_k) = first_max((0..n).map(|s| -kernel.value(xs(s), c)));
                (kernel.value(x, c) > -neg_k).then_some(best)
            }
        }
        ReplaceRule::PaperLiteral => {
            // Gate: D_temp = {s : κ(x_s, c) > κ(x, c)} must be empty.
            let kx = kernel.value(x, c);
            let (far, _) = first_max((0..n).map(|s| -kernel.value(xs(s), c)));
            let k_max = (0..n)
                .map(|s| kernel.value(xs(s), c))
                .fold(f64::NEG_INFINITY, f64::max);
            if k_max > kx {
                return None;
            }
            if !with_drop {
                // No drop center yet (the paper defines no rule): the gate alone decides.
                return Some(far);
            }
            // Δ = max_s a(x_s) − a(x) < 0, then evict the point farthest from c.
            let a = |z: &[f64]| kernel.value(z, c) - kernel.value(z, c_off);
            let a_max = (0..n).map(|s| a(xs(s))).fold(f64::NEG_INFINITY, f64::max);
            (a_max - a(x) < 0.0).then_some(far)
        }
    }
}

/// (index, value) of the first maximum.
fn first_max(it: impl Iterator<Item = f64>) -> (usize, f64) {
    let mut best = (0, f64::NEG_INFINITY);
    for (i, v) in it.enumerate() {
        if v > best.1 {
            best = (i, v);
        }
    }
    best
}
