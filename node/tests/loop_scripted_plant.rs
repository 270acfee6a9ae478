//! Issue 17: the one control loop driven by a scripted test plant — no simulator, no DDS.
//! The script has new states, a repeated stamp, a burst, silence past the watchdog timeout,
//! the recovery and the end; the test checks every command the plant got (how many, which
//! value, which state each answers), every output the listener got, and the operations'
//! round trip. The expected commands come from an independent `Tick` stepped on the same
//! inputs and from the robot's gravity (RNEA) for the safe output.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use gp_node::app::{self, NodeParams};
use gp_node::control::{BudgetClock, Tick, TickInput, TickOutput};
use gp_node::control_loop::{
    Clock, Command, CommandDecision, ControlCommand, ControlLoop, ControlReply, Desired,
    LoopOutput, LoopView, Operations, OutKind, OutputListener, Plant, Read, ReferenceSource,
    StateFrame, Timing, TorqueOrigin, Watchdog, WatchdogAction,
};
use gp_node::learn::{Learner, ModelFactory, SwapEvent};
use gp_node::robot::{Data, Model, gravity};

const HOME: [f64; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];
const TIMEOUT: Duration = Duration::from_millis(100);

/// One step of the script.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A state at time t (s) received at wall offset `at` (s), `more` newer ones queued.
    State { t: f64, at: f64, more: bool },
    /// The last state's stamp again, received at `at`.
    Repeat { at: f64 },
    /// Nothing until wall offset `at`.
    Silent { at: f64 },
}

/// A state the plant handed out: (t, q, v, tau).
type Sent = (f64, Vec<f64>, Vec<f64>, Vec<f64>);

/// The scripted plant: states along a slow motion from HOME; records what it is commanded.
struct ScriptedPlant {
    script: Vec<Step>,
    next: usize,
    t0: Instant,
    now: Rc<Cell<Instant>>,
    observe_only: bool,
    /// (u, the receipt instant of the state it answers).
    written: Vec<(Vec<f64>, Option<Instant>)>,
    /// The states handed out (t, q, v, tau).
    states: Vec<Sent>,
}

fn pose(t: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let q = (0..7)
        .map(|j| HOME[j] + 0.1 * (t + j as f64).sin())
        .collect();
    let v = (0..7).map(|j| 0.1 * (t + j as f64).cos()).collect();
    let tau = (0..7).map(|j| 0.5 * j as f64 - 1.0).collect();
    (q, v, tau)
}

impl Plant for ScriptedPlant {
    type Error = String;

    fn nv(&self) -> usize {
        7
    }

    fn accepts_commands(&self) -> bool {
        !self.observe_only
    }

    fn read(&mut self, frame: &mut StateFrame, _deadline: Duration) -> Result<Read, String> {
        let Some(step) = self.script.get(self.next).copied() else {
            return Ok(Read::Closed);
        };
        self.next += 1;
        let at = |secs: f64| self.t0 + Duration::from_secs_f64(secs);
        match step {
            Step::State { t, at: wall, more } => {
                let (q, v, tau) = pose(t);
                let received = at(wall);
                self.now.set(received);
                frame.t_secs = t;
                frame.stamp_secs = t + 100.0;
                frame.timing = Timing::New;
                frame.received = received;
                frame.q.copy_from_slice(&q);
                frame.v.copy_from_slice(&v);
                frame.tau.copy_from_slice(&tau);
                frame.tau_origin = TorqueOrigin::Given;
                self.states.push((t, q, v, tau));
                Ok(Read::State { more_queued: more })
            }
            Step::Repeat { at: wall } => {
                self.now.set(at(wall));
                frame.timing = Timing::Repeat;
                frame.received = at(wall);
                Ok(Read::State { more_queued: false })
            }
            Step::Silent { at: wall } => {
                self.now.set(at(wall));
                Ok(Read::Silent)
            }
        }
    }

    fn write(&mut self, command: Command<'_>) -> Result<(), String> {
        if self.observe_only {
            return Err("an observe-only plant was commanded".into());
        }
        self.written.push((command.u.to_vec(), command.answers));
        Ok(())
    }
}

/// The plant of [`script`] and the clock it sets.
fn scripted_plant(observe_only: bool) -> (ScriptedPlant, Rc<Cell<Instant>>) {
    let t0 = Instant::now();
    let now = Rc::new(Cell::new(t0));
    let plant = ScriptedPlant {
        script: script(),
        next: 0,
        t0,
        now: now.clone(),
        observe_only,
        written: Vec::new(),
        states: Vec::new(),
    };
    (plant, now)
}

/// The script's wall clock.
struct ScriptClock(Rc<Cell<Instant>>);

impl Clock for ScriptClock {
    fn budget(&self) -> BudgetClock {
        BudgetClock::Simulated
    }
    fn waits_for_model(&self) -> bool {
        false
    }
    fn now(&self) -> Instant {
        self.0.get()
    }
}

/// A fixed pose as the reference.
struct FixedReference;

impl ReferenceSource for FixedReference {
    fn sample(&mut self, _: &StateFrame, _: &[f64], desired: Desired<'_>) {
        desired.q.copy_from_slice(&HOME);
        desired.qd.fill(0.0);
        desired.qdd.fill(0.0);
    }
}

/// Asks for a reset before the third tick; keeps the replies and the views it saw.
#[derive(Default)]
struct ResetAtThree {
    asked: bool,
    views: Vec<u64>,
    replies: Vec<String>,
}

impl Operations for ResetAtThree {
    fn next_command(&mut self, view: &LoopView) -> Option<ControlCommand> {
        self.views.push(view.ticks);
        if view.ticks == 2 && !self.asked {
            self.asked = true;
            return Some(ControlCommand::Reset {
                keep_hyperparameters: true,
                id: 42,
            });
        }
        None
    }
    fn on_applied(&mut self, reply: Option<ControlReply>) {
        self.replies.push(match reply {
            Some(ControlReply::Reset { id, result }) => format!("reset {id} {}", result.is_ok()),
            Some(_) => "other".into(),
            None => "none".into(),
        });
    }
    fn on_event(&mut self, _: u64, _: SwapEvent) {}
}

#[derive(Default)]
struct Outputs(Vec<LoopOutput>);

impl OutputListener for Outputs {
    fn on_output(&mut self, out: &LoopOutput) {
        self.0.push(out.clone());
    }
}

/// The nominal law runs: no model is ever built.
fn no_model() -> ModelFactory {
    Box::new(|_, _, _| Err("no model in this test".to_owned()))
}

fn setup() -> (Model, NodeParams) {
    let mut p = gp_node::app::resolved_default_params().expect("parameters");
    p.control.use_model = false;
    // The routing rules, compared with an independent tick: no blend or rate limit between
    // them (`command_decision.rs` tests those).
    p.control.handover_s = 0.0;
    p.control.torque_rate_limits_nm_per_s = gp_node::robot::JointValues::All(1e12);
    let robot = app::load_robot(&p).expect("robot");
    (robot, p)
}

fn make_loop(robot: &Model, p: &NodeParams, t0: Instant) -> ControlLoop<FixedReference> {
    let tick = Tick::new(robot, &p.control, BudgetClock::Simulated).expect("tick");
    let learner = Learner::new(robot, p.learn.clone(), None, no_model()).expect("learner");
    let decision = CommandDecision::new(robot, &p.control)
        .expect("decision")
        .with_watchdog(Watchdog::new(TIMEOUT, t0), WatchdogAction::HoldGravity);
    ControlLoop::new(tick, learner, FixedReference, decision, true)
}

fn script() -> Vec<Step> {
    vec![
        Step::State {
            t: 0.000,
            at: 0.000,
            more: false,
        },
        Step::State {
            t: 0.001,
            at: 0.001,
            more: false,
        },
        Step::Repeat { at: 0.0015 },
        // A burst: three states queued at once; only the last one's command is written.
        Step::State {
            t: 0.002,
            at: 0.010,
            more: true,
        },
        Step::State {
            t: 0.003,
            at: 0.010,
            more: true,
        },
        Step::State {
            t: 0.004,
            at: 0.010,
            more: false,
        },
        Step::Silent { at: 0.050 },
        Step::Silent { at: 0.111 },
        Step::Silent { at: 0.150 },
        Step::Silent { at: 0.212 },
        Step::State {
            t: 0.300,
            at: 0.300,
            more: false,
        },
    ]
}

/// The commands an independent tick computes for the plant's states, in order.
fn expected_commands(robot: &Model, p: &NodeParams, states: &[Sent]) -> Vec<Vec<f64>> {
    let mut tick = Tick::new(robot, &p.control, BudgetClock::Simulated).expect("tick");
    let mut learner = Learner::new(robot, p.learn.clone(), None, no_model()).expect("learner");
    let mut out = TickOutput::new(7);
    let zeros = [0.0; 7];
    states
        .iter()
        .map(|(t, q, v, tau)| {
            let input = TickInput {
                t_secs: *t,
                q,
                v,
                tau,
                q_d: &HOME,
                qd_d: &zeros,
                qdd_d: &zeros,
            };
            tick.step(&input, &mut learner, &mut out);
            out.u.clone()
        })
        .collect()
}

#[test]
fn a_scripted_plant_gets_the_commands_the_decision_rules_say_and_listeners_every_output() {
    let (robot, p) = setup();
    let (mut plant, now) = scripted_plant(false);
    let t0 = plant.t0;
    let mut control = make_loop(&robot, &p, t0);
    let mut ops = ResetAtThree::default();
    let mut outputs = Outputs::default();
    control
        .run(
            &mut plant,
            &mut ScriptClock(now),
            &mut ops,
            &mut [&mut outputs],
            &AtomicBool::new(false),
        )
        .expect("the script runs to its end");

    let at = |secs: f64| Some(t0 + Duration::from_secs_f64(secs));
    let ticked = expected_commands(&robot, &p, &plant.states);
    assert_eq!(ticked.len(), 6, "six new states");
    let q_last = &plant.states[4].1;
    let mut data = Data::new(&robot);
    let hold: Vec<f64> = gravity(&robot, &mut data, q_last)
        .expect("gravity")
        .iter()
        .zip(robot.limits())
        .map(|(g, l)| g.clamp(-l.effort, l.effort))
        .collect();

    // What the plant was commanded: tick 0, tick 1, tick 1 again (the repeat), the burst's
    // newest (tick 4), the safe output at the two trips, then tick 5.
    let expected: Vec<(&Vec<f64>, Option<Instant>)> = vec![
        (&ticked[0], at(0.0)),
        (&ticked[1], at(0.001)),
        (&ticked[1], at(0.0015)),
        (&ticked[4], at(0.010)),
        (&hold, None),
        (&hold, None),
        (&ticked[5], at(0.300)),
    ];
    assert_eq!(plant.written.len(), expected.len(), "{:?}", plant.written);
    for (i, ((u, answers), (want, want_answers))) in plant.written.iter().zip(&expected).enumerate()
    {
        assert_eq!(answers, want_answers, "command {i} answers the wrong state");
        for j in 0..7 {
            assert!(
                (u[j] - want[j]).abs() <= 1e-9 * (1.0 + want[j].abs()),
                "command {i} joint {j}: {} vs {}",
                u[j],
                want[j]
            );
        }
    }

    // What the listener got: one output per state, repeat and trip, in order.
    let kinds: Vec<(OutKind, u64, bool)> = outputs
        .0
        .iter()
        .map(|o| (o.kind, o.tick, o.superseded))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (OutKind::Tick, 0, false),
            (OutKind::Tick, 1, false),
            (OutKind::Republish, 2, false),
            (OutKind::Tick, 2, true),
            (OutKind::Tick, 3, true),
            (OutKind::Tick, 4, false),
            (OutKind::Safe, 5, false),
            (OutKind::Safe, 5, false),
            (OutKind::Tick, 5, false),
        ]
    );
    for (o, u) in outputs
        .0
        .iter()
        .filter(|o| o.kind == OutKind::Tick)
        .zip(&ticked)
    {
        assert_eq!(&o.u, u, "the output carries the tick's command");
        assert_eq!(o.q_d, HOME.to_vec(), "and the reference");
        assert!(o.status.is_some());
        assert!(!o.has_truth, "a real plant knows no truth");
    }
    let last = outputs.0.last().expect("outputs");
    assert_eq!(last.counters.ticks, 6);
    assert_eq!(last.counters.repeated, 1);
    assert_eq!(last.counters.watchdog_trips, 2);
    assert_eq!(last.counters.watchdog_episodes, 1);
    assert!(
        !last.counters.stale,
        "the state after the silence cleared it"
    );
    let safe = &outputs.0[6];
    assert!(
        (safe.t_secs - 0.004).abs() < 1e-12,
        "the safe output is of the last good state"
    );
    assert!((safe.stamp_secs - 100.004).abs() < 1e-9);

    // The operations were asked before every read and got the reset's answer.
    assert_eq!(ops.replies, vec!["reset 42 true".to_owned()]);
    assert_eq!(
        ops.views.len(),
        plant.script.len() + 1 + 1,
        "once per read, the close included, plus the reset's turn"
    );
}

#[test]
fn an_observe_only_plant_is_never_commanded_and_its_estimate_still_flows() {
    let (robot, p) = setup();
    let (mut plant, now) = scripted_plant(true);
    let t0 = plant.t0;
    let mut control = make_loop(&robot, &p, t0);
    let mut outputs = Outputs::default();
    control
        .run(
            &mut plant,
            &mut ScriptClock(now),
            &mut gp_node::control_loop::NoOperations,
            &mut [&mut outputs],
            &AtomicBool::new(false),
        )
        .expect("never commanded");
    assert!(plant.written.is_empty());
    let ticks = outputs.0.iter().filter(|o| o.kind == OutKind::Tick).count();
    assert_eq!(ticks, 6, "every state is still ticked and reported");
}
