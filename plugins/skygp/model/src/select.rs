//! Selection, spec §3.4 P1–P5: candidate window, staleness filter, the Ncal most
//! similar experts (I_agg), ν_prev/x_prev bookkeeping and the per-step decay clock
//! (with `decay_clock = "steps"` every selection first ages all experts by one step, as
//! the reference's predict multiplies every weight by ρ before filtering).
//! Real-time: no allocation (top-Ncal by insertion into reserved arrays).

use crate::config::{DecayClock, Distance, EmptyCandidates};
use crate::model::SkyGp;
use crate::window;
use gpn_gp_core::kernel::{ArdKernel, Kernel};

/// Outcome of a selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Selection {
    /// 𝒯 is empty: predict the prior; the update appends a new expert.
    NoExperts,
    /// Every candidate was stale, [R] rule: prior, I_agg = [].
    EmptyPrior,
    /// Every candidate was stale, [C] rule: (0, 10), I_agg = the previous selection.
    EmptyReference,
    /// I_agg (in `cache.sel`) is non-empty.
    Selected,
}

impl SkyGp {
    /// Similarity of x to a center (larger = nearer): κ(x, c) or −‖x − c‖².
    #[inline]
    pub(crate) fn similarity(&self, x: &[f64], c: &[f64]) -> f64 {
        match self.cfg.distance {
            Distance::Kernel => self.groups[0].kernel.value(x, c),
            Distance::Euclid => -x.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum::<f64>(),
        }
    }

    /// ϑ_i = ρ^(age) ≤ ϑ̄: the expert is too old to be selected (never with ρ = 1).
    #[inline]
    fn is_stale(&self, stamp: f64) -> bool {
        // ϑ_i > ϑ̄  ⇔  age·ln ρ > ln ϑ̄.
        (self.clock - stamp) * self.ln_rho <= self.ln_theta
    }

    /// Runs P1–P5 for x and records the result in `cache.sel`. No allocation.
    pub(crate) fn select(&mut self, x: &[f64]) -> Selection {
        let n = self.pool.len();
        let steps = self.cfg.decay_clock == DecayClock::Steps;
        if steps {
            self.clock += 1.0;
        }
        if n == 0 {
            self.cache.sel.clear();
            return Selection::NoExperts;
        }
        let prev = self.nu_prev.map(|nu| (nu, &self.x_prev[..]));
        let (lo, hi) = window::candidates(&self.cfg, &self.groups[0].kernel, x, prev, n);
        let n_cal = self.cfg.n_cal;
        let higher_first = self.reference_ties();
        let mut cand_pos = std::mem::take(&mut self.cache.cand_pos);
        let mut cand_score = std::mem::take(&mut self.cache.cand_score);
        let mut cand_r2 = std::mem::take(&mut self.cache.cand_r2);
        // With kernel similarity, κ = σ_f²·exp(−r²/2) falls as r² grows: only candidates
        // with r² near the Ncal-th smallest can be among the Ncal most similar, so the
        // others need no exp (`near_threshold`). The window's r² go to `cand_r2` first;
        // the first selection, over every expert, has no room there and takes the exp of all.
        let by_r2 = self.cfg.distance == Distance::Kernel && hi - lo <= cand_r2.capacity();
        let mut limit = f64::INFINITY;
        if by_r2 {
            cand_r2.clear();
            for pos in lo..hi {
                let e = self.pool.at(pos);
                cand_r2.push(if self.is_stale(e.stamp) {
                    f64::NAN
                } else {
                    self.groups[0].kernel.scaled_sq_dist(x, &e.center)
                });
            }
            limit = near_threshold(&self.groups[0].kernel, &cand_r2, n_cal, &mut cand_score);
        }
        cand_pos.clear();
        cand_score.clear();
        for pos in lo..hi {
            let s = if by_r2 {
                let r2 = cand_r2[pos - lo];
                // NaN marks a stale candidate.
                if r2.is_nan() || r2 > limit {
                    continue;
                }
                self.groups[0].kernel.value_from_sq_dist(r2)
            } else {
                let e = self.pool.at(pos);
                if self.is_stale(e.stamp) {
                    continue;
                }
                self.similarity(x, &e.center)
            };
            // Insertion index: after every entry that ranks before (s, pos).
            let mut i = cand_pos.len();
            while i > 0 {
                let (ps, _) = (cand_score[i - 1], cand_pos[i - 1]);
                // Candidates arrive in ascending position, so a tie ranks the new one
                // first exactly when higher positions win.
                let new_first = s > ps || (s == ps && higher_first);
                if !new_first {
                    break;
                }
                i -= 1;
            }
            if i < n_cal {
                if cand_pos.len() == n_cal {
                    cand_pos.pop();
                    cand_score.pop();
                }
                cand_pos.insert(i, pos);
                cand_score.insert(i, s);
            }
        }
        self.cache.cand_r2 = cand_r2;
        let outcome = if cand_pos.is_empty() {
            match self.cfg.empty_candidates {
                EmptyCandidates::Prior => {
                    self.cache.sel.clear();
                    Selection::EmptyPrior
                }
                EmptyCandidates::Reference => Selection::EmptyReference,
            }
        } else {
            self.cache.sel.clear();
            self.cache.sel.extend_from_slice(&cand_pos);
            self.nu_prev = Some(cand_pos[0]);
            self.x_prev.copy_from_slice(x);
            Selection::Selected
        };
        self.cache.cand_pos = cand_pos;
        self.cache.cand_score = cand_score;
        outcome
    }
}

/// The largest r² a candidate may have and still be among the `n_cal` most similar, given
/// the r² of the window (NaN = stale); `work` is scratch with capacity ≥ n_cal.
///
/// κ(r²) falls strictly as r² grows, for every kernel here. A candidate above the
/// threshold has a κ smaller than that of the Ncal-th smallest r² by a relative
/// 5·10⁻¹³ at least (d ln κ/dr² is −1/2 for the SE kernel, between −3/2 and −0.02 for the
/// Matérn kernels up to r² = 1000), far beyond κ's rounding (a few ulp). It ranks below
/// at least Ncal others, and leaving it out changes nothing, ties included. Infinity
/// (take every candidate) with fewer than Ncal fresh candidates, or where κ could come
/// near underflow and tie at zero.
fn near_threshold(kernel: &ArdKernel, r2: &[f64], n_cal: usize, work: &mut Vec<f64>) -> f64 {
    // The n_cal smallest r², ascending, by insertion (no allocation: capacity ≥ n_cal).
    work.clear();
    for &v in r2.iter().filter(|v| !v.is_nan()) {
        // Most candidates are farther than the n_cal-th so far: one comparison.
        if work.len() == n_cal && work.last().is_some_and(|&last| v >= last) {
            continue;
        }
        let i = work.partition_point(|&w| w <= v);
        if i < n_cal {
            if work.len() == n_cal {
                work.pop();
            }
            work.insert(i, v);
        }
    }
    let limit = match work.get(n_cal.wrapping_sub(1)) {
        Some(&nth) if nth <= 1000.0 && kernel.value_from_sq_dist(nth) > 1e-250 => {
            nth + nth * 1e-9 + 1e-12
        }
        _ => f64::INFINITY,
    };
    work.clear();
    limit
}

#[cfg(test)]
mod tests {
    use super::near_threshold;
    use gpn_gp_core::kernel::{ArdKernel, KernelKind};
    use gpn_gp_core::rng::SplitMix64;

    /// Every candidate left out has a κ strictly below the Ncal-th largest κ of the
    /// window: the selection over the rest is the selection over all. Windows with exact
    /// and near ties, tiny and large r², stale entries and too few fresh ones.
    #[test]
    fn candidates_past_the_threshold_never_rank_in_the_top() {
        let mut rng = SplitMix64::new(7);
        for kind in [
            KernelKind::SquaredExponential,
            KernelKind::Matern32,
            KernelKind::Matern52,
        ] {
            let kernel = ArdKernel::new(kind, 1.3, &[1.0]).expect("valid kernel");
            for trial in 0..2000 {
                let n = 1 + trial % 41;
                let n_cal = 1 + trial % 6;
                let scale = [1e-14, 1e-6, 1.0, 50.0, 900.0, 1e4][trial % 6];
                let base = scale * rng.uniform();
                let r2: Vec<f64> = (0..n)
                    .map(|_| match rng.next_u64() % 5 {
                        0 => f64::NAN,
                        1 => base,
                        2 => base * (1.0 + 1e-15 * rng.uniform()),
                        _ => scale * rng.uniform(),
                    })
                    .collect();
                let mut work = Vec::with_capacity(n_cal + 1);
                let limit = near_threshold(&kernel, &r2, n_cal, &mut work);
                let mut kappas: Vec<f64> = r2
                    .iter()
                    .filter(|v| !v.is_nan())
                    .map(|&v| kernel.value_from_sq_dist(v))
                    .collect();
                kappas.sort_by(|a, b| b.total_cmp(a));
                if kappas.len() < n_cal {
                    assert!(limit.is_infinite(), "fewer fresh candidates than Ncal");
                    continue;
                }
                let nth = kappas[n_cal - 1];
                for &v in r2.iter().filter(|&&v| v > limit) {
                    assert!(
                        kernel.value_from_sq_dist(v) < nth,
                        "{kind:?}: r² {v} past {limit} ties or beats the {n_cal}-th κ {nth}"
                    );
                }
            }
        }
    }
}
