//! `gp-node eval`'s refits of fitted hyperparameters as the stream grows
//! (`gp_node::eval::refit`): due steps, adoption, the σ_n² that follows, determinism, and
//! that the model taking over has learned every sample exactly once, in order, whether it
//! was adopted at its due step or later (a wall-clock rate). Uses the SkyGP plugin (build
//! it first: `cargo build -p gpn_skygp`).

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use gp_node::eval::{
    config,
    dataset::{Centering, ColumnSelection, Dataset},
    refit::{RefitPlan, RefitSummary, Refitting},
    runner::{ModelSlot, Pacing, RunOptions, run_stream_in_slot},
};
use gp_node::plugin_host::{Plugin, SearchPath};
use gpn_gp_core::hyperfit::FitMode;
use gpn_gp_core::kernel::KernelKind;
use gpn_gp_core::model::OnlineModel;
use serde_json::{Value, json};

/// A 2-input stream whose target's scale grows tenfold after `change` samples: values
/// fitted before the change predict what follows badly, a refit after it better.
fn stream(n: usize, change: usize) -> Dataset {
    let mut s = String::from("x1,x2,y\n");
    for i in 0..n {
        let (a, b) = ((i as f64 * 0.37).sin() * 2.0, (i as f64 * 0.11).cos() * 2.0);
        let gain = if i < change { 0.3 } else { 3.0 };
        let y = gain * (a * 1.3).sin() * b + 0.05 * (i as f64 * 7.1).sin();
        s += &format!("{a},{b},{y}\n");
    }
    let mut data = Dataset::from_reader(s.as_bytes(), "mem", &ColumnSelection::default()).unwrap();
    data.center(Centering::WholeFile);
    data
}

/// The first fit (on the first `first` samples), the plugin, the plan.
fn setup(data: &Dataset, first: usize, background: bool) -> (Plugin, Value, RefitPlan) {
    let (hyper, _) = config::fit_hyper(
        data,
        KernelKind::SquaredExponential,
        first,
        FitMode::SharedLengthscales,
        None,
    )
    .unwrap();
    let mut cfg = json!({"variant": "fast"});
    config::merge_hyper(&mut cfg, hyper).unwrap();
    let plugin = Plugin::find("skygp", &SearchPath::standard(Vec::<&str>::new())).unwrap();
    let plan = RefitPlan {
        first,
        max_refits: 2,
        max_points: first,
        kind: KernelKind::SquaredExponential,
        mode: FitMode::SharedLengthscales,
        background,
        dt_secs: 1.0,
        ready_timeout: std::time::Duration::from_secs(60),
    };
    (plugin, cfg, plan)
}

/// Runs the stream with refits; returns the report's final SMSE bits and the slot.
fn run(data: &Dataset, first: usize, pacing: Pacing) -> (u64, Refitting) {
    let background = matches!(pacing, Pacing::Rate { .. });
    let (plugin, cfg, plan) = setup(data, first, background);
    let model = plugin.create_json(&cfg, 2, 1).unwrap();
    let noise = config::noise_vars(&cfg, 1).unwrap();
    let mut slot = Refitting::new(model, plugin, cfg, plan);
    let opts = RunOptions {
        pacing,
        ..RunOptions::new(noise)
    };
    let report = run_stream_in_slot(
        "skygp",
        &mut slot,
        data,
        &opts,
        &mut |_| {},
        &mut |_, _, _| {},
        &mut |_, _, _| {},
    )
    .unwrap();
    (report.metrics[0].smse_final.to_bits(), slot)
}

/// The prediction at a probe of a fresh model with `cfg`, taught every sample in order.
fn taught_from_scratch(cfg: &Value, data: &Dataset, probe: &[f64]) -> (f64, f64) {
    let plugin = Plugin::find("skygp", &SearchPath::standard(Vec::<&str>::new())).unwrap();
    let mut model = plugin.create_json(cfg, 2, 1).unwrap();
    let noise = config::noise_vars(cfg, 1).unwrap();
    for i in 0..data.len() {
        model
            .update(data.x_update_row(i), data.y_update_row(i), i as f64, &noise)
            .unwrap();
    }
    predict(&mut model, probe)
}

fn predict(model: &mut dyn OnlineModel, probe: &[f64]) -> (f64, f64) {
    let (mut m, mut v) = ([0.0], [0.0]);
    model.predict(probe, &mut m, &mut v).unwrap();
    (m[0], v[0])
}

/// Each refit takes over at its due step exactly when it predicts the held-out samples
/// better than the values in use; the first, after the change, does.
fn check_log(log: &[RefitSummary], at_due: bool) {
    assert_eq!(log.len(), 2, "{log:?}");
    for (r, due) in log.iter().zip([200, 400]) {
        // At a rate a refit starts late if the one before still runs.
        assert!(r.due == due || !at_due && r.due > due, "{r:?}");
        assert_eq!(r.points, 100, "{r:?}");
        assert!(r.error.is_none() && r.nlml <= r.nlml_init, "{r:?}");
        let (in_use, refit) = r.held_out_nlpd.unwrap();
        match r.adopted {
            Some(at) => assert!(
                refit < in_use && (at == r.due || !at_due && at > r.due),
                "{r:?}"
            ),
            None => assert!(refit >= in_use, "{r:?}"),
        }
    }
    assert!(log[0].adopted.is_some(), "{:?}", log[0]);
}

#[test]
fn refits_take_over_at_their_due_steps_having_learned_every_sample() {
    let data = stream(700, 100);
    let (smse, mut slot) = run(&data, 100, Pacing::default());
    let log = slot.log().to_vec();
    check_log(&log, true);
    let last = log.iter().rev().find(|r| r.adopted.is_some()).unwrap();
    assert_eq!(slot.config()["hyper"], last.hyper);
    // The model at the end is the last adopted refit's and has learned samples 0..n once
    // each.
    let probe = [0.3, -0.7];
    let end = predict(ModelSlot::model(&mut slot), &probe);
    assert_eq!(end, taught_from_scratch(slot.config(), &data, &probe));
    // Adopted at fixed steps: the same result every run.
    let (again, _) = run(&data, 100, Pacing::default());
    assert_eq!(smse, again);
}

/// At a wall-clock rate the refits run while the stream goes on and take over when ready:
/// at or after their due step, and still having learned every sample once.
#[test]
fn at_a_rate_refits_take_over_when_ready() {
    let data = stream(2000, 100);
    let (_, mut slot) = run(&data, 100, Pacing::Rate { hz: 1000.0 });
    check_log(slot.log(), false);
    let probe = [-1.1, 0.4];
    let end = predict(ModelSlot::model(&mut slot), &probe);
    assert_eq!(end, taught_from_scratch(slot.config(), &data, &probe));
}
