//! The model's diagnostics for the ABI's `describe` (one JSON object; not real-time).
//!
//! Keys (stable; only ever added):
//!
//! * `warmup` ([`warmup`]): the model that predicts before the offline phase is done;
//! * `model` (`"vbks"`), `phase` (`collecting`, `offline`, `online`, `failed`),
//!   `samples_seen`, `offline_samples`, `kernel_space_size`, `inducing`,
//!   `inducing_select`, `forgetting`, `predict` (`mixture` or the kept index), and
//!   `error` when the offline phase failed;
//! * once online — `kept`: one object per kept kernel, highest offline weight first:
//!   `kernel`, `weight` (current), `offline_weight`, `offline_bound` (L_i* in nats, summed
//!   over outputs, at the N offline samples), `local_bound` (the collapsed bound of all
//!   samples so far, from the online statistics), `online_evidence` (L_i* plus the online
//!   samples' prequential log predictive density: what the online belief refits use),
//!   `noise_var` (learned s² in original units, per output) and `hyper`
//!   (learned parameters by name, in standardised units);
//! * `offline`: `seconds`, `samples`, `top_kernels` (the ten of highest weight in the whole
//!   space: `kernel`, `weight`, `bound`) and `trajectory` (per checkpoint: `samples` and the
//!   three kernels of highest weight with their weights);
//! * `counters`: `pending_dropped`, `belief_refits`, `refactors`, `refactors_stale`,
//!   `online_samples`;
//! * with `drift`: `drift` (`config`, `window_samples`, `window_capacity`, `t_newest_s`,
//!   `refreshes`, `refresh_failures`, `window_dropped`, `rebuild_in_flight`).

use serde_json::{Value, json};

use crate::config::PredictWith;
use crate::ensemble::Ensemble;
use crate::inject::DriftState;
use crate::model::Vbks;
use crate::offline::OfflineReport;

fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// A kept component's collapsed bound: with drift the heteroscedastic one (per-sample
/// variances v_j), else the plain one.
fn local_bound(model: &Vbks, i: usize, c: &crate::component::Component) -> f64 {
    match model.drift.as_deref() {
        Some(ds) if ds.injection.is_some() => ds.terms.get(i).map_or(f64::NAN, |t| t.bound(c)),
        _ => c.local_bound(),
    }
}

/// The warm-up model: `samples` (the key), `state` (`waiting`, `building`, `predicting`,
/// `replaced`, `failed`, `off`), `builds` adopted, `kernel` while it predicts, `error` of
/// the last failed build.
fn warmup(model: &Vbks) -> Value {
    let w = &model.warmup;
    let mut out = json!({
        "samples": model.cfg.warmup_samples,
        "state": w.state(),
        "builds": w.builds,
    });
    if let Value::Object(map) = &mut out {
        if let Some(c) = w.model.as_deref().and_then(|e| e.components.first()) {
            map.insert("kernel".into(), json!(c.spec.expr().to_string()));
        }
        if let Some(err) = &w.error {
            map.insert("error".into(), json!(err));
        }
    }
    out
}

/// The diagnostics object.
pub(crate) fn describe(model: &Vbks) -> Value {
    let cfg = &model.cfg;
    let mut out = json!({
        "model": "vbks",
        "phase": model.phase.name(),
        "samples_seen": model.samples_seen,
        "offline_samples": cfg.offline_samples,
        "kernel_space_size": cfg.kernels.len(),
        "inducing": cfg.inducing,
        "inducing_select": cfg.inducing_select,
        "forgetting": num(cfg.forgetting),
        "predict": match cfg.predict {
            PredictWith::Mixture => json!("mixture"),
            PredictWith::Component(i) => json!(i),
        },
        "counters": {
            "pending_dropped": model.counters.pending_dropped,
            "belief_refits": model.counters.belief_refits,
            "refactors": model.counters.refactors,
            "refactors_stale": model.counters.refactors_stale,
            "online_samples": model.counters.online_samples,
        },
    });
    let Value::Object(map) = &mut out else {
        return out;
    };
    if let Some(err) = &model.failure {
        map.insert("error".into(), json!(err));
    }
    map.insert("warmup".into(), warmup(model));
    if let Some(ds) = model.drift.as_deref() {
        map.insert("drift".into(), drift(ds));
    }
    if let (Some(e), Some(report)) = (model.ensemble.as_deref(), model.report.as_deref()) {
        map.insert("kept".into(), Value::Array(kept(model, e, report)));
        map.insert("offline".into(), offline(report));
    }
    out
}

/// The `drift` object.
fn drift(ds: &DriftState) -> Value {
    let c = ds.counters;
    json!({
        "config": format!("{:?}", ds.drift),
        "window_samples": ds.window.len(),
        "window_capacity": ds.window.capacity(),
        "t_newest_s": num(ds.t_newest),
        "refreshes": c.refreshes,
        "refresh_failures": c.refresh_failures,
        "window_dropped": c.window_dropped,
        "rebuild_in_flight": ds.job.is_none(),
    })
}

/// One object per kept kernel of the ensemble `e`.
fn kept(model: &Vbks, e: &Ensemble, report: &OfflineReport) -> Vec<Value> {
    e.components
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let np = c.spec.n_params();
            let hyper: serde_json::Map<String, Value> = c
                .spec
                .params()
                .iter()
                .zip(&c.psi)
                .map(|(info, &psi)| (info.name(), num(psi.exp())))
                .collect();
            let noise: Vec<Value> = e
                .scaler
                .y_scale
                .iter()
                .map(|s| num(c.psi[np].exp() * s * s))
                .collect();
            json!({
                "kernel": c.spec.expr().to_string(),
                "weight": num(e.weights[i]),
                "offline_weight": num(report.kept_weights.get(i).copied().unwrap_or(f64::NAN)),
                "offline_bound": num(c.offline_bound),
                "local_bound": num(local_bound(model, i, c)),
                "online_evidence": num(c.online_evidence()),
                "noise_var": noise,
                "hyper": hyper,
            })
        })
        .collect()
}

/// The `offline` object: the ten kernels of highest weight and the trajectory.
fn offline(report: &OfflineReport) -> Value {
    let mut order: Vec<usize> = (0..report.kernels.len()).collect();
    order.sort_by(|&a, &b| {
        report.kernels[b]
            .weight
            .total_cmp(&report.kernels[a].weight)
    });
    let top: Vec<Value> = order
        .iter()
        .take(10)
        .map(|&i| {
            let k = &report.kernels[i];
            json!({"kernel": k.expr, "weight": num(k.weight), "bound": num(k.bound)})
        })
        .collect();
    let trajectory: Vec<Value> = report
        .trajectory
        .iter()
        .map(|c| {
            let mut idx: Vec<usize> = (0..c.weights.len()).collect();
            idx.sort_by(|&a, &b| c.weights[b].total_cmp(&c.weights[a]));
            let top3: Vec<Value> = idx
                .iter()
                .take(3)
                .map(|&i| json!([report.kernels[i].expr, num(c.weights[i])]))
                .collect();
            json!({"samples": c.samples, "top": top3})
        })
        .collect();
    json!({
        "seconds": num(report.seconds),
        "samples": report.samples,
        "top_kernels": top,
        "trajectory": trajectory,
    })
}
