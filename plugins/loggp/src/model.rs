//! [`LogGp`]: the streaming model — admission, routing, growth and splits on `update`;
//! active leaves and the mixture-of-experts moments on `predict` (spec §2, §3). Everything
//! runs on the calling thread in bounded time; storage is allocated at construction.

use gpn_gp_core::cholesky::CholeskyError;
use gpn_gp_core::kernel::ArdKernel;
use gpn_gp_core::model::{
    ModelError, ModelStats, OnlineModel, Readiness, check_finite, check_len, check_sample,
};

use crate::config::{
    Combine, Config, NOISE_FLOOR_REL, NoiseSource, ValidConfig, WhenFull, storage_bytes,
};
use crate::leaf::{Leaf, Point, Scratch};
use crate::split;
use crate::tree::{Draws, Node, Split, Tree};

/// Counters kept with the state (and reported by `describe`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Samples passed to `update`.
    pub samples_seen: u64,
    /// Samples admitted (the rest were closer than `admit_interval_s` to the last one).
    pub admitted: u64,
    /// Points stored now.
    pub stored: u64,
    /// Leaves split.
    pub splits: u64,
    /// Points replaced in full leaves (`when_full: replace_oldest`).
    pub replaced: u64,
    /// Samples dropped at full leaves (`when_full: drop`).
    pub dropped: u64,
    /// Split attempts on full leaves whose points had no spread.
    pub unsplittable: u64,
}

/// A full leaf's points while it is divided (rows of d, p, p values).
#[derive(Debug, Clone)]
pub(crate) struct SplitBuffer {
    x: Vec<f64>,
    y: Vec<f64>,
    noise: Vec<f64>,
    stamp: Vec<u64>,
    left: Vec<bool>,
    values: Vec<f64>,
}

/// LoG-GP: a locally growing tree of exact local GPs (Lederer et al., ICML 2021); see
/// `docs/specs/loggp.md`.
#[derive(Debug)]
pub struct LogGp {
    pub(crate) cfg: ValidConfig,
    kernels: Vec<ArdKernel>,
    /// Per input: the largest 1/ℓ_j over the outputs (range units of `scaled` splits).
    inv_scale: Vec<f64>,
    pub(crate) tree: Tree,
    pub(crate) leaves: Vec<Leaf>,
    pub(crate) leaves_used: usize,
    pub(crate) draws: Draws,
    pub(crate) counters: Counters,
    pub(crate) last_admitted_t: f64,
    pub(crate) next_stamp: u64,
    scratch: Scratch,
    buffer: SplitBuffer,
    active: Vec<(usize, f64)>,
    local: Vec<(f64, f64, f64)>,
    noise: Vec<f64>,
}

/// The generalised product of experts of (ω_i, μ_i, σ_i²): 1/σ² = Σ ω_i/σ_i² and
/// μ = σ² Σ ω_i μ_i/σ_i² (Σ ω_i = 1, so σ² is at least the smallest σ_i² and at most the
/// largest). σ_i² is floored at `floor` (the reference divides by it unfloored).
fn product_of_experts(local: &[(f64, f64, f64)], floor: f64) -> (f64, f64) {
    let (precision, weighted) = local.iter().fold((0.0, 0.0), |(p, m), &(w, mu, v)| {
        let q = w / v.max(floor);
        (p + q, m + q * mu)
    });
    (weighted / precision, 1.0 / precision)
}

/// The moment-matched mixture of (ω_i, μ_i, σ_i²): μ = Σ ω_i μ_i and
/// σ² = Σ ω_i (σ_i² + μ_i²) − μ², in the form without cancellation.
fn mixture_of_experts(local: &[(f64, f64, f64)]) -> (f64, f64) {
    let mu: f64 = local.iter().map(|&(w, m, _)| w * m).sum();
    let var = local
        .iter()
        .map(|&(w, m, v)| w * (v + (m - mu) * (m - mu)))
        .sum();
    (mu, var)
}

fn numerical(e: CholeskyError) -> ModelError {
    ModelError::Other(format!("loggp: a leaf's factorisation failed: {e}"))
}

impl LogGp {
    /// A model from a JSON configuration (see `schema.rs`). Allocates all storage.
    pub fn from_json(config: &serde_json::Value, d: usize, p: usize) -> Result<Self, ModelError> {
        if d == 0 || p == 0 {
            return Err(ModelError::Config("loggp: dimensions must be ≥ 1".into()));
        }
        Self::new(Config::from_json(config)?.check(d, p)?)
    }

    /// A model from a checked configuration. Allocates all storage.
    pub fn new(cfg: ValidConfig) -> Result<Self, ModelError> {
        let (d, p, cap) = (cfg.d, cfg.p, cfg.leaf_capacity);
        let kernels = (0..p)
            .map(|o| ArdKernel::se(cfg.sigma_f[o], &cfg.lengthscales[o * d..(o + 1) * d]))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ModelError::Config(format!("loggp: {e}")))?;
        let inv_scale = (0..d)
            .map(|j| {
                kernels
                    .iter()
                    .map(|k| k.inv_lengthscales()[j])
                    .fold(0.0, f64::max)
            })
            .collect();
        Ok(Self {
            kernels,
            inv_scale,
            tree: Tree::new(cfg.max_leaves),
            leaves: (0..cfg.max_leaves).map(|_| Leaf::new(cap, d, p)).collect(),
            leaves_used: 1,
            draws: Draws {
                seed: cfg.seed,
                count: 0,
            },
            counters: Counters::default(),
            last_admitted_t: f64::NEG_INFINITY,
            next_stamp: 0,
            scratch: Scratch::new(cap),
            buffer: SplitBuffer {
                x: vec![0.0; cap * d],
                y: vec![0.0; cap * p],
                noise: vec![0.0; cap * p],
                stamp: vec![0; cap],
                left: vec![false; cap],
                values: vec![0.0; cap],
            },
            active: Vec::with_capacity(cfg.max_leaves),
            local: Vec::with_capacity(cfg.max_leaves),
            noise: vec![0.0; p],
            cfg,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &ValidConfig {
        &self.cfg
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Leaves in use.
    pub fn leaves(&self) -> usize {
        self.leaves_used
    }

    /// Depth of the deepest leaf. Allocates.
    pub fn depth(&self) -> usize {
        self.tree.depth()
    }

    /// Points of each leaf in use, by slot (diagnostics and tests).
    pub fn leaf_sizes(&self) -> Vec<usize> {
        self.leaves[..self.leaves_used]
            .iter()
            .map(|l| l.n)
            .collect()
    }

    /// The spacing rule shared with RCaGP (`gpn_gp_core::admission`); a stamp that is not
    /// finite says nothing about spacing and is admitted.
    fn admit(&mut self, t_secs: f64) -> bool {
        if !t_secs.is_finite() {
            return true;
        }
        let admit = gpn_gp_core::admission::spaced(
            t_secs - self.last_admitted_t,
            self.cfg.admit_interval_s,
        );
        if admit {
            self.last_admitted_t = t_secs;
        }
        admit
    }

    /// Splits the full leaf at tree node `node` (storage `slot`) if the tree has room and its
    /// points spread: the left child keeps the slot, the right one takes the next.
    fn try_split(&mut self, node: usize, slot: usize) -> Result<(), ModelError> {
        if self.leaves_used >= self.cfg.max_leaves {
            return Ok(());
        }
        let (d, p) = (self.cfg.d, self.cfg.p);
        let rules = (
            self.cfg.split_dimension,
            self.cfg.split_value,
            self.cfg.overlap_ratio,
        );
        let leaf = &self.leaves[slot];
        let Some(cut) = split::choose(leaf, d, rules, &self.inv_scale, &mut self.buffer.values)
        else {
            self.counters.unsplittable += 1;
            return Ok(());
        };
        let (n, cap) = (leaf.n, leaf.x.len() / d);
        let buf = &mut self.buffer;
        buf.x[..n * d].copy_from_slice(&leaf.x[..n * d]);
        buf.stamp[..n].copy_from_slice(&leaf.stamp[..n]);
        for i in 0..n {
            for o in 0..p {
                buf.y[i * p + o] = leaf.y[o * cap + i];
                buf.noise[i * p + o] = leaf.noise[o * cap + i];
            }
        }
        let mut assign = |value: f64, draws: &mut Draws| {
            let s = Split {
                dim: cut.dim,
                value,
                overlap: cut.overlap,
                left: 0,
                right: 0,
            };
            let mut lefts = 0;
            for i in 0..n {
                buf.left[i] = draws.go_left(s.p_left(&buf.x[i * d..(i + 1) * d]));
                lefts += usize::from(buf.left[i]);
            }
            lefts
        };
        let mut value = cut.value;
        let lefts = assign(value, &mut self.draws);
        if lefts == 0 || lefts == n {
            // The mid-range leaves the extreme points on either side (w_o > 1).
            value = cut.midrange;
            assign(value, &mut self.draws);
        }
        let right = self.leaves_used;
        self.leaves_used += 1;
        self.leaves[slot].clear();
        self.leaves[right].clear();
        for i in 0..n {
            let child = if buf.left[i] { slot } else { right };
            self.leaves[child].push_raw(Point {
                x: &buf.x[i * d..(i + 1) * d],
                y: &buf.y[i * p..(i + 1) * p],
                noise: &buf.noise[i * p..(i + 1) * p],
                stamp: buf.stamp[i],
            });
        }
        self.leaves[slot]
            .refactor(&self.kernels)
            .map_err(numerical)?;
        self.leaves[right]
            .refactor(&self.kernels)
            .map_err(numerical)?;
        self.tree
            .split(node, (cut.dim, value, cut.overlap), (slot, right));
        self.counters.splits += 1;
        Ok(())
    }
}

impl OnlineModel for LogGp {
    fn input_dim(&self) -> usize {
        self.cfg.d
    }

    fn output_dim(&self) -> usize {
        self.cfg.p
    }

    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        check_len("x", x, self.cfg.d)?;
        check_len("mean", mean, self.cfg.p)?;
        check_len("var", var, self.cfg.p)?;
        check_finite("x", x)?;
        self.tree.active(x, &mut self.active);
        for (o, k) in self.kernels.iter().enumerate() {
            self.local.clear();
            for &(slot, w) in &self.active {
                let (m, v) = self.leaves[slot].predict(o, k, x, &mut self.scratch.col);
                self.local.push((w, m, v));
            }
            let floor = NOISE_FLOOR_REL * k.sigma_f2();
            (mean[o], var[o]) = match self.cfg.combine {
                Combine::Gpoe => product_of_experts(&self.local, floor),
                Combine::Moe => mixture_of_experts(&self.local),
            };
        }
        Ok(())
    }

    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        let (d, p) = (self.cfg.d, self.cfg.p);
        check_sample(x, y, noise_var, d, p)?;
        self.counters.samples_seen += 1;
        if !self.admit(t_secs) {
            return Ok(());
        }
        self.counters.admitted += 1;
        for (o, v) in self.noise.iter_mut().enumerate() {
            let given = match self.cfg.noise {
                NoiseSource::Sample => noise_var[o],
                NoiseSource::Hyper => self.cfg.sigma_n[o] * self.cfg.sigma_n[o],
            };
            *v = given.max(NOISE_FLOOR_REL * self.kernels[o].sigma_f2());
        }
        let node = self.tree.route(x, &mut self.draws);
        let Node::Leaf { slot } = self.tree.nodes[node] else {
            return Err(ModelError::Other(
                "loggp: routing ended at an inner node".into(),
            ));
        };
        let pt = Point {
            x,
            y,
            noise: &self.noise,
            stamp: self.next_stamp,
        };
        self.next_stamp += 1;
        let leaf = &mut self.leaves[slot];
        if !leaf.is_full() {
            leaf.push(&self.kernels, pt, &mut self.scratch)
                .map_err(numerical)?;
            self.counters.stored += 1;
        } else if self.cfg.when_full == WhenFull::ReplaceOldest {
            leaf.replace_oldest(&self.kernels, pt, &mut self.scratch)
                .map_err(numerical)?;
            self.counters.replaced += 1;
        } else {
            self.counters.dropped += 1;
            return Ok(());
        }
        if self.leaves[slot].is_full() {
            self.try_split(node, slot)?;
        }
        Ok(())
    }

    fn stats(&self) -> ModelStats {
        let c = &self.cfg;
        let tree = self.tree.nodes.capacity() * std::mem::size_of::<Node>();
        ModelStats {
            samples_seen: self.counters.samples_seen,
            samples_stored: self.counters.stored,
            experts: self.leaves_used as u64,
            memory_bytes: (storage_bytes(c.leaf_capacity, c.max_leaves, c.d, c.p) + tree) as u64,
        }
    }

    fn state_bytes(&self) -> Result<Vec<u8>, ModelError> {
        Ok(crate::persist::save(self))
    }

    fn restore_state_bytes(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        crate::persist::load(self, bytes)
    }

    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        from_prior.fill(self.counters.stored == 0);
        Some(Readiness { samples_behind: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::{mixture_of_experts, product_of_experts};

    #[test]
    fn one_leaf_is_itself_and_an_uninformed_leaf_barely_counts_in_the_product() {
        for combine in [
            product_of_experts(&[(1.0, 0.7, 0.02)], 1e-8),
            mixture_of_experts(&[(1.0, 0.7, 0.02)]),
        ] {
            assert!((combine.0 - 0.7).abs() < 1e-15 && (combine.1 - 0.02).abs() < 1e-15);
        }
        // An informed leaf (weight 0.9) and one with no data near x (its prior: μ 0, σ² 1).
        let leaves = [(0.9, 1.0, 1e-3), (0.1, 0.0, 1.0)];
        let (mu, var) = product_of_experts(&leaves, 1e-8);
        assert!((mu - 1.0).abs() < 2e-4, "gPoE mean {mu}");
        assert!(var > 1e-3 && var < 1.12e-3, "gPoE variance {var}");
        // The mixture takes the prior by its weight: μ pulled by 0.1, σ² by the disagreement.
        let (mu, var) = mixture_of_experts(&leaves);
        assert!((mu - 0.9).abs() < 1e-12, "MoE mean {mu}");
        assert!((var - (0.9 * (1e-3 + 0.01) + 0.1 * (1.0 + 0.81))).abs() < 1e-12);
        // A zero variance is floored, not divided by.
        let (mu, var) = product_of_experts(&[(0.5, 2.0, 0.0), (0.5, 0.0, 1.0)], 1e-8);
        assert!(mu.is_finite() && (mu - 2.0).abs() < 1e-7 && var > 0.0);
    }
}
