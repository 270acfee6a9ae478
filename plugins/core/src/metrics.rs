//! Prequential (predict-then-update) accuracy metrics: SMSE and MSLL, per target.
//!
//! The definitions follow the SkyGP reference loop exactly (`anchors/README.md` §1.4,
//! `specs/skygp.md` §6.3 and §8 A13/A14/A20). For a stream of N samples with 0-based index i
//! and, for i ≥ 1, a prediction (μ_i, σ_i²) made **before** y_i was seen (σ_i² latent):
//!
//! * **SMSE**: SMSE_0 = 1 and, for i ≥ 1,
//!   SMSE_i = Σ_{j=1..i} (y_j − μ_j)² / (i · Var_pop(y_0..y_i)).
//!   If Var_pop(y_0..y_i) = 0 (all targets so far equal) SMSE_i is defined as 1 (like SMSE_0:
//!   nothing to standardise by). The reference code would divide by zero there.
//! * **MSLL**: s_j² = max(σ_j², `var_floor`) + σ_n² with `var_floor` = 1e-3 by default and σ_n²
//!   per target; NLL_j = ½ log(2π s_j²) + (y_j − μ_j)²/(2 s_j²) for j ≥ 1 and NLL_0 = 0.
//!   The baseline NLL⁰_j = ½ log(2π v) + (y_j − m)²/(2 v) uses the mean m and the population
//!   variance v of **all** N targets of the stream (a look-ahead, as in the reference), and
//!   MSLL_i = (1/(i+1)) Σ_{j=0..i} (NLL_j − NLL⁰_j), the j = 0 term included. If v = 0 the
//!   MSLL values are NaN.
//! * Reported per target: the final value (i = N − 1) and the curve mean, i.e. the mean of the
//!   whole curve over i = 0..N−1, SMSE_0 = 1 and MSLL_0 included. The curve mean of SMSE is what
//!   the SkyGP paper tabulates as "average SMSE".
//!
//! [`Prequential`] is a streaming accumulator: O(p) work and no allocation per sample. The
//! running target variance uses Welford's update. The MSLL baseline needs m and v of the whole
//! stream, so it is applied in [`Prequential::finish`]: since m and v are constants, every MSLL_i
//! is an affine function of the prefix sums A_i = Σ NLL_j, S1_i = Σ u_j and S2_i = Σ u_j² (with
//! u_j = y_j − y_0, a shift against cancellation), and so is the curve mean of the sums
//! Σ_i A_i/(i+1), Σ_i S1_i/(i+1), Σ_i S2_i/(i+1). The accumulator keeps only those sums, unless
//! curves are requested with [`Prequential::with_curves`], which preallocates O(N·p) storage.
//!
//! ```
//! use gpn_gp_core::metrics::{MetricsConfig, Prequential};
//! let mut m = Prequential::new(MetricsConfig::new(vec![0.01]));
//! m.push(&[1.0], None).unwrap(); // step 0: no prediction
//! m.push(&[2.0], Some((&[1.5], &[0.2]))).unwrap();
//! m.push(&[0.0], Some((&[1.0], &[0.1]))).unwrap();
//! let r = m.finish().unwrap();
//! assert_eq!(r.n_samples, 3);
//! assert!(r.targets[0].smse_curve_mean > 0.0);
//! ```

use std::f64::consts::PI;

/// Errors of the metric accumulator.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MetricsError {
    /// A slice had the wrong length.
    #[error("{what}: expected length {expected}, found {found}")]
    Dimension {
        /// Which argument.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Length found.
        found: usize,
    },
    /// A target or prediction was NaN or infinite.
    #[error("{what} is not finite at step {step}, target {target}")]
    NonFinite {
        /// Which argument.
        what: &'static str,
        /// 0-based step.
        step: usize,
        /// 0-based target.
        target: usize,
    },
    /// A step after the first came without a prediction.
    #[error("step {step} has no prediction (only step 0 may come without one)")]
    MissingPrediction {
        /// 0-based step.
        step: usize,
    },
    /// `finish` was called before any sample.
    #[error("no samples were pushed")]
    Empty,
    /// The configuration is invalid.
    #[error("invalid metrics config: {0}")]
    Config(String),
}

/// Result alias of this module.
pub type Result<T> = std::result::Result<T, MetricsError>;

/// Settings of the metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsConfig {
    /// σ_n² per target, added to the floored latent variance in the MSLL (its length sets the
    /// number of targets p).
    pub noise_var: Vec<f64>,
    /// Floor on the latent predictive variance in the MSLL (reference: 1e-3).
    pub var_floor: f64,
    /// One floor per target instead of `var_floor` (e.g. scaled to each target's variance,
    /// for targets in physical units), when given.
    pub target_var_floors: Option<Vec<f64>>,
}

impl MetricsConfig {
    /// The reference settings (`var_floor` = 1e-3) with the given σ_n² per target.
    pub fn new(noise_var: Vec<f64>) -> Self {
        Self {
            noise_var,
            var_floor: 1e-3,
            target_var_floors: None,
        }
    }

    /// The same with another variance floor.
    pub fn with_var_floor(mut self, var_floor: f64) -> Self {
        self.var_floor = var_floor;
        self
    }

    /// The same with one variance floor per target.
    pub fn with_target_var_floors(mut self, floors: Vec<f64>) -> Self {
        self.target_var_floors = Some(floors);
        self
    }

    /// The variance floor of target `t`.
    pub fn floor(&self, t: usize) -> f64 {
        self.target_var_floors
            .as_ref()
            .and_then(|f| f.get(t).copied())
            .unwrap_or(self.var_floor)
    }
}

/// Final numbers for one target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetMetrics {
    /// SMSE at the last step (i = N − 1).
    pub smse_final: f64,
    /// Mean of the SMSE curve over i = 0..N−1 (SMSE_0 = 1 included).
    pub smse_curve_mean: f64,
    /// MSLL at the last step.
    pub msll_final: f64,
    /// Mean of the MSLL curve over i = 0..N−1 (MSLL_0 included).
    pub msll_curve_mean: f64,
    /// Mean of all targets of the stream (the MSLL baseline's m).
    pub target_mean: f64,
    /// Population variance of all targets of the stream (the MSLL baseline's v).
    pub target_var: f64,
}

/// Everything [`Prequential::finish`] reports.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsReport {
    /// Number of samples N (including step 0).
    pub n_samples: usize,
    /// One entry per target, in target order.
    pub targets: Vec<TargetMetrics>,
    /// The curves, if recorded ([`Prequential::with_curves`]).
    pub curves: Option<Curves>,
}

/// Per-step metric curves, step-major: value of step i, target t at `[i * p + t]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Curves {
    /// Number of targets p.
    pub n_targets: usize,
    /// SMSE_i per step and target.
    pub smse: Vec<f64>,
    /// MSLL_i per step and target.
    pub msll: Vec<f64>,
}

impl Curves {
    /// SMSE_i of target `t`, if recorded.
    pub fn smse_at(&self, i: usize, t: usize) -> Option<f64> {
        self.smse.get(i * self.n_targets + t).copied()
    }
    /// MSLL_i of target `t`, if recorded.
    pub fn msll_at(&self, i: usize, t: usize) -> Option<f64> {
        self.msll.get(i * self.n_targets + t).copied()
    }
}

/// Streaming state of one target.
#[derive(Debug, Clone, Copy, Default)]
struct TargetAcc {
    /// Shift y_0 (against cancellation in the prefix sums).
    shift: f64,
    /// Welford running mean and sum of squared deviations.
    mean: f64,
    m2: f64,
    /// Σ_{j=1..i} (y_j − μ_j)².
    sse: f64,
    /// SMSE of the latest step and Σ_i SMSE_i.
    smse_last: f64,
    smse_sum: f64,
    /// Prefix sums A_i (NLL), S1_i, S2_i (shifted targets) of the latest step.
    nll_sum: f64,
    s1: f64,
    s2: f64,
    /// Σ_i A_i/(i+1), Σ_i S1_i/(i+1), Σ_i S2_i/(i+1).
    c_nll: f64,
    c_s1: f64,
    c_s2: f64,
}

/// Streaming prequential SMSE/MSLL accumulator for p targets (see the module doc).
#[derive(Debug, Clone)]
pub struct Prequential {
    config: MetricsConfig,
    count: usize,
    acc: Vec<TargetAcc>,
    /// Recorded curves: SMSE_i and the prefix sums (A_i, S1_i, S2_i) per step and target.
    record: Option<Record>,
}

#[derive(Debug, Clone)]
struct Record {
    smse: Vec<f64>,
    sums: Vec<[f64; 3]>,
}

impl Prequential {
    /// A new accumulator; the number of targets is `config.noise_var.len()`.
    pub fn new(config: MetricsConfig) -> Self {
        let p = config.noise_var.len();
        Self {
            config,
            count: 0,
            acc: vec![TargetAcc::default(); p],
            record: None,
        }
    }

    /// A new accumulator that also records the per-step curves; `capacity` samples are
    /// preallocated (more are accepted, at the cost of a reallocation).
    pub fn with_curves(config: MetricsConfig, capacity: usize) -> Self {
        let p = config.noise_var.len();
        let mut s = Self::new(config);
        s.record = Some(Record {
            smse: Vec::with_capacity(capacity * p),
            sums: Vec::with_capacity(capacity * p),
        });
        s
    }

    /// Uses another σ_n² per target from the next step on (a model refitted mid-stream);
    /// the same number of targets. Checked like the configuration.
    pub fn set_noise_var(&mut self, noise_var: &[f64]) -> Result<()> {
        if noise_var.len() != self.config.noise_var.len() {
            return Err(MetricsError::Config(format!(
                "noise_var has {} entries, the stream {} targets",
                noise_var.len(),
                self.config.noise_var.len()
            )));
        }
        let old = std::mem::replace(&mut self.config.noise_var, noise_var.to_vec());
        let checked = self.check();
        if checked.is_err() {
            self.config.noise_var = old;
        }
        checked
    }

    /// Checks the configuration.
    pub fn check(&self) -> Result<()> {
        if self.config.noise_var.is_empty() {
            return Err(MetricsError::Config(
                "no targets (noise_var is empty)".into(),
            ));
        }
        if let Some(t) = self
            .config
            .noise_var
            .iter()
            .position(|v| !(v.is_finite() && *v >= 0.0))
        {
            return Err(MetricsError::Config(format!(
                "noise_var[{t}] = {} must be finite and >= 0",
                self.config.noise_var[t]
            )));
        }
        if !(self.config.var_floor.is_finite() && self.config.var_floor >= 0.0) {
            return Err(MetricsError::Config(format!(
                "var_floor = {} must be finite and >= 0",
                self.config.var_floor
            )));
        }
        if let Some(floors) = &self.config.target_var_floors {
            if floors.len() != self.config.noise_var.len() {
                return Err(MetricsError::Config(format!(
                    "{} variance floors for {} targets",
                    floors.len(),
                    self.config.noise_var.len()
                )));
            }
            if let Some(t) = floors.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(MetricsError::Config(format!(
                    "variance floor of target {t} = {} must be finite and >= 0",
                    floors[t]
                )));
            }
        }
        Ok(())
    }

    /// Number of targets p.
    pub fn n_targets(&self) -> usize {
        self.acc.len()
    }

    /// Samples pushed so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Current SMSE_i of target `t` (i = count − 1); `None` before the first sample.
    pub fn smse_current(&self, t: usize) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        self.acc.get(t).map(|a| a.smse_last)
    }

    /// Adds sample i = `count()`: its targets `y` (p) and the prediction (mean, latent variance)
    /// made before `y` was seen. Step 0 has no prediction (`None`); a prediction given at
    /// step 0 is ignored, as in the reference loop. Every later step needs one.
    ///
    /// O(p), no allocation (unless curves are recorded beyond their capacity).
    pub fn push(&mut self, y: &[f64], prediction: Option<(&[f64], &[f64])>) -> Result<()> {
        let p = self.acc.len();
        let i = self.count;
        if y.len() != p {
            return Err(MetricsError::Dimension {
                what: "targets",
                expected: p,
                found: y.len(),
            });
        }
        if let Some(t) = y.iter().position(|v| !v.is_finite()) {
            return Err(MetricsError::NonFinite {
                what: "target",
                step: i,
                target: t,
            });
        }
        let pred = if i == 0 {
            None
        } else {
            let (mean, var) = prediction.ok_or(MetricsError::MissingPrediction { step: i })?;
            if mean.len() != p {
                return Err(MetricsError::Dimension {
                    what: "mean",
                    expected: p,
                    found: mean.len(),
                });
            }
            if var.len() != p {
                return Err(MetricsError::Dimension {
                    what: "variance",
                    expected: p,
                    found: var.len(),
                });
            }
            if let Some(t) = mean.iter().position(|v| !v.is_finite()) {
                return Err(MetricsError::NonFinite {
                    what: "predicted mean",
                    step: i,
                    target: t,
                });
            }
            if let Some(t) = var.iter().position(|v| !v.is_finite()) {
                return Err(MetricsError::NonFinite {
                    what: "predicted variance",
                    step: i,
                    target: t,
                });
            }
            Some((mean, var))
        };

        let n = (i + 1) as f64;
        for t in 0..p {
            let a = &mut self.acc[t];
            let yt = y[t];
            if i == 0 {
                a.shift = yt;
            }
            // Welford: population variance of y_0..y_i is m2 / (i + 1).
            let delta = yt - a.mean;
            a.mean += delta / n;
            a.m2 += delta * (yt - a.mean);

            let nll = match pred {
                None => 0.0,
                Some((mean, var)) => {
                    let r = yt - mean[t];
                    a.sse += r * r;
                    let s2 = var[t].max(self.config.floor(t)) + self.config.noise_var[t];
                    0.5 * (2.0 * PI * s2).ln() + r * r / (2.0 * s2)
                }
            };
            a.smse_last = if i == 0 {
                1.0
            } else {
                let var_pop = a.m2 / n;
                if var_pop > 0.0 {
                    a.sse / (i as f64 * var_pop)
                } else {
                    1.0
                }
            };
            a.smse_sum += a.smse_last;

            let u = yt - a.shift;
            a.nll_sum += nll;
            a.s1 += u;
            a.s2 += u * u;
            a.c_nll += a.nll_sum / n;
            a.c_s1 += a.s1 / n;
            a.c_s2 += a.s2 / n;

            if let Some(rec) = &mut self.record {
                rec.smse.push(a.smse_last);
                rec.sums.push([a.nll_sum, a.s1, a.s2]);
            }
        }
        self.count += 1;
        Ok(())
    }

    /// Applies the whole-stream MSLL baseline and returns the final and curve-mean values per
    /// target (and the curves if recorded). The accumulator is left unchanged. O(p), or
    /// O(N·p) with curves.
    pub fn finish(&self) -> Result<MetricsReport> {
        if self.count == 0 {
            return Err(MetricsError::Empty);
        }
        let n = self.count as f64;
        let p = self.acc.len();
        let mut targets = Vec::with_capacity(p);
        // Baseline constants per target: (v, d = m − shift, ½ log 2πv).
        let mut base = Vec::with_capacity(p);
        for a in &self.acc {
            let v = a.m2 / n;
            let d = a.mean - a.shift;
            let half_log = 0.5 * (2.0 * PI * v).ln();
            base.push((v, d, half_log));
            // MSLL_i = A_i/(i+1) − ½log(2πv) − (S2_i − 2 d S1_i + (i+1) d²)/(2v(i+1)).
            let msll_final = msll_value(a.nll_sum, a.s1, a.s2, n, v, d, half_log);
            // Curve mean: the same affine map applied to the averaged sums.
            let msll_curve_mean =
                (a.c_nll - n * half_log - (a.c_s2 - 2.0 * d * a.c_s1 + n * d * d) / (2.0 * v)) / n;
            let (msll_final, msll_curve_mean) = if v > 0.0 {
                (msll_final, msll_curve_mean)
            } else {
                (f64::NAN, f64::NAN)
            };
            targets.push(TargetMetrics {
                smse_final: a.smse_last,
                smse_curve_mean: a.smse_sum / n,
                msll_final,
                msll_curve_mean,
                target_mean: a.mean,
                target_var: v,
            });
        }
        let curves = self.record.as_ref().map(|rec| {
            let msll = rec
                .sums
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let (i, t) = (k / p, k % p);
                    let (v, d, half_log) = base[t];
                    if v > 0.0 {
                        msll_value(s[0], s[1], s[2], (i + 1) as f64, v, d, half_log)
                    } else {
                        f64::NAN
                    }
                })
                .collect();
            Curves {
                n_targets: p,
                smse: rec.smse.clone(),
                msll,
            }
        });
        Ok(MetricsReport {
            n_samples: self.count,
            targets,
            curves,
        })
    }
}

/// MSLL of a prefix of `n` samples from its sums (see the module doc).
fn msll_value(nll_sum: f64, s1: f64, s2: f64, n: f64, v: f64, d: f64, half_log: f64) -> f64 {
    nll_sum / n - half_log - (s2 - 2.0 * d * s1 + n * d * d) / (2.0 * v * n)
}
