//! Uncertainty injection for time-varying targets (time-varying GP bandit spec,
//! `specs/tvgp.md` §1.2 and §6.1): every stored sample keeps its time stamp and noise
//! variance; as it ages its variance grows by a drift model, and it leaves the model once the
//! variance passes a cap. The same configuration keys serve every plugin:
//!
//! ```json
//! "drift": {"model": "quadratic", "kappa_per_s": 0.05, "max_var_ratio": 100, "refresh_hz": 10}
//! ```
//!
//! | key | meaning |
//! |---|---|
//! | `model` | `quadratic`: v = σ² + κ²·a² (the paper's form); `linear`: v = σ² + q·a (random walk); `exponential`: v = σ²·e^(a/τ) |
//! | `kappa_per_s` | κ of `quadratic`: bound on the drift rate, target units per second |
//! | `q_per_s` | q of `linear`: variance added per second, target units² per second; 0 adds nothing (every sample keeps the noise variance it was learned with, and none expires) |
//! | `tau_s` | τ of `exponential`: time for the variance to grow by e, seconds |
//! | `max_var_ratio` | a sample leaves once v/σ² exceeds this (default 100); the newest sample always stays |
//! | `refresh_hz` | how often a plugin recomputes its inflated variances in the background (default 10) |
//!
//! Ages are `t_now − t_i` in seconds of the samples' own clock (`t_secs` of `update`), with
//! `t_now` the newest stamp seen. Without a `drift` key a plugin behaves exactly as before.

use serde_json::Value;

/// How a sample's variance grows with its age `a` (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DriftModel {
    /// v = σ² + κ²·a².
    Quadratic {
        /// κ, target units per second.
        kappa_per_s: f64,
    },
    /// v = σ² + q·a.
    Linear {
        /// q, target units² per second.
        q_per_s: f64,
    },
    /// v = σ²·exp(a/τ).
    Exponential {
        /// τ, seconds.
        tau_s: f64,
    },
}

/// What the `drift` key is, for a plugin's configuration schema.
pub const DRIFT_DOC: &str = "Uncertainty injection (forgetting): {model: quadratic | linear | exponential, kappa_per_s | q_per_s | tau_s, max_var_ratio, refresh_hz}; absent or null: off.";

/// A plugin's drift settings (the `drift` key of its configuration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drift {
    /// The growth model.
    pub model: DriftModel,
    /// A sample leaves once its variance exceeds this multiple of its base variance.
    pub max_var_ratio: f64,
    /// Background recomputation rate, Hz.
    pub refresh_hz: f64,
}

impl Drift {
    /// Parses the `drift` value of a plugin configuration; `None` (no key, or `null`, or
    /// `"model": "none"`) means no injection.
    pub fn from_config(config: &Value) -> Result<Option<Drift>, String> {
        let drift = match config.get("drift") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(other) => return Err(format!("drift must be an object, got {other}")),
        };
        for key in drift.keys() {
            if ![
                "model",
                "kappa_per_s",
                "q_per_s",
                "tau_s",
                "max_var_ratio",
                "refresh_hz",
            ]
            .contains(&key.as_str())
            {
                return Err(format!("drift: unknown key {key:?}"));
            }
        }
        let number = |key: &str| -> Result<Option<f64>, String> {
            match drift.get(key) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .map(Some)
                    .ok_or_else(|| format!("drift.{key} must be a number > 0, got {v}")),
            }
        };
        let required = |key: &str| {
            number(key)?.ok_or_else(|| format!("drift.{key} is required by this drift model"))
        };
        // q = 0 is a drift that adds nothing: a per-sample noise variance without
        // forgetting (what RCaGP's experts layout needs of SkyGP).
        let rate = |key: &str| match drift.get(key) {
            Some(v) if v.as_f64() == Some(0.0) => Ok(0.0),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| format!("drift.{key} must be a number ≥ 0, got {v}")),
            None => Err(format!("drift.{key} is required by this drift model")),
        };
        let model = match drift
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("quadratic")
        {
            "none" => return Ok(None),
            "quadratic" => DriftModel::Quadratic {
                kappa_per_s: required("kappa_per_s")?,
            },
            "linear" => DriftModel::Linear {
                q_per_s: rate("q_per_s")?,
            },
            "exponential" => DriftModel::Exponential {
                tau_s: required("tau_s")?,
            },
            other => {
                return Err(format!(
                    "drift.model must be quadratic, linear, exponential or none, got {other:?}"
                ));
            }
        };
        let max_var_ratio = number("max_var_ratio")?.unwrap_or(100.0);
        if max_var_ratio <= 1.0 {
            return Err(format!(
                "drift.max_var_ratio must be > 1, got {max_var_ratio}"
            ));
        }
        Ok(Some(Drift {
            model,
            max_var_ratio,
            refresh_hz: number("refresh_hz")?.unwrap_or(10.0),
        }))
    }

    /// The variance of a sample of base variance `base_var` at age `age_s` (negative ages,
    /// from clock jitter, count as 0).
    pub fn var(&self, base_var: f64, age_s: f64) -> f64 {
        let a = age_s.max(0.0);
        match self.model {
            DriftModel::Quadratic { kappa_per_s } => base_var + (kappa_per_s * a).powi(2),
            DriftModel::Linear { q_per_s } => base_var + q_per_s * a,
            DriftModel::Exponential { tau_s } => base_var * (a / tau_s).exp(),
        }
    }

    /// Whether a sample's variance grows with its age at all (`linear` with q = 0 does not:
    /// its factors never go stale, so nothing needs refreshing or recomputing).
    pub fn grows(&self) -> bool {
        !matches!(self.model, DriftModel::Linear { q_per_s } if q_per_s == 0.0)
    }

    /// Whether a sample of base variance `base_var` and age `age_s` has expired.
    pub fn expired(&self, base_var: f64, age_s: f64) -> bool {
        self.var(base_var, age_s) > self.max_var_ratio * base_var
    }

    /// The age after which a sample of base variance `base_var` expires, s.
    pub fn max_age_s(&self, base_var: f64) -> f64 {
        if !self.grows() {
            return f64::INFINITY;
        }
        let extra = (self.max_var_ratio - 1.0) * base_var;
        match self.model {
            DriftModel::Quadratic { kappa_per_s } => extra.sqrt() / kappa_per_s,
            DriftModel::Linear { q_per_s } => extra / q_per_s,
            DriftModel::Exponential { tau_s } => tau_s * self.max_var_ratio.ln(),
        }
    }

    /// Seconds between background refreshes.
    pub fn refresh_period_s(&self) -> f64 {
        1.0 / self.refresh_hz
    }
}

/// Greedy pivoted Cholesky selection (the spec's §2.4, Algorithm 3 greedy mode): picks up to
/// `max_points` of `points` (row-major, `dim` columns) that best span the kernel's feature
/// space — each step takes the point with the largest residual variance given those chosen
/// — stopping early when the largest residual variance falls below `tolerance`. `kernel(a,
/// b)` is the covariance. Returns indices in the order chosen. O(n·q²) time, O(n·q) memory.
pub fn greedy_pivoted_cholesky(
    points: &[f64],
    dim: usize,
    max_points: usize,
    tolerance: f64,
    kernel: impl Fn(&[f64], &[f64]) -> f64,
) -> Vec<usize> {
    let n = points.len().checked_div(dim).unwrap_or(0);
    let row = |i: usize| &points[i * dim..(i + 1) * dim];
    let mut residual: Vec<f64> = (0..n).map(|i| kernel(row(i), row(i))).collect();
    let mut factors: Vec<Vec<f64>> = Vec::new(); // one column of L per chosen point
    let mut chosen = Vec::new();
    while chosen.len() < max_points.min(n) {
        let Some((best, &var)) = residual
            .iter()
            .enumerate()
            .filter(|(i, _)| !chosen.contains(i))
            .max_by(|a, b| a.1.total_cmp(b.1))
        else {
            break;
        };
        if var.is_nan() || var <= tolerance {
            break;
        }
        let pivot = var.sqrt();
        let column: Vec<f64> = (0..n)
            .map(|i| {
                let k = kernel(row(i), row(best));
                let dot: f64 = factors.iter().map(|f| f[i] * f[best]).sum();
                (k - dot) / pivot
            })
            .collect();
        for (r, c) in residual.iter_mut().zip(&column) {
            *r -= c * c;
        }
        factors.push(column);
        chosen.push(best);
    }
    chosen
}
