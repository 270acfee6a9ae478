//! Control-loop issue: the tick with an exact-compensation model, each supervisor
//! fallback, bad input, and the acceleration estimator's handling of stream faults.

use std::time::Duration;

use gp_node::app;
use gp_node::app::NodeParams;
use gp_node::control::{
    BudgetClock, ControlParams, Fallback, SupervisorParams, Tick, TickInput, TickOutput, TickResult,
};
use gp_node::learn::{
    AccelEstimator, AccelParams, AccelUpdate, LearnParams, Learner, ModelFactory,
};
use gp_node::robot::Model;
use gp_node::simulate;
use gpn_gp_core::model::ModelError;

mod loop_support;
use loop_support::{Script, exact_factory, holding_still, scripted_factory};

fn default_params(duration_s: f64) -> NodeParams {
    let mut params = gp_node::app::resolved_default_params().expect("built-in parameters parse");
    params.run.duration_s = duration_s;
    params
}

/// Control-loop acceptance: exact compensation keeps RMS tracking ≤ 5e-4 rad on every joint.
#[test]
fn exact_compensation_tracks_within_half_a_milliradian() {
    let mut params = default_params(6.0);
    params.model.config = serde_json::json!({"hyper": {}});
    let robot = app::load_robot(&params).expect("robot");
    let factory = exact_factory(&robot, &params.sim);
    let log =
        simulate::run_with_factory(&robot, &params, true, factory, None, &mut |_| {}).expect("run");
    let series = log.series.as_ref().expect("the per-tick series");
    let n = series.t_secs.len();
    for j in 0..7 {
        let rms = ((0..n)
            .map(|k| series.error_rad[k * 7 + j].powi(2))
            .sum::<f64>()
            / n as f64)
            .sqrt();
        assert!(rms <= 5e-4, "joint {j}: RMS {rms} rad");
    }
    assert!(
        series.learned.iter().all(|l| *l),
        "every tick used the model"
    );
}

/// A model double whose behaviour the test chooses.
#[derive(Clone, Copy)]
enum Misbehaviour {
    Fails,
    NanOnJoint(usize),
    Slow(Duration),
}

struct BadModel(Misbehaviour);

impl Script for BadModel {
    fn predict(&mut self, _: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        mean.fill(1.0);
        var.fill(0.01);
        match self.0 {
            Misbehaviour::Fails => Err(ModelError::Other("double: predict fails".into())),
            Misbehaviour::NanOnJoint(j) => {
                mean[j] = f64::NAN;
                Ok(())
            }
            Misbehaviour::Slow(d) => {
                std::thread::sleep(d);
                Ok(())
            }
        }
    }
}

struct Rig {
    robot: Model,
    tick: Tick,
    learner: Learner,
    out: TickOutput,
    q: Vec<f64>,
    zeros: Vec<f64>,
}

impl Rig {
    fn new(behaviour: Option<Misbehaviour>, supervisor: SupervisorParams) -> Self {
        let params = default_params(1.0);
        let robot = app::load_robot(&params).expect("robot");
        let control = ControlParams {
            supervisor,
            ..params.control.clone()
        };
        let tick = Tick::new(&robot, &control, BudgetClock::Wall).expect("tick");
        let (hyper, factory): (Option<serde_json::Value>, ModelFactory) = match behaviour {
            Some(b) => (
                Some(serde_json::json!({})),
                scripted_factory(move || BadModel(b)),
            ),
            None => (None, Box::new(|_, _, _| Err("never created".to_owned()))),
        };
        let learner =
            Learner::new(&robot, LearnParams::default(), hyper, factory).expect("learner");
        let q = params.run.reference.center_rad.clone();
        Self {
            out: TickOutput::new(7),
            tick,
            learner,
            robot,
            q,
            zeros: vec![0.0; 7],
        }
    }

    fn step(&mut self, t: f64) -> TickResult {
        let input = holding_still(t, &self.q, &self.zeros);
        self.tick
            .step(&input, &mut self.learner, &mut self.out)
            .result
    }
}

#[test]
fn supervisor_falls_back_when_the_model_fails() {
    let mut rig = Rig::new(Some(Misbehaviour::Fails), SupervisorParams::default());
    assert_eq!(rig.step(0.0), TickResult::Nominal(Fallback::ModelError));
    assert!(rig.out.mu.iter().all(|m| *m == 0.0), "nominal law: μ = 0");
    assert!(rig.out.u.iter().all(|u| u.is_finite()));
}

#[test]
fn supervisor_drops_only_the_non_finite_joint() {
    let mut rig = Rig::new(
        Some(Misbehaviour::NanOnJoint(3)),
        SupervisorParams::default(),
    );
    assert_eq!(rig.step(0.0), TickResult::Nominal(Fallback::NonFinite));
    assert_eq!(rig.out.mu[3], 0.0);
    assert!(
        rig.out
            .mu
            .iter()
            .enumerate()
            .all(|(j, m)| j == 3 || *m == 1.0),
        "{:?}",
        rig.out.mu
    );
    assert!(rig.out.u.iter().all(|u| u.is_finite()));
}

#[test]
fn supervisor_discards_late_answers_and_quarantines_a_slow_model() {
    let supervisor = SupervisorParams {
        budget_micros: 200.0,
        max_consecutive_faults: 3,
        quarantine_ticks: 4,
    };
    let mut rig = Rig::new(
        Some(Misbehaviour::Slow(Duration::from_millis(2))),
        supervisor,
    );
    for k in 0..3 {
        assert_eq!(
            rig.step(k as f64 * 1e-3),
            TickResult::Nominal(Fallback::Overrun),
            "tick {k}"
        );
        assert!(rig.out.mu.iter().all(|m| *m == 0.0));
    }
    for k in 3..7 {
        assert_eq!(
            rig.step(k as f64 * 1e-3),
            TickResult::Nominal(Fallback::Quarantined),
            "tick {k}"
        );
    }
    assert_eq!(
        rig.step(0.007),
        TickResult::Nominal(Fallback::Overrun),
        "released after the quarantine"
    );
    let counts = rig.tick.supervisor_counts();
    assert_eq!(
        (counts.overruns, counts.quarantines, counts.quarantined),
        (4, 1, 4)
    );
}

#[test]
fn without_a_model_the_nominal_law_runs() {
    let mut rig = Rig::new(None, SupervisorParams::default());
    assert_eq!(rig.step(0.0), TickResult::Nominal(Fallback::NoModel));
    assert!(
        rig.out.eta_cal.iter().all(|e| e.is_nan()),
        "no bound without a model"
    );
}

#[test]
fn bad_input_holds_gravity_compensation_at_the_last_good_pose() {
    let mut rig = Rig::new(Some(Misbehaviour::Fails), SupervisorParams::default());
    rig.step(0.0);
    let mut data = gp_node::robot::Data::new(&rig.robot);
    let g = gp_node::robot::gravity(&rig.robot, &mut data, &rig.q)
        .expect("gravity")
        .to_vec();
    let good_q = rig.q.clone();
    rig.q[2] = f64::NAN;
    assert_eq!(rig.step(0.001), TickResult::BadInput);
    for (j, (u, g)) in rig.out.u.iter().zip(&g).enumerate() {
        assert!((u - g).abs() < 1e-12, "joint {j}");
    }
    let short = [0.0; 6];
    let input = TickInput {
        q: &short,
        ..holding_still(0.002, &good_q, &rig.zeros)
    };
    assert_eq!(
        rig.tick.step(&input, &mut rig.learner, &mut rig.out).result,
        TickResult::BadInput
    );
}

#[test]
fn acceleration_estimator_survives_duplicates_reordering_and_gaps() {
    let mut est = AccelEstimator::new(1, AccelParams::default());
    assert_eq!(est.push(0.000, &[0.0]), AccelUpdate::Started);
    assert_eq!(est.push(0.001, &[0.002]), AccelUpdate::Estimate);
    assert!((est.accel()[0] - 2.0).abs() < 1e-9);
    assert_eq!(
        est.push(0.001, &[9.0]),
        AccelUpdate::StaleStamp,
        "duplicate stamp ignored"
    );
    assert_eq!(
        est.push(0.0005, &[9.0]),
        AccelUpdate::StaleStamp,
        "out-of-order stamp ignored"
    );
    // Irregular stamps: the difference uses the real interval.
    assert_eq!(est.push(0.0035, &[0.007]), AccelUpdate::Estimate);
    assert!((est.accel()[0] - 2.0).abs() < 1e-9, "{}", est.accel()[0]);
    // A dropped stretch longer than max_gap_secs restarts the estimator.
    assert_eq!(est.push(0.5, &[1.0]), AccelUpdate::Gap);
    assert_eq!(est.push(0.501, &[1.001]), AccelUpdate::Estimate);
    assert!((est.accel()[0] - 1.0).abs() < 1e-9);
}

/// The learned law on the default scenario (short run): the model is fitted, adopted and
/// improves tracking on every joint. The full 30 s acceptance numbers come from `gp-node sim`.
#[test]
fn learning_improves_tracking_on_a_short_default_run() {
    let mut params = default_params(8.0);
    params.learn.refit_after_samples = 2000;
    let robot = app::load_robot(&params).expect("robot");
    let nominal = simulate::run(&robot, &params, false, None, &mut |_| {}).expect("nominal");
    let learned = simulate::run(&robot, &params, true, None, &mut |_| {}).expect("learned");
    let report = simulate::SimReport::new(
        "skygp",
        "default",
        8.0,
        robot.joint_names(),
        &nominal,
        &learned,
    );
    assert!(
        learned.model_adopted_at_secs.is_some_and(|t| t < 1.5),
        "{:?}",
        learned.model_adopted_at_secs
    );
    for (j, ratio) in report.improvement().iter().enumerate() {
        assert!(*ratio > 3.0, "joint {j}: nominal/learned = {ratio}");
    }
}
