//! The supervisor's work clock (`control::BudgetClock`) with the slow plugin double in the
//! tick (`testing/doubles/slow`, a real cdylib loaded through the plugin host): on the wall
//! clock its late answers are discarded and it is quarantined; on the simulated clock (the
//! simulated robot waits for the model) the same slow model never overruns, and the tick
//! still measures and reports its wall time.

mod loop_support;
mod model_support;

use gp_node::app;

use gp_node::control::{BudgetClock, ControlParams, Fallback, SupervisorParams, Tick};
use gp_node::control::{TickOutput, TickResult, TickStatus};
use gp_node::learn::{LearnParams, Learner, ModelFactory};
use gp_node::plugin_host::Plugin;
use gp_node::robot::Model;
use gpn_gp_core::model::OnlineModel;
use loop_support::holding_still;
use model_support::double;

/// Each `predict` of the double sleeps this long: 10× the budget below.
const PREDICT_SLEEP_MS: u64 = 2;
const BUDGET_MICROS: f64 = 200.0;

struct Rig {
    tick: Tick,
    learner: Learner,
    out: TickOutput,
    q: Vec<f64>,
    zeros: Vec<f64>,
    // Dropped last: the library outlives the models made from it (they also hold it).
    _plugin: Plugin,
}

impl Rig {
    fn new(clock: BudgetClock, test: &str) -> Self {
        let params = gp_node::app::resolved_default_params().expect("parameters");
        let robot: Model = app::load_robot(&params).expect("robot");
        let nv = robot.nv();
        let control = ControlParams {
            supervisor: SupervisorParams {
                budget_micros: BUDGET_MICROS,
                max_consecutive_faults: 3,
                quarantine_ticks: 4,
            },
            ..params.control.clone()
        };
        let tick = Tick::new(&robot, &control, clock).expect("tick");
        let plugin = Plugin::open(double("gpn_double_slow", test)).expect("open the slow double");
        let for_factory = plugin.clone();
        let config = serde_json::json!({ "predict_sleep_ms": PREDICT_SLEEP_MS });
        let factory: ModelFactory = Box::new(move |_, d, p| {
            for_factory
                .create_json(&config, d, p)
                .map(|m| Box::new(m) as Box<dyn OnlineModel>)
                .map_err(|e| e.to_string())
        });
        // Given hyperparameters: the model is created now, no fit.
        let learner = Learner::new(
            &robot,
            LearnParams::default(),
            Some(serde_json::json!({})),
            factory,
        )
        .expect("learner");
        Self {
            tick,
            learner,
            out: TickOutput::new(nv),
            q: params.run.reference.center_rad.clone(),
            zeros: vec![0.0; nv],
            _plugin: plugin,
        }
    }

    fn step(&mut self, k: usize) -> TickStatus {
        let input = holding_still(k as f64 * 1e-3, &self.q, &self.zeros);
        self.tick.step(&input, &mut self.learner, &mut self.out)
    }
}

#[test]
fn wall_clock_discards_the_slow_models_answers_and_quarantines_it() {
    let mut rig = Rig::new(BudgetClock::Wall, "budget_wall");
    for k in 0..3 {
        let status = rig.step(k);
        assert_eq!(
            status.result,
            TickResult::Nominal(Fallback::Overrun),
            "tick {k}"
        );
        assert!(status.model_micros >= 1e3 * PREDICT_SLEEP_MS as f64);
    }
    assert_eq!(
        rig.step(3).result,
        TickResult::Nominal(Fallback::Quarantined)
    );
    let counts = rig.tick.supervisor_counts();
    assert_eq!((counts.overruns, counts.quarantines), (3, 1));
}

#[test]
fn simulated_clock_never_overruns_however_slow_the_model_and_still_measures_it() {
    let mut rig = Rig::new(BudgetClock::Simulated, "budget_simulated");
    assert_eq!(rig.tick.budget_clock(), BudgetClock::Simulated);
    for k in 0..20 {
        let status = rig.step(k);
        assert_eq!(status.result, TickResult::Learned, "tick {k}");
        // The wall time is still measured (the report's tick latency comes from it).
        assert!(
            status.model_micros >= 1e3 * PREDICT_SLEEP_MS as f64,
            "tick {k}: {} µs",
            status.model_micros
        );
        assert!(status.exec_micros >= status.model_micros);
        assert!(status.model_micros > BUDGET_MICROS, "tick {k}");
    }
    let counts = rig.tick.supervisor_counts();
    assert_eq!(
        (counts.overruns, counts.quarantines, counts.model_ticks),
        (0, 0, 20)
    );
}
