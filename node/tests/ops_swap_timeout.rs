//! Issue 16: a swap that timed out (no joint states) was reported failed and adopted later
//! anyway, leaving parameters and label stale and a saved model file that could not be
//! loaded. Now a model change has exactly one end: the timed-out one is cancelled, never
//! adopted, and the worker keeps the plugin in use. Driven through `Ops` and a control
//! thread of the test's own (no DDS): the control thread answers commands every millisecond
//! and ticks joint states only while the test lets it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gp_node::app;
use gp_node::app::model_factory;
use gp_node::control::{BudgetClock, Tick};
use gp_node::control_loop::{
    CommandDecision, ControlCommand, ControlLoop, ControlReply, LoopOutput, StateFrame, Timing,
    TorqueOrigin, Watchdog, WatchdogAction,
};
use gp_node::learn::Learner;
use gp_node::plugin_host::SearchPath;
use gp_node::ros::TopicReference;
use gp_node::ros::ops::{Ops, SharedStatus};

const HOME: [f64; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];

fn hyper() -> serde_json::Value {
    // [q, q̇, q̈, friction features] of 7 joints.
    let lengthscales = [vec![0.5; 7], vec![2.0; 7], vec![20.0; 7], vec![1.0; 7]].concat();
    serde_json::json!({"sigma_f": 2.0, "sigma_n": 0.1, "lengthscales": lengthscales})
}

/// The control side: ticks states while `ticking`, answers commands always.
struct ControlThread {
    ticking: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    ticks: Arc<AtomicU64>,
    adoptions: Arc<AtomicU64>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl ControlThread {
    fn ticks(&self) -> u64 {
        self.ticks.load(Ordering::SeqCst)
    }

    /// Lets the loop tick `n` more states and waits for them.
    fn tick(&self, n: u64) {
        let target = self.ticks() + n;
        self.ticking.store(true, Ordering::SeqCst);
        while self.ticks() < target {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.ticking.store(false, Ordering::SeqCst);
    }
}

impl Drop for ControlThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The operations, the control thread, the model label and the refusal counts.
fn rig() -> (
    Ops,
    ControlThread,
    Arc<Mutex<String>>,
    Arc<gp_node::ros::op_refusals::OpRefusals>,
) {
    let mut params = gp_node::app::resolved_default_params().expect("parameters");
    params.control.supervisor.budget_micros = 1e9;
    params.learn.replay_capacity = 1000;
    params.model.config["hyper"] = hyper();
    let robot = app::load_robot(&params).expect("robot");
    let nv = robot.nv();
    let factory = model_factory(
        &SearchPath::standard(Vec::<&str>::new()),
        &params.model.plugin,
        &params.model.config,
    );
    let learner =
        Learner::new(&robot, params.learn.clone(), Some(hyper()), factory).expect("learner");
    let tick = Tick::new(&robot, &params.control, BudgetClock::Wall).expect("tick");
    let decision = CommandDecision::new(&robot, &params.control)
        .expect("decision")
        .with_watchdog(
            Watchdog::new(Duration::from_secs(3600), Instant::now()),
            WatchdogAction::HoldGravity,
        );
    let mut control = ControlLoop::new(tick, learner, TopicReference::new(nv), decision, true);
    let (command_tx, command_rx) = sync_channel::<ControlCommand>(8);
    let (reply_tx, reply_rx) = sync_channel::<ControlReply>(32);
    let ticking = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let ticks = Arc::new(AtomicU64::new(0));
    let adoptions = Arc::new(AtomicU64::new(0));
    let handle = {
        let (ticking, stop, ticks, adoptions) = (
            ticking.clone(),
            stop.clone(),
            ticks.clone(),
            adoptions.clone(),
        );
        std::thread::spawn(move || {
            let mut frame = StateFrame::new(nv);
            frame.q.copy_from_slice(&HOME);
            frame.tau_origin = TorqueOrigin::OwnCommand;
            frame.timing = Timing::New;
            let mut out = LoopOutput::new(nv);
            let mut k = 0u64;
            while !stop.load(Ordering::SeqCst) {
                while let Ok(command) = command_rx.try_recv() {
                    if let Some(reply) = control.command(command) {
                        let _ = reply_tx.try_send(reply);
                    }
                }
                if ticking.load(Ordering::SeqCst) {
                    for _ in 0..50 {
                        k += 1;
                        frame.t_secs = k as f64 * 1e-3;
                        frame.stamp_secs = frame.t_secs;
                        control.on_state(&frame, Instant::now(), &mut out);
                        // Counted before the answers go out, so the test sees them in order.
                        adoptions.store(control.counters().adoptions, Ordering::SeqCst);
                        for event in control.take_events() {
                            let _ = reply_tx.try_send(ControlReply::Event(event));
                        }
                    }
                    ticks.store(k, Ordering::SeqCst);
                } else {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        })
    };
    let label = Arc::new(Mutex::new(params.model.plugin.clone()));
    let shared = SharedStatus {
        model_label: label.clone(),
        residual_every: Arc::new(std::sync::atomic::AtomicU32::new(1)),
        refusals: Arc::default(),
    };
    let refusals = shared.refusals.clone();
    let ops = Ops::new(
        params,
        robot,
        SearchPath::standard(Vec::<String>::new()),
        command_tx,
        reply_rx,
        shared,
    );
    let control = ControlThread {
        ticking,
        stop,
        ticks,
        adoptions,
        handle: Some(handle),
    };
    (ops, control, label, refusals)
}

#[test]
fn a_timed_out_swap_is_cancelled_and_never_adopted_later() {
    let (mut ops, control, label, refusals) = rig();
    control.tick(1500); // fills the replay buffer
    let adopted_before = control.adoptions.load(Ordering::SeqCst);
    let config_before = ops.params().model.config.clone();

    // No joint states: the swap cannot be built (the replay copy advances per tick).
    ops.set_answer_timeout(Duration::from_millis(300));
    let err = ops
        .swap_model("skygp", r#"{"variant": "fast"}"#)
        .expect_err("no states: times out");
    assert!(err.contains("cancelled"), "{err}");
    assert_eq!(ops.params().model.config, config_before);
    assert_eq!(
        refusals.snapshot(),
        [("swap refused: no_answer".to_owned(), 1)],
        "the timeout is counted for /diagnostics"
    );

    // States again: the cancelled change must never be adopted.
    control.tick(3000);
    assert_eq!(
        control.adoptions.load(Ordering::SeqCst),
        adopted_before,
        "a cancelled swap was adopted"
    );
    assert_eq!(*label.lock().expect("label"), "skygp");

    // The next change is not blocked by the cancelled one, and is adopted.
    ops.set_answer_timeout(Duration::from_secs(120));
    let ticker = {
        let ticking = control.ticking.clone();
        ticking.store(true, Ordering::SeqCst);
        ticking
    };
    let message = ops
        .swap_model("skygp", r#"{"variant": "fast"}"#)
        .expect("a swap with states");
    ticker.store(false, Ordering::SeqCst);
    assert!(message.contains("adopted"), "{message}");
    assert_eq!(ops.params().model.config["variant"], "fast");
    assert!(control.adoptions.load(Ordering::SeqCst) > adopted_before);
}
