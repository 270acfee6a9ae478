//! Configuration: JSON-deserialisable [`Config`] (every key optional except `hyper`) →
//! [`Config::check`] → [`ValidConfig`] (every value resolved and checked against the
//! dimensions). Keys, types, defaults and meanings are declared once in `schema.rs`.

use serde::Deserialize;

use gpn_gp_core::cholesky::row_start;
use gpn_gp_core::hyper_config::HYPER_MISSING;
use gpn_gp_core::model::ModelError;

/// The `hyper` key: one entry for every output, or one per output.
pub type Hyper = gpn_gp_core::hyper_config::Hyper<String>;

/// Where a full leaf is cut in its split dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitValue {
    /// The mean of the leaf's points (the reference's benchmark setting).
    Mean,
    /// Their median.
    Median,
    /// (min + max)/2.
    Midrange,
}

/// How the split dimension is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitDimension {
    /// Largest range in lengthscale units, (max − min)/ℓ_j with ℓ_j the smallest over the
    /// outputs (spec §4 item 4, a deviation).
    Scaled,
    /// Largest raw range (the reference).
    Range,
}

/// What a sample reaching a full leaf that cannot split does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WhenFull {
    /// It replaces the leaf's oldest point.
    ReplaceOldest,
    /// It is dropped (the reference), and counted.
    Drop,
}

/// How the active leaves' predictions are combined (spec §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Generalised product of experts: precision-weighted, each leaf's precision times its
    /// branch weight (the reference's second method). A leaf with no data near x predicts
    /// its prior and, having the prior's precision, barely counts.
    Gpoe,
    /// Mixture of experts, moment-matched (the paper's main method): a leaf counts by its
    /// branch weight alone, informed or not.
    Moe,
}

/// Which noise variance a point gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// The `noise_var` given to `update`.
    Sample,
    /// σ_n² of the hyperparameters.
    Hyper,
}

/// Least time between admitted samples by default, s (the reference Simulink block's sample
/// time; at 1 kHz consecutive samples are nearly the same point).
pub const DEFAULT_ADMIT_INTERVAL_S: f64 = 0.005;
/// Largest storage a configuration may preallocate, bytes.
pub const MAX_STORAGE_BYTES: usize = 4 << 30;
/// Largest leaf capacity N̄ (a split costs O(N̄³) inside `update`).
pub const MAX_LEAF_CAPACITY: usize = 2048;
/// Largest number of leaves.
pub const MAX_LEAVES: usize = 1 << 20;
/// Smallest noise variance a point is given, relative to σ_f² (keeps every leaf's matrix
/// positive definite when `update` passes 0).
pub const NOISE_FLOOR_REL: f64 = 1e-8;

/// The configuration as given (JSON object). Field order is the schema's key order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Hyperparameters (required).
    pub hyper: Option<Hyper>,
    /// N̄: points per leaf.
    pub leaf_capacity: Option<usize>,
    /// L_max: most leaves.
    pub max_leaves: Option<usize>,
    /// w_o: overlap width = range / w_o.
    pub overlap_ratio: Option<f64>,
    /// Split value rule.
    pub split_value: Option<SplitValue>,
    /// Split dimension rule.
    pub split_dimension: Option<SplitDimension>,
    /// Full-leaf rule.
    pub when_full: Option<WhenFull>,
    /// Least time between admitted samples, s.
    pub admit_interval_s: Option<f64>,
    /// Noise source.
    pub noise: Option<NoiseSource>,
    /// How active leaves are combined.
    pub combine: Option<Combine>,
    /// Seed of the routing draws.
    pub seed: Option<u64>,
}

/// A checked configuration for inputs of dimension `d` and `p` outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidConfig {
    /// Input dimension.
    pub d: usize,
    /// Outputs.
    pub p: usize,
    /// σ_f of every output.
    pub sigma_f: Vec<f64>,
    /// σ_n of every output.
    pub sigma_n: Vec<f64>,
    /// Lengthscales, output-major (p × d).
    pub lengthscales: Vec<f64>,
    /// N̄.
    pub leaf_capacity: usize,
    /// L_max.
    pub max_leaves: usize,
    /// w_o (> 1).
    pub overlap_ratio: f64,
    /// Split value rule.
    pub split_value: SplitValue,
    /// Split dimension rule.
    pub split_dimension: SplitDimension,
    /// Full-leaf rule.
    pub when_full: WhenFull,
    /// Least time between admitted samples, s (0: every sample).
    pub admit_interval_s: f64,
    /// Noise source.
    pub noise: NoiseSource,
    /// How active leaves are combined.
    pub combine: Combine,
    /// Seed.
    pub seed: u64,
}

impl Config {
    /// Parses a JSON configuration.
    pub fn from_json(v: &serde_json::Value) -> Result<Self, ModelError> {
        Config::deserialize(v).map_err(|e| ModelError::Config(format!("loggp: {e}")))
    }

    /// Resolves the defaults and checks every value against the dimensions.
    pub fn check(&self, d: usize, p: usize) -> Result<ValidConfig, ModelError> {
        let err = |m: String| ModelError::Config(format!("loggp: {m}"));
        let hyper = self
            .hyper
            .as_ref()
            .ok_or_else(|| err(HYPER_MISSING.into()))?;
        let entries = hyper.per_output(p).map_err(err)?;
        let (mut sigma_f, mut sigma_n, mut lengthscales) = (vec![], vec![], vec![]);
        for (o, e) in entries.iter().enumerate() {
            if let Some(k) = &e.kernel
                && !matches!(k.as_str(), "se" | "rbf")
            {
                return Err(err(format!(
                    "hyper[{o}].kernel {k:?}: LoG-GP uses the squared exponential (se)"
                )));
            }
            let positive = |v: f64| v.is_finite() && v > 0.0;
            if !positive(e.sigma_f) || !positive(e.sigma_n) {
                return Err(err(format!(
                    "hyper[{o}]: sigma_f and sigma_n must be finite and > 0"
                )));
            }
            if e.lengthscales.len() != d || !e.lengthscales.iter().all(|&l| positive(l)) {
                return Err(err(format!(
                    "hyper[{o}]: lengthscales must be {d} finite values > 0, found {:?}",
                    e.lengthscales
                )));
            }
            sigma_f.push(e.sigma_f);
            sigma_n.push(e.sigma_n);
            lengthscales.extend_from_slice(&e.lengthscales);
        }
        let leaf_capacity = self.leaf_capacity.unwrap_or(100);
        if !(2..=MAX_LEAF_CAPACITY).contains(&leaf_capacity) {
            return Err(err(format!(
                "leaf_capacity {leaf_capacity} must be in 2..={MAX_LEAF_CAPACITY}"
            )));
        }
        let max_leaves = self.max_leaves.unwrap_or(256);
        if !(1..=MAX_LEAVES).contains(&max_leaves) {
            return Err(err(format!(
                "max_leaves {max_leaves} must be in 1..={MAX_LEAVES}"
            )));
        }
        let overlap_ratio = self.overlap_ratio.unwrap_or(10.0);
        if !(overlap_ratio.is_finite() && overlap_ratio > 1.0) {
            return Err(err(format!(
                "overlap_ratio {overlap_ratio} must be finite and > 1 (the overlap is narrower than the leaf)"
            )));
        }
        let admit_interval_s = self.admit_interval_s.unwrap_or(DEFAULT_ADMIT_INTERVAL_S);
        if !(admit_interval_s.is_finite() && admit_interval_s >= 0.0) {
            return Err(err(format!(
                "admit_interval_s {admit_interval_s} must be finite and ≥ 0"
            )));
        }
        let bytes = storage_bytes(leaf_capacity, max_leaves, d, p);
        if bytes > MAX_STORAGE_BYTES {
            return Err(err(format!(
                "{max_leaves} leaves of {leaf_capacity} points (d = {d}, p = {p}) need {:.1} GiB of storage, more than {} GiB: lower max_leaves or leaf_capacity",
                bytes as f64 / f64::from(1u32 << 30),
                MAX_STORAGE_BYTES >> 30
            )));
        }
        Ok(ValidConfig {
            d,
            p,
            sigma_f,
            sigma_n,
            lengthscales,
            leaf_capacity,
            max_leaves,
            overlap_ratio,
            split_value: self.split_value.unwrap_or(SplitValue::Mean),
            split_dimension: self.split_dimension.unwrap_or(SplitDimension::Scaled),
            when_full: self.when_full.unwrap_or(WhenFull::ReplaceOldest),
            admit_interval_s,
            noise: self.noise.unwrap_or(NoiseSource::Sample),
            combine: self.combine.unwrap_or(Combine::Gpoe),
            seed: self.seed.unwrap_or(0),
        })
    }
}

/// Bytes of one leaf's storage: inputs, targets, noise, α, insertion stamps and one packed
/// factor (with its inverse diagonal) per output.
pub fn leaf_bytes(cap: usize, d: usize, p: usize) -> usize {
    let f64s = cap * d + 3 * cap * p + p * (row_start(cap) + cap);
    (f64s + cap) * 8
}

/// Bytes of every leaf's storage.
pub fn storage_bytes(cap: usize, leaves: usize, d: usize, p: usize) -> usize {
    leaf_bytes(cap, d, p).saturating_mul(leaves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(extra: serde_json::Value) -> Result<ValidConfig, ModelError> {
        let mut c = json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 2.0]}});
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        Config::from_json(&c)?.check(2, 3)
    }

    #[test]
    fn resolves_defaults_and_refuses_bad_values_with_a_reason() {
        let v = check(json!({})).unwrap();
        assert_eq!(
            (v.leaf_capacity, v.max_leaves, v.overlap_ratio),
            (100, 256, 10.0)
        );
        assert_eq!(v.lengthscales, [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
        let reason = |extra| match check(extra) {
            Err(ModelError::Config(m)) => m,
            other => panic!("expected a config error, got {other:?}"),
        };
        assert!(reason(json!({"overlap_ratio": 1.0})).contains("> 1"));
        assert!(reason(json!({"leaf_capacity": 1})).contains("leaf_capacity"));
        assert!(reason(json!({"max_leaves": 0})).contains("max_leaves"));
        assert!(reason(json!({"admit_interval_s": -1.0})).contains("admit_interval_s"));
        assert!(reason(json!({"max_leaves": 1 << 20, "leaf_capacity": 2048})).contains("GiB"));
        assert!(reason(json!({"split_value": "mode"})).contains("unknown variant"));
        assert!(reason(json!({"combine": "bcm"})).contains("unknown variant"));
        assert_eq!(v.combine, Combine::Gpoe);
        assert!(
            reason(json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0]}}))
                .contains("lengthscales")
        );
        assert!(reason(json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0], "kernel": "matern32"}})).contains("squared exponential"));
        let missing = Config::from_json(&json!({})).unwrap().check(2, 1);
        assert!(matches!(missing, Err(ModelError::Config(m)) if m.contains("hyper")));
    }
}
