//! The UCB rule (spec §2.5): x_{t+1} = argmax_x μ(x) + β_{t+1}·σ(x) with
//! β = scale·(sqrt(2 ln(2/δ) + ln det(I + Σ⁻¹K)) + B), the logdet taken over the same data
//! set as μ and σ; and the argmax over a candidate grid (§7 #13: a dense grid, with an
//! optional golden-section refinement in 1-D).

/// β of §2.5: `scale`·(sqrt(2 ln(2/δ) + logdet) + B). A negative logdet (rounding) counts
/// as 0.
pub fn beta(delta: f64, logdet_info: f64, b_norm: f64, scale: f64) -> f64 {
    scale * ((2.0 * (2.0 / delta).ln() + logdet_info.max(0.0)).sqrt() + b_norm)
}

/// A tensor grid over the box `domain` with spacing at most `step` per input, endpoints
/// included; row-major. Meant for d ≤ 3.
pub fn grid(domain: &[(f64, f64)], step: f64) -> Vec<f64> {
    let axes: Vec<Vec<f64>> = domain
        .iter()
        .map(|&(lo, hi)| {
            // A float → count conversion of a finite, non-negative value.
            let cells = (((hi - lo) / step).ceil().max(1.0)) as usize;
            (0..=cells)
                .map(|k| lo + (hi - lo) * k as f64 / cells as f64)
                .collect()
        })
        .collect();
    let total: usize = axes.iter().map(Vec::len).product();
    let mut out = Vec::with_capacity(total * axes.len());
    for flat in 0..total {
        let mut rest = flat;
        let mut point = vec![0.0; axes.len()];
        for (j, axis) in axes.iter().enumerate().rev() {
            point[j] = axis[rest % axis.len()];
            rest /= axis.len();
        }
        out.extend_from_slice(&point);
    }
    out
}

/// Index of the largest μ + β·σ (σ = sqrt(var)); ties go to the lowest index, NaN scores
/// never win. `None` for an empty grid.
pub fn argmax_ucb(mean: &[f64], var: &[f64], beta: f64) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, (m, v)) in mean.iter().zip(var).enumerate() {
        let score = m + beta * v.max(0.0).sqrt();
        if score.is_nan() {
            continue;
        }
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

/// Golden-section search for the maximum of `f` on [max(lo, c − h), min(hi, c + h)],
/// `iters` iterations; returns the best of the final bracket's probe and `c` itself, so
/// the result is never worse than the grid point.
pub fn refine_1d(
    c: f64,
    h: f64,
    lo: f64,
    hi: f64,
    iters: usize,
    mut f: impl FnMut(f64) -> f64,
) -> (f64, f64) {
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = ((c - h).max(lo), (c + h).min(hi));
    let mut x1 = b - inv_phi * (b - a);
    let mut x2 = a + inv_phi * (b - a);
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..iters {
        if f1 >= f2 {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - inv_phi * (b - a);
            f1 = f(x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + inv_phi * (b - a);
            f2 = f(x2);
        }
    }
    let fc = f(c);
    let (xb, fb) = if f1 >= f2 { (x1, f1) } else { (x2, f2) };
    if fb > fc { (xb, fb) } else { (c, fc) }
}
