//! The online ensemble: the kept components, their belief weights and the frozen scaler;
//! the belief-weighted mixture prediction (spec §3.3, eq. 15) and per-sample updates.
//!
//! For output o with component means μ_io and latent variances σ_i² (standardised), and
//! weights w_i:
//!
//! ```text
//! μ_o  = Σ_i w_i μ_io
//! σ_o² = Σ_i w_i σ_i²  +  Σ_i w_i (μ_io − μ_o)²        (within + between kernels)
//! ```
//!
//! then mapped back to original units (μ ↦ ȳ_o + s_o μ, σ² ↦ s_o² σ²). The between-kernel
//! term is what keeps the prediction from being overconfident when kernels with weight
//! disagree.
//!
//! Noise: the ABI's variance is latent — the caller adds its own noise variance σ_n,o² (the
//! `noise_var` it passes to `update`). Each kernel here learns its own noise s_i², which also
//! absorbs what the sparse approximation cannot represent; when that exceeds the caller's
//! σ_n,o², the excess max(0, Σ_i w_i s_i² − σ_n,o²) (original units; s_i² for one
//! component alone) is added to the returned variance (`variance: "latent_plus_excess_noise"`,
//! the default), so the caller's latent + σ_n² is the model's own predictive variance of y.
//! `variance: "latent"` returns the latent mixture variance only.
//!
//! Real-time: `predict` and `update` allocate nothing.

use crate::component::Component;
use crate::config::PredictWith;
use crate::scaler::Scaler;

/// Kept components with their weights.
#[derive(Debug, Clone)]
pub struct Ensemble {
    /// Frozen standardisation.
    pub scaler: Scaler,
    /// Components, highest offline weight first.
    pub components: Vec<Component>,
    /// Current belief weights (sum 1), same order.
    pub weights: Vec<f64>,
    /// Noise variance per output the caller adds itself (original units; the latest
    /// `noise_var` passed to `update`).
    pub host_noise: Vec<f64>,
    /// Add the learned noise in excess of `host_noise` to the predicted variance.
    pub add_excess_noise: bool,
    p: usize,
    // Scratch.
    xs: Vec<f64>,
    ys: Vec<f64>,
    means: Vec<f64>,
    vars: Vec<f64>,
    /// Components prepared for `prepared_x` (set by predict, used by update).
    prepared: Vec<bool>,
    prepared_x: Vec<f64>,
}

impl Ensemble {
    /// An ensemble of `components` (non-empty) with `weights`. **Allocates.**
    pub fn new(scaler: Scaler, components: Vec<Component>, weights: Vec<f64>) -> Ensemble {
        let k = components.len();
        let p = scaler.y_mean.len();
        let d = scaler.x_mean.len();
        Ensemble {
            scaler,
            components,
            weights,
            host_noise: vec![0.0; p],
            add_excess_noise: true,
            p,
            xs: vec![0.0; d],
            ys: vec![0.0; p],
            means: vec![0.0; k * p],
            vars: vec![0.0; k],
            prepared: vec![false; k],
            prepared_x: vec![f64::NAN; d],
        }
    }

    /// Number of components K̃.
    pub fn len(&self) -> usize {
        self.components.len()
    }

    /// True without components.
    pub fn is_empty(&self) -> bool {
        self.components.is_empty()
    }

    /// Predict in original units into `mean` and `var` (p each).
    pub fn predict(&mut self, x: &[f64], with: PredictWith, mean: &mut [f64], var: &mut [f64]) {
        let p = self.p;
        self.scaler.x_into(x, &mut self.xs);
        let same_x = self.prepared_x.as_slice() == x;
        if !same_x {
            self.prepared.fill(false);
            self.prepared_x.copy_from_slice(x);
        }
        match with {
            PredictWith::Component(i) => {
                let c = &mut self.components[i];
                let v = c.predict_std(&self.xs, &mut self.means[i * p..(i + 1) * p]);
                self.prepared[i] = true;
                let noise = self.components[i].s2;
                for o in 0..p {
                    let (m, s2) = self.scaler.y_back(o, self.means[i * p + o], v);
                    mean[o] = m;
                    var[o] = s2 + self.excess(o, noise);
                }
            }
            PredictWith::Mixture => {
                for (i, c) in self.components.iter_mut().enumerate() {
                    self.vars[i] = c.predict_std(&self.xs, &mut self.means[i * p..(i + 1) * p]);
                    self.prepared[i] = true;
                }
                for o in 0..p {
                    let mut mu = 0.0;
                    for (i, &w) in self.weights.iter().enumerate() {
                        mu += w * self.means[i * p + o];
                    }
                    let mut s2 = 0.0;
                    for (i, &w) in self.weights.iter().enumerate() {
                        let dm = self.means[i * p + o] - mu;
                        s2 += w * (self.vars[i] + dm * dm);
                    }
                    let (m, v) = self.scaler.y_back(o, mu, s2);
                    let noise: f64 = self
                        .weights
                        .iter()
                        .zip(&self.components)
                        .map(|(w, c)| w * c.s2)
                        .sum();
                    mean[o] = m;
                    var[o] = v + self.excess(o, noise);
                }
            }
        }
    }

    /// max(0, s²·y_scale_o² − host noise of output o): the part of the learned noise (s² in
    /// standardised units) that the caller does not add itself.
    fn excess(&self, o: usize, s2_std: f64) -> f64 {
        if !self.add_excess_noise {
            return 0.0;
        }
        let sc = self.scaler.y_scale[o];
        (s2_std * sc * sc - self.host_noise[o]).max(0.0)
    }

    /// Learn one sample (original units) with weight `w` and forgetting λ.
    pub fn update(&mut self, x: &[f64], y: &[f64], w: f64, lambda: f64) {
        let same_x = self.prepared_x.as_slice() == x;
        self.scaler.x_into(x, &mut self.xs);
        self.scaler.y_into(y, &mut self.ys);
        for (i, c) in self.components.iter_mut().enumerate() {
            if !(same_x && self.prepared[i]) {
                c.prepare(&self.xs);
            }
            c.update_prepared(&self.ys, w, lambda);
        }
        // The factors changed: a later predict at the same x must recompute.
        self.prepared.fill(false);
        self.prepared_x.fill(f64::NAN);
    }

    /// Learn one sample (original units) with a weight per component (`weights`, K̃) and a
    /// common discount λ of the older samples; each component's log predictive density of
    /// it goes to `log_pred` (K̃). The drift path (`inject.rs`).
    pub fn update_drift(
        &mut self,
        x: &[f64],
        y: &[f64],
        weights: &[f64],
        lambda: f64,
        log_pred: &mut [f64],
    ) {
        let same_x = self.prepared_x.as_slice() == x;
        self.scaler.x_into(x, &mut self.xs);
        self.scaler.y_into(y, &mut self.ys);
        for (i, c) in self.components.iter_mut().enumerate() {
            if !(same_x && self.prepared[i]) {
                c.prepare(&self.xs);
            }
            log_pred[i] = c.update_prepared(&self.ys, weights[i], lambda);
        }
        self.prepared.fill(false);
        self.prepared_x.fill(f64::NAN);
    }

    /// Replay one window row into every component after a drift rebuild was adopted:
    /// discount by λ, add the row at its age-0 weight (statistics, factor and the drift
    /// terms, with the log density stored in the row).
    pub(crate) fn replay_drift(
        &mut self,
        row: &crate::inject::Row<'_>,
        lambda: f64,
        injection: &crate::inject::Injection,
        terms: &mut [crate::inject::DriftTerms],
    ) {
        self.scaler.x_into(row.x, &mut self.xs);
        self.scaler.y_into(row.y, &mut self.ys);
        let noise = crate::inject::Injection::noise_std(row.noise, &self.scaler.y_scale);
        for (i, c) in self.components.iter_mut().enumerate() {
            c.stats.discount(lambda);
            terms[i].discount(lambda);
            let Some(w) = injection.weight(c.s2, noise, 0.0) else {
                continue;
            };
            c.prepare(&self.xs);
            c.add_prepared(&self.ys, w);
            let _ = c.absorb_prepared(&self.ys, w);
            terms[i].add(w, row.log_pred.get(i).copied().unwrap_or(f64::NAN));
        }
        self.prepared.fill(false);
        self.prepared_x.fill(f64::NAN);
    }

    /// Add one sample (original units) to component `i`'s factor only: the replay after a
    /// background refactorisation (the statistics already hold it).
    pub fn absorb_replayed(&mut self, i: usize, x: &[f64], y: &[f64], w: f64) {
        self.scaler.x_into(x, &mut self.xs);
        self.scaler.y_into(y, &mut self.ys);
        let c = &mut self.components[i];
        c.prepare(&self.xs);
        let _ = c.absorb_prepared(&self.ys, w);
        self.prepared.fill(false);
        self.prepared_x.fill(f64::NAN);
    }

    /// The components' online evidence ([`Component::online_evidence`]) into `out` (K̃),
    /// what the online belief refits are fitted to. O(K̃).
    pub fn local_bounds(&self, out: &mut [f64]) {
        for (o, c) in out.iter_mut().zip(&self.components) {
            *o = c.online_evidence();
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.components
            .iter()
            .map(Component::memory_bytes)
            .sum::<usize>()
            + 8 * (self.means.len() + self.vars.len() + self.weights.len())
    }
}
