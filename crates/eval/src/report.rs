//! The result of an evaluation run, as a text table or as the JSON of `gp-node eval --json`
//! (keys fixed by DESIGN.md §6; keys are only ever added).

use std::fmt::Write as _;

use gpn_gp_core::metrics::TargetMetrics;
use gpn_gp_core::model::ModelStats;

use crate::readiness::ReadinessReport;
use crate::runner::Pacing;
use serde_json::{Value, json};

/// Per-call timing summary in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timing {
    /// Number of calls.
    pub count: usize,
    /// Mean.
    pub mean_us: f64,
    /// 50th percentile (nearest rank).
    pub p50_us: f64,
    /// 99th percentile (nearest rank).
    pub p99_us: f64,
    /// Maximum.
    pub max_us: f64,
}

impl Timing {
    /// Summarises per-call durations in ns (sorts the buffer in place). Empty → all zeros.
    pub fn from_ns(ns: &mut [u64]) -> Self {
        if ns.is_empty() {
            return Self::default();
        }
        ns.sort_unstable();
        let n = ns.len();
        let rank = |q: f64| ns[((q * n as f64).ceil() as usize).clamp(1, n) - 1] as f64 / 1e3;
        let sum: u128 = ns.iter().map(|&v| u128::from(v)).sum();
        Self {
            count: n,
            mean_us: sum as f64 / n as f64 / 1e3,
            p50_us: rank(0.5),
            p99_us: rank(0.99),
            max_us: ns[n - 1] as f64 / 1e3,
        }
    }
}

/// Truth-based numbers (with `--truth`), one entry per target.
#[derive(Debug, Clone, PartialEq)]
pub struct TruthReport {
    /// RMSE of μ against the truth over the predicted steps.
    pub rmse: Vec<f64>,
    /// Fraction of the second half with |truth − μ| ≤ η_cal (NaN if never calibrated).
    pub coverage: Vec<f64>,
    /// The frozen β_cal (NaN if never calibrated).
    pub beta_cal: Vec<f64>,
    /// Samples the coverage was measured on.
    pub n_tested: usize,
}

/// Everything an evaluation run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalReport {
    /// Plugin name.
    pub plugin: String,
    /// Samples streamed N.
    pub n_samples: usize,
    /// Target names.
    pub targets: Vec<String>,
    /// SMSE/MSLL per target.
    pub metrics: Vec<TargetMetrics>,
    /// Predict timing (N − 1 calls).
    pub predict: Timing,
    /// Update timing (N calls).
    pub update: Timing,
    /// With truth columns.
    pub truth: Option<TruthReport>,
    /// Model counters at the end.
    pub stats: ModelStats,
    /// Wall time of the streaming loop in seconds.
    pub wall_s: f64,
    /// The contamination of the streamed targets, if any.
    pub contamination: Option<crate::contamination::Summary>,
    /// The model's own diagnostics at the end of the run (the plugin's `describe`), if it
    /// has any; the `--json` key `model_info`.
    pub model_info: Option<Value>,
    /// Which predictions came from the prior ([`crate::readiness`]).
    pub readiness: ReadinessReport,
    /// How the stream was fed.
    pub pacing: Pacing,
    /// Seconds spent waiting for the model's background work ([`Pacing::WaitReady`]).
    pub wait_s: f64,
    /// The configuration the model ran with (the plugin's defaults, the given keys over
    /// them), when the caller knows it; the `--json` key `config`.
    pub config: Option<Value>,
    /// The hyperparameters of each target, when the configuration has them; the `--json`
    /// key `hyper` (an array of one object per target).
    pub hyper: Option<Value>,
    /// How the hyperparameters were fitted, when they were; the `--json` key `fit`.
    pub fit: Option<FitSummary>,
    /// Refits of fitted hyperparameters as the stream grew ([`crate::refit`]); the
    /// `--json` key `refits` (present when a fit was made).
    pub refits: Vec<crate::refit::RefitSummary>,
    /// The MSLL's variance floor: in target units², or a fraction of each target's variance
    /// when `var_floor_relative`; the `--json` key `var_floor` {`value`, `relative`}.
    pub var_floor: f64,
    /// See `var_floor`.
    pub var_floor_relative: bool,
}

/// A hyperparameter fit on the stream: what `gp-node eval` did when none were given.
#[derive(Debug, Clone, PartialEq)]
pub struct FitSummary {
    /// `shared` (lengthscales shared by the targets) or `per_output`.
    pub mode: &'static str,
    /// Samples fitted on.
    pub samples: usize,
    /// Wall time of the fit in seconds.
    pub seconds: f64,
    /// NLML summed over targets at the start and at the end.
    pub nlml_init: f64,
    /// See `nlml_init`.
    pub nlml: f64,
    /// Final NLML per target.
    pub nlml_per_output: Vec<f64>,
}

impl EvalReport {
    /// The `--json` object: DESIGN.md §6 keys (`plugin`, `n_samples`, `targets`,
    /// `smse_final`, `smse_curve_mean`, `msll_final`, `msll_curve_mean`, with truth
    /// `truth_rmse` and `bound_coverage`, `predict_us_mean`, `predict_us_p99`,
    /// `update_us_mean`, `update_us_p99`, `experts`, `memory_bytes`) plus `predict_us_p50`,
    /// `predict_us_max`, `update_us_p50`, `update_us_max`, `samples_stored`, `wall_s`,
    /// with truth `beta_cal`, with `--contaminate` `contamination` {`kind`, `rate`, `seed`,
    /// `count`, `spike` (the encoder spike, else null)}, `model_info` (the model's
    /// `describe` object) when the model reports one, `var_floor`, `config`, `hyper` (per target) and `fit` when known, and the
    /// readiness keys of [`EvalReport::insert_readiness`]. Non-finite numbers
    /// become `null`.
    pub fn to_json(&self) -> Value {
        let per = |f: fn(&TargetMetrics) -> f64| -> Vec<Value> {
            self.metrics.iter().map(|m| num(f(m))).collect()
        };
        let mut v = json!({
            "plugin": self.plugin,
            "n_samples": self.n_samples,
            "targets": self.targets,
            "smse_final": per(|m| m.smse_final),
            "smse_curve_mean": per(|m| m.smse_curve_mean),
            "msll_final": per(|m| m.msll_final),
            "msll_curve_mean": per(|m| m.msll_curve_mean),
            "predict_us_mean": num(self.predict.mean_us),
            "predict_us_p50": num(self.predict.p50_us),
            "predict_us_p99": num(self.predict.p99_us),
            "predict_us_max": num(self.predict.max_us),
            "update_us_mean": num(self.update.mean_us),
            "update_us_p50": num(self.update.p50_us),
            "update_us_p99": num(self.update.p99_us),
            "update_us_max": num(self.update.max_us),
            "experts": self.stats.experts,
            "memory_bytes": self.stats.memory_bytes,
            "samples_stored": self.stats.samples_stored,
            "wall_s": num(self.wall_s),
        });
        if let (Some(t), Value::Object(map)) = (&self.truth, &mut v) {
            let list = |xs: &[f64]| Value::Array(xs.iter().map(|&x| num(x)).collect());
            map.insert("truth_rmse".into(), list(&t.rmse));
            map.insert("bound_coverage".into(), list(&t.coverage));
            map.insert("beta_cal".into(), list(&t.beta_cal));
        }
        if let (Some(c), Value::Object(map)) = (&self.contamination, &mut v) {
            map.insert(
                "contamination".into(),
                json!({"kind": c.kind.name(), "rate": c.rate, "seed": c.seed, "count": c.count, "spike": c.spike}),
            );
        }
        if let (Some(info), Value::Object(map)) = (&self.model_info, &mut v) {
            map.insert("model_info".into(), info.clone());
        }
        if let Value::Object(map) = &mut v {
            self.insert_readiness(map);
            map.insert(
                "var_floor".into(),
                json!({"value": num(self.var_floor), "relative": self.var_floor_relative}),
            );
            if let Some(config) = &self.config {
                map.insert("config".into(), config.clone());
            }
            if let Some(hyper) = &self.hyper {
                map.insert("hyper".into(), hyper.clone());
            }
            if let Some(f) = &self.fit {
                map.insert(
                    "fit".into(),
                    json!({
                        "mode": f.mode,
                        "samples": f.samples,
                        "seconds": num(f.seconds),
                        "nlml_init": num(f.nlml_init),
                        "nlml": num(f.nlml),
                        "nlml_per_output": f.nlml_per_output.iter().map(|&x| num(x)).collect::<Vec<_>>(),
                    }),
                );
                let refits: Vec<Value> = self
                    .refits
                    .iter()
                    .map(|r| {
                        json!({
                            "due": r.due,
                            "adopted": r.adopted,
                            "points": r.points,
                            "seconds": num(r.seconds),
                            "nlml_init": num(r.nlml_init),
                            "nlml": num(r.nlml),
                            "hyper": r.hyper,
                            "held_out_nlpd": r.held_out_nlpd.map(|(in_use, refit)| {
                                json!({"in_use": num(in_use), "refit": num(refit)})
                            }),
                            "error": r.error,
                        })
                    })
                    .collect();
                map.insert("refits".into(), Value::Array(refits));
            }
        }
        v
    }

    /// `pacing` ({`mode`: `wait`, `timeout_s`} or {`mode`: `rate`, `hz`}), `wait_s`, and per
    /// target `prior_fraction`, `ready_at_step`, `prior_fraction_after_ready`, plus
    /// `max_samples_behind` (each `null` when the model does not report its readiness).
    fn insert_readiness(&self, map: &mut serde_json::Map<String, Value>) {
        let pacing = match self.pacing {
            Pacing::WaitReady { timeout } => {
                json!({"mode": "wait", "timeout_s": timeout.as_secs_f64()})
            }
            Pacing::Rate { hz } => json!({"mode": "rate", "hz": num(hz)}),
        };
        let r = &self.readiness;
        let list = |xs: &Option<Vec<f64>>| {
            xs.as_ref()
                .map_or(Value::Null, |v| v.iter().map(|&x| num(x)).collect())
        };
        map.insert("pacing".into(), pacing);
        map.insert("wait_s".into(), num(self.wait_s));
        map.insert("prior_fraction".into(), list(&r.prior_fraction));
        map.insert("ready_at_step".into(), json!(r.ready_at_step));
        map.insert(
            "prior_fraction_after_ready".into(),
            list(&r.prior_fraction_after_ready),
        );
        map.insert("max_samples_behind".into(), json!(r.max_samples_behind));
    }

    /// The readiness lines of the table: the fraction from the prior per target, and a
    /// warning when a model never caught up or fell back after it did.
    fn readiness_table(&self) -> String {
        let mut s = String::new();
        let r = &self.readiness;
        let (Some(fraction), Some(at), Some(after)) = (
            &r.prior_fraction,
            &r.ready_at_step,
            &r.prior_fraction_after_ready,
        ) else {
            let _ = writeln!(
                s,
                "from the prior: unknown (the model does not report its readiness)"
            );
            return s;
        };
        let items: Vec<String> = self
            .targets
            .iter()
            .zip(fraction.iter().zip(at.iter().zip(after)))
            .map(|(name, (f, (at, after)))| match at {
                Some(step) if *after > 0.0 => {
                    format!("{name} {f:.4} (ready at step {step}, {after:.4} after)")
                }
                Some(step) => format!("{name} {f:.4} (ready at step {step})"),
                None => format!("{name} {f:.4} (never ready)"),
            })
            .collect();
        let _ = writeln!(s, "from the prior: {}", items.join("  "));
        match self.pacing {
            Pacing::WaitReady { .. } => {
                let _ = writeln!(
                    s,
                    "waited {:.2} s for the model's background work",
                    self.wait_s
                );
            }
            Pacing::Rate { hz } => {
                let _ = writeln!(
                    s,
                    "streamed at {hz} Hz; the background was up to {} samples behind",
                    r.max_samples_behind.unwrap_or(0)
                );
            }
        }
        if !r.all_ready() {
            let _ = writeln!(
                s,
                "WARNING: some predictions after the model was ready, or all of them, came from the prior: these scores are not the model's"
            );
        }
        s
    }

    /// A human-readable table (one row per target, then timings and model counters).
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "plugin {}  samples {}", self.plugin, self.n_samples);
        if let Some(c) = &self.contamination {
            let _ = writeln!(
                s,
                "contamination {}:{} (seed {}): {} {}; metrics use the clean stream",
                c.kind.name(),
                c.rate,
                c.seed,
                c.count,
                c.kind.counted()
            );
        }
        let width = self
            .targets
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = write!(
            s,
            "{:<width$}  {:>10}  {:>10}  {:>10}  {:>10}",
            "target", "SMSE fin", "SMSE mean", "MSLL fin", "MSLL mean"
        );
        if self.truth.is_some() {
            let _ = write!(
                s,
                "  {:>10}  {:>8}  {:>8}",
                "RMSE truth", "β_cal", "coverage"
            );
        }
        s.push('\n');
        for (k, (name, m)) in self.targets.iter().zip(&self.metrics).enumerate() {
            let _ = write!(
                s,
                "{name:<width$}  {:>10.4}  {:>10.4}  {:>10.3}  {:>10.3}",
                m.smse_final, m.smse_curve_mean, m.msll_final, m.msll_curve_mean
            );
            if let Some(t) = &self.truth {
                let _ = write!(
                    s,
                    "  {:>10.4}  {:>8.3}  {:>8.3}",
                    t.rmse[k], t.beta_cal[k], t.coverage[k]
                );
            }
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "predict µs/sample: mean {:.2}  p50 {:.2}  p99 {:.2}  max {:.1}  ({} calls)",
            self.predict.mean_us,
            self.predict.p50_us,
            self.predict.p99_us,
            self.predict.max_us,
            self.predict.count
        );
        let _ = writeln!(
            s,
            "update  µs/sample: mean {:.2}  p50 {:.2}  p99 {:.2}  max {:.1}  ({} calls)",
            self.update.mean_us,
            self.update.p50_us,
            self.update.p99_us,
            self.update.max_us,
            self.update.count
        );
        let _ = writeln!(
            s,
            "experts {}  samples stored {}  memory {:.2} MB  wall {:.2} s",
            self.stats.experts,
            self.stats.samples_stored,
            self.stats.memory_bytes as f64 / 1e6,
            self.wall_s
        );
        if let Some(t) = &self.truth {
            let _ = writeln!(
                s,
                "coverage measured on the second half ({} samples), η_cal = β_cal·σ_latent",
                t.n_tested
            );
        }
        if let Some(f) = &self.fit {
            let _ = writeln!(
                s,
                "hyperparameters fitted ({}) on {} samples in {:.2} s: NLML {:.3} from {:.3}",
                f.mode.replace('_', "-"),
                f.samples,
                f.seconds,
                f.nlml,
                f.nlml_init
            );
        }
        for r in &self.refits {
            let held_out = r
                .held_out_nlpd
                .map(|(a, b)| format!(", held-out NLPD {b:.3} against {a:.3}"))
                .unwrap_or_default();
            let _ = match (&r.error, r.adopted) {
                (None, Some(at)) => writeln!(
                    s,
                    "refitted on {} of the first {} samples in {:.2} s (NLML {:.3} from {:.3}{held_out}), used from step {at}",
                    r.points, r.due, r.seconds, r.nlml, r.nlml_init
                ),
                (None, None) => writeln!(
                    s,
                    "refit on {} of the first {} samples kept the values in use (it did not predict the others better{held_out})",
                    r.points, r.due
                ),
                (error, _) => writeln!(
                    s,
                    "refit due at step {} failed, the model stayed: {}",
                    r.due,
                    error.as_deref().unwrap_or("unknown")
                ),
            };
        }
        s.push_str(&self.readiness_table());
        if let Some(info) = &self.model_info {
            s.push_str(&model_info_table(info));
        }
        s
    }
}

/// The model's diagnostics as text: a kernel-belief table when the model reports kept
/// kernels (`kept`: objects with `kernel` and `weight`, as VBKS does), else the JSON on one
/// line.
pub fn model_info_table(info: &Value) -> String {
    let mut s = String::new();
    let Some(kept) = info.get("kept").and_then(Value::as_array) else {
        let _ = writeln!(s, "model info: {info}");
        return s;
    };
    let phase = info.get("phase").and_then(Value::as_str).unwrap_or("?");
    let space = info
        .get("kernel_space_size")
        .and_then(Value::as_u64)
        .map_or(String::new(), |k| format!(" of {k} candidates"));
    let _ = writeln!(
        s,
        "kernel belief ({} kept{space}, phase {phase}):",
        kept.len()
    );
    let _ = writeln!(
        s,
        "  {:>8}  {:>8}  {:>12}  kernel",
        "weight", "offline", "L* (nats)"
    );
    let f = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(f64::NAN);
    for k in kept {
        let _ = writeln!(
            s,
            "  {:>8.4}  {:>8.4}  {:>12.2}  {}",
            f(k.get("weight")),
            f(k.get("offline_weight")),
            f(k.get("offline_bound")),
            k.get("kernel").and_then(Value::as_str).unwrap_or("?")
        );
    }
    s
}

fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}
