//! PREDICT, spec §3.4 P6–P7: per-expert GP predictions (§2.6) of the selected experts,
//! cached for the update, and their aggregation (§3.7) per output.
//! Real-time: no allocation.

use crate::config::EmptyCandidates;
use crate::model::SkyGp;
use crate::select::Selection;

/// The variance the reference code reports with no expert or no candidate left.
const REFERENCE_EMPTY_VAR: f64 = 10.0;

impl SkyGp {
    /// Selection, expert predictions and aggregation; `mean` and `var` have length p.
    pub(crate) fn predict_impl(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) {
        self.cache.valid = false;
        self.cache.kv_ready = false;
        self.cache.n_agg = 0;
        self.drift_adopt();
        let outcome = self.select(x);
        self.cache.x.copy_from_slice(x);
        self.cache.valid = true;
        match outcome {
            Selection::NoExperts if self.cfg.empty_candidates == EmptyCandidates::Reference => {
                mean.fill(0.0);
                var.fill(REFERENCE_EMPTY_VAR);
            }
            Selection::NoExperts | Selection::EmptyPrior => {
                for (o, m) in self.outputs.iter().enumerate() {
                    mean[o] = 0.0;
                    var[o] = m.prior_var;
                }
            }
            Selection::EmptyReference => {
                mean.fill(0.0);
                var.fill(REFERENCE_EMPTY_VAR);
            }
            Selection::Selected => self.predict_selected(x, mean, var),
        }
    }

    fn predict_selected(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) {
        let n_bar = self.cfg.n_bar;
        let n_cal = self.cfg.n_cal;
        let n_groups = self.groups.len();
        let floor = self.cfg.expert_var_floor;
        let m = self.cache.sel.len();
        let Self {
            pool,
            groups,
            outputs,
            cache,
            ..
        } = self;
        // Groups of one shape share the distances (`r2` is empty when none do).
        let share = !cache.r2.is_empty();
        for (j, &pos) in cache.sel.iter().enumerate() {
            let e = pool.at(pos);
            for (g, group) in groups.iter().enumerate() {
                let off = (j * n_groups + g) * n_bar;
                let (k, v) = (
                    &mut cache.k[off..off + n_bar],
                    &mut cache.v[off..off + n_bar],
                );
                if share {
                    let shape = cache.shape_of[g];
                    let r2 = &mut cache.r2[shape * n_bar..(shape + 1) * n_bar];
                    // The first group of a shape (groups come in order) fills its row.
                    if cache.shape_of[..g].iter().all(|&s| s != shape) {
                        e.sq_dists(&group.kernel, x, r2);
                    }
                    e.k_from_sq_dists(group, r2, k);
                } else {
                    e.k_vector(group, x, k);
                }
                let vtv = e.solve_v(g, k, v);
                for (o, om) in outputs.iter().enumerate().filter(|(_, om)| om.group == g) {
                    cache.mu[o * n_cal + j] = e.mean(o, &cache.k[off..off + n_bar]);
                    cache.var[o * n_cal + j] =
                        (om.scale * (group.kernel.sigma_f2() - vtv)).max(floor);
                }
            }
        }
        let agg = self.cfg.aggregation;
        for (o, om) in outputs.iter().enumerate() {
            let r = o * n_cal..o * n_cal + m;
            let (mu, v) = agg.combine(
                &cache.mu[r.clone()],
                &cache.var[r.clone()],
                om.prior_var,
                &mut cache.w[r],
            );
            mean[o] = mu;
            var[o] = v;
        }
        cache.kv_ready = true;
        cache.n_agg = m;
    }
}
