//! Selection, spec §3.4 P1–P5: candidate window, staleness filter, the Ncal most
//! similar experts (I_agg), ν_prev/x_prev bookkeeping and the per-step decay clock
//! (with `decay_clock = "steps"` every selection first ages all experts by one step, as
//! the reference's predict multiplies every weight by ρ before filtering).
//! Real-time: no allocation (top-Ncal by insertion into reserved arrays).

use crate::config::{DecayClock, Distance, EmptyCandidates};
use crate::model::SkyGp;
use crate::window;
use gpn_gp_core::kernel::Kernel;

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
        cand_pos.clear();
        cand_score.clear();
        for pos in lo..hi {
            let e = self.pool.at(pos);
            // ϑ_i = ρ^(age) > ϑ̄  ⇔  age·ln ρ > ln ϑ̄ (always true with ρ = 1).
            if (self.clock - e.stamp) * self.ln_rho <= self.ln_theta {
                continue;
            }
            let s = self.similarity(x, &e.center);
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
