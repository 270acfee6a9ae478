//! One closed-loop run on the embedded simulator: the [`ControlLoop`] over the simulated
//! plant ([`SimPlant`]: the true robot and its sensors), the task's reference with probing
//! pauses, the swap schedule as operations, and listeners for the report, the recording,
//! rerun and progress.
//!
//! Per tick k: measure the true state (the torque that acted since tick k−1 included) →
//! reference at t_k → `Tick::step` → record → integrate the true robot over one period with
//! the command held. Simulated time stands still while the learner's background fit runs
//! (the run is not paced to the wall clock), so the model is adopted at the tick after the
//! fit's data were complete; the fit's wall time is reported. Likewise the simulated robot
//! waits for the model within a tick: the supervisor judges the model's work on simulated
//! time ([`BudgetClock::Simulated`], 0 µs), never on the wall clock, so no overrun depends
//! on the machine's load and the same seed gives a bit-identical run; the tick's wall time
//! is still measured for the report's latency. With `run.realtime` the run is paced to the
//! wall clock as on a robot: the fit then takes real time and the budget is judged on the
//! wall clock ([`BudgetClock::Wall`]). The tracking error is the *true* q − q_d; the
//! coverage compares the *true* residual at x* = [q, q̇, q̈_cmd] with μ(x*).

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use gpn_app::{
    ModelHost, NodeParams, SwapTarget, check_model_configs, hosted_model_factory, plugin_search,
};
use gpn_control::control::{BudgetClock, Tick, TickResult, TickStatus};
use gpn_control::control_loop::{
    Clock, CommandDecision, ControlLoop, LoopOutput, OutKind, OutputListener, PacedClock,
    SimulatedClock, Verdict,
};
use gpn_control::learn::{Learner, ModelFactory};
use gpn_dynamics::Model;
use gpn_embedded_sim::Simulator;
use gpn_viz::{Viz, VizListener, VizRun};

use super::RunRecord;
use super::SimulateError;
use super::bag_record::{BagListener, RecordingPlant};
use super::plant::SimPlant;
use super::probing::ProbingReference;
use super::record::Recorder;
use super::stats::{RunStats, TickValues};
use super::swaps::{SimOperations, SwapSchedule};

/// What a run measured: its summaries, streamed in fixed memory ([`RunStats`]), the
/// model's and the command decision's counters, and — on request only, since they grow
/// with the run — the per-tick series ([`TickSeries`]).
#[derive(Debug, Clone, Default)]
pub struct RunLog {
    /// Joints.
    pub nv: usize,
    /// Tick period, s.
    pub dt_secs: f64,
    /// Ticks run.
    pub ticks: usize,
    /// The run's summaries (tracking, residual, coverage, latency, step, adoptions).
    pub stats: RunStats,
    /// The per-tick series, when the run was asked to keep them.
    pub series: Option<TickSeries>,
    /// Theorem-2 tracking bound at the end of the run.
    pub final_tracking_bound: f64,
    /// When the model was adopted, s (None: never).
    pub model_adopted_at_secs: Option<f64>,
    /// Wall time of the run, s.
    pub wall_secs: f64,
    /// Experts (or components) at the end, if a model ran.
    pub experts: Option<u64>,
    /// β_cal per joint at the end.
    pub beta_cal: Vec<Option<f64>>,
    /// Fit + warm-up time, s.
    pub fit_secs: f64,
    /// Refits that took over, and refits the held-out check kept out.
    pub refits: [u64; 2],
    /// Samples the model learned.
    pub learned_samples: u64,
    /// Samples the gate refused.
    pub gated_samples: u64,
    /// Supervisor: ticks over budget.
    pub overruns: u64,
    /// Ticks whose execution took longer than the tick period.
    pub late_ticks: u64,
    /// The first late ticks (up to 64), each with what took the time.
    pub late: Vec<LateTick>,
    /// With `run.realtime`: the loop thread's scheduling and memory locking, and what was
    /// refused.
    pub realtime: Option<gpn_app::RealtimeSetup>,
    /// Hyperparameters the model used (its config's `"hyper"`), if any.
    pub hyper: Option<serde_json::Value>,
    /// Hot swaps (`run.swap_every_s`), one record per planned swap.
    pub swaps: Vec<super::swaps::SwapRecord>,
    /// Ticks on which a due swap found the learner busy (it is offered again next tick).
    pub swap_busy_ticks: u64,
    /// Changes of the dynamics the learner noticed.
    pub changes: Vec<gpn_control::learn::ChangeNotice>,
    /// Probing trajectories planned after changes (`learn.probe`).
    pub probes: Vec<super::probing::ProbeRecord>,
    /// The payload mass change the last re-identification found, kg (NaN without one).
    pub reidentified_mass_kg: f64,
    /// The command decision's counters at the end.
    pub decision: gpn_control::control_loop::DecisionCounts,
    /// Fallbacks of the learned law and re-adoptions, in order: (time s, what).
    pub law_events: Vec<(f64, LawEvent)>,
    /// Largest true |q̇| over the run as a fraction of the joint's URDF velocity limit.
    pub max_speed_fraction: f64,
    /// Largest true excursion beyond a joint's URDF position limits, rad (0: none).
    pub position_limit_excess_rad: f64,
    /// Per joint, ticks at or beyond a limit of the true robot: position, velocity, and the
    /// command at the effort limit (saturated).
    pub limit_ticks: Vec<JointLimitTicks>,
}

/// A run's per-tick series (joint-major where per joint: `[tick * nv + j]`): 16 bytes per
/// tick and joint and 9 per tick, for tests and short runs.
#[derive(Debug, Clone, Default)]
pub struct TickSeries {
    /// Time of each tick, s.
    pub t_secs: Vec<f64>,
    /// True tracking error q − q_d, rad.
    pub error_rad: Vec<f64>,
    /// The command sent, N·m.
    pub command_nm: Vec<f64>,
    /// Whether the learned law ran at the tick.
    pub learned: Vec<bool>,
}

/// A tick that took longer than the tick period, and where the time went.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LateTick {
    /// Time of the tick, s.
    pub t_s: f64,
    /// Its execution time, µs.
    pub exec_us: f64,
    /// Of which the model's predict and update, µs.
    pub model_us: f64,
    /// Why: "model adoption" (the tick adopted a new model), "model call" (predict and
    /// update took most of it) or "outside the model" (the law, the scheduler, page faults).
    pub cause: &'static str,
    /// CPU time the control thread used from the previous tick's end to this one's, µs
    /// (the tick's own and a few µs of bookkeeping; NaN where the OS does not tell). Near
    /// `exec_us`: the tick computed all along; well below it: the thread did not run for the
    /// rest (see the switches).
    pub cpu_us: f64,
    /// Times the thread gave up the CPU in that interval beyond the one wait for the tick
    /// (a lock, a fault waiting for I/O; -1 where the OS does not tell).
    pub blocked: i64,
    /// Times another thread took the CPU from it in that interval (-1 where unknown). With
    /// `blocked` 0 and little CPU, nothing in the system ran instead: the machine paused it
    /// (a virtual machine's CPU taken by its host).
    pub preempted: i64,
}

impl LateTick {
    fn new(t_s: f64, status: &TickStatus, usage: Option<(f64, i64, i64)>) -> Self {
        let (cpu_us, blocked, preempted) = usage.unwrap_or((f64::NAN, -1, -1));
        let cause = if status.adopted_model {
            "model adoption"
        } else if status.model_micros > 0.5 * status.exec_micros {
            "model call"
        } else {
            "outside the model"
        };
        Self {
            t_s,
            exec_us: status.exec_micros,
            model_us: status.model_micros,
            cause,
            cpu_us,
            blocked,
            preempted,
        }
    }
}

/// Most samples η_cal calibrates on per joint: 20 s at 1 kHz (160 KB per joint, and a freeze
/// — an O(n) selection per joint on the control thread, 0.23 ms for 7 joints here — within
/// a tick). Runs up to 40 s (the default 30 s) calibrate on their whole first half.
const CALIBRATION_SAMPLES_MAX: usize = 20_000;

/// Late ticks kept with their cause.
const LATE_TICKS_KEPT: usize = 64;

/// Whether a run keeps its per-tick series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    /// Summaries only: memory fixed before the run, whatever its duration.
    Summaries,
    /// Also every tick's tracking error, command and law ([`TickSeries`]).
    Kept,
}

/// Ticks a joint spent at or beyond its URDF limits (true state) or with its command at
/// the effort limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct JointLimitTicks {
    /// True position outside [lower, upper].
    pub position: u64,
    /// True |q̇| above the velocity limit.
    pub velocity: u64,
    /// |command| at the effort limit (× control.effort_limit_fraction).
    pub saturated: u64,
}

/// A change of the commanding law the monitor decided.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LawEvent {
    /// The learned law fell back to the nominal one.
    Fallback {
        /// Why.
        reason: gpn_control::control_loop::FallbackReason,
        /// The joint (index) that showed it, if one did.
        joint: Option<usize>,
    },
    /// The model passed its probation and commands again.
    Readopted,
}

/// Runs `params` for `params.run.duration_s`; `learning` false runs the nominal law. Keeps
/// the per-tick series ([`Series::Kept`]: memory grows with the run; tests and short runs).
/// `progress` is called about every 1 % with the fraction done.
pub fn run(
    robot: &Model,
    params: &NodeParams,
    learning: bool,
    recorder: Option<&mut RunRecord>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunLog, SimulateError> {
    run_with_viz(
        robot,
        params,
        learning,
        Series::Kept,
        recorder,
        None,
        progress,
    )
}

/// As [`run`], keeping the per-tick series or not, and handing every tick to `viz` (rerun
/// logging; it never blocks the loop). `gp-node sim` keeps summaries only.
pub fn run_with_viz(
    robot: &Model,
    params: &NodeParams,
    learning: bool,
    series: Series,
    recorder: Option<&mut RunRecord>,
    viz: Option<&mut Viz>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunLog, SimulateError> {
    check_model_configs(params).map_err(SimulateError::Param)?;
    let factory = hosted_model_factory(
        &sim_model_host(params)?,
        &plugin_search(params),
        &params.model.plugin,
        &params.model.config,
    );
    let outputs = Outputs {
        series,
        recorder,
        viz,
    };
    run_inner(robot, params, learning, factory, outputs, progress)
}

/// As [`run`], with the model created by `factory` instead of the configured plugin (tests
/// use it to put doubles in the loop).
pub fn run_with_factory(
    robot: &Model,
    params: &NodeParams,
    learning: bool,
    factory: ModelFactory,
    recorder: Option<&mut RunRecord>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunLog, SimulateError> {
    let outputs = Outputs {
        series: Series::Kept,
        recorder,
        viz: None,
    };
    run_inner(robot, params, learning, factory, outputs, progress)
}

/// Where a run's ticks go besides its summaries.
struct Outputs<'a> {
    series: Series,
    recorder: Option<&'a mut RunRecord>,
    viz: Option<&'a mut Viz>,
}

fn run_inner(
    robot: &Model,
    params: &NodeParams,
    learning: bool,
    factory: ModelFactory,
    outputs: Outputs<'_>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunLog, SimulateError> {
    let Outputs {
        series,
        recorder,
        viz,
    } = outputs;
    // Keys left empty get the robot's derived values (a no-op on resolved parameters).
    let mut resolved = params.clone();
    gpn_app::derive_defaults(robot, &mut resolved)
        .map_err(|e| SimulateError::Param(e.to_string()))?;
    let params = &resolved;
    let nv = robot.nv();
    let reference = &params.run.reference;
    reference.check(nv).map_err(SimulateError::Param)?;
    let dt = params.sim.dt_secs();
    let ticks = (params.run.duration_s / dt).round() as usize;
    let (mut q0, mut v0, mut a0) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
    reference.sample(0.0, &mut q0, &mut v0, &mut a0);
    let conventions = (
        params.control.command_convention,
        params.control.effort_convention,
    );
    let plant = SimPlant::new(robot, &params.sim, conventions, &q0, &v0, ticks)?;
    let mut clock: Box<dyn Clock> = if params.run.realtime {
        Box::new(PacedClock::new(Duration::from_secs_f64(dt)))
    } else {
        Box::new(SimulatedClock)
    };
    let (mut control_loop, mut ops) =
        assemble_loop(robot, params, learning, factory, ticks, clock.budget())?;

    let planned_swaps = ops.schedule().map_or(0, |s| s.planned());
    let step_s = params.sim.payload.step.as_ref().map(|step| step.at_secs);
    let mut log = RunLogger::new(
        robot.limits(),
        params.control.effort_limit_fraction,
        (dt, ticks),
        RunStats::new(nv, dt, ticks, step_s, planned_swaps),
        series,
    );
    let mut progress = Progress::new(ticks, progress);
    let (csv, bag) = match recorder {
        Some(RunRecord::Csv(rec)) => (Some(rec), None),
        Some(RunRecord::Bag(bag)) => (None, Some(&*bag)),
        None => (None, None),
    };
    let mut plant = RecordingPlant::new(plant, bag);
    let mut bag_listener = bag.map(|bag| BagListener {
        bag,
        model: params.model.plugin.clone(),
    });
    let mut record = match csv {
        Some(rec) => Some(RecordListener {
            rec,
            truth: Simulator::new(robot, &params.sim)?,
            error: None,
        }),
        None => None,
    };
    let mut viz = viz.map(|viz| {
        let run = if learning {
            VizRun::Learned
        } else {
            VizRun::Nominal
        };
        VizListener::new(viz, run, nv)
    });
    let mut listeners: Vec<&mut dyn OutputListener> = vec![&mut log, &mut progress];
    if let Some(record) = record.as_mut() {
        listeners.push(record);
    }
    if let Some(bag) = bag_listener.as_mut() {
        listeners.push(bag);
    }
    if let Some(viz) = viz.as_mut() {
        listeners.push(viz);
    }
    // Paced as on a robot, the loop's thread is real-time work as on a robot.
    let mut realtime = params
        .run
        .realtime
        .then(|| gpn_app::realtime::enter(&params.realtime));
    let wall = Instant::now();
    let ran = control_loop.run(
        &mut plant,
        clock.as_mut(),
        &mut ops,
        &mut listeners,
        &AtomicBool::new(false),
    );
    if let Some(setup) = realtime.as_mut() {
        gpn_app::realtime::leave(setup);
        setup.heap = gpn_app::realtime::heap_usage();
    }
    ran?;
    drop(listeners);
    progress.done();
    let mut log = log.log;
    log.wall_secs = wall.elapsed().as_secs_f64();
    log.realtime = realtime;
    if let Some(record) = record {
        if let Some(error) = record.error {
            return Err(error);
        }
        record.rec.flush()?;
    }
    finish_log(&mut log, &control_loop, &mut ops, learning, (nv, dt))?;
    Ok(log)
}

/// The loop of one run — its tick (the law used with the learned residual only when
/// `learning`), learner, probing reference — and the run's operations (swaps, announced
/// changes), built in this order.
fn assemble_loop<'p>(
    robot: &Model,
    params: &'p NodeParams,
    learning: bool,
    factory: ModelFactory,
    ticks: usize,
    budget: BudgetClock,
) -> Result<(ControlLoop<ProbingReference<'p>>, SimOperations), SimulateError> {
    let mut control = params.control.clone();
    control.use_model = learning;
    let tick = Tick::new(robot, &control, budget)?;
    let mut learn_params = params.learn.clone();
    // η_cal calibrates on the first half of the run: it freezes at the half-way tick on
    // what the model predicted until then, or on its first `CALIBRATION_SAMPLES_MAX`
    // samples, so that a long run's memory does not grow with it.
    learn_params.calibration_samples = (ticks / 2).clamp(1, CALIBRATION_SAMPLES_MAX);
    let hyper = params.model.config.get("hyper").cloned();
    let mut learner = Learner::new(robot, learn_params, hyper, factory)?;
    if learning {
        gpn_app::start_from_model_file(&mut learner, params, &sim_model_host(params)?)
            .map_err(SimulateError::Param)?;
    }
    let ops = sim_operations(params, learning, ticks);
    let probing = ProbingReference::new(robot, &params.run.reference, &params.learn.probe);
    // The simulated robot is never silent (no watchdog) and is commanded from the start.
    let decision = CommandDecision::new(robot, &control)?;
    check_reference(robot, params, decision.reference_limits(), ticks)?;
    let control_loop = ControlLoop::new(tick, learner, probing, decision, true);
    Ok((control_loop, ops))
}

/// The task's reference, sampled at every tick of the run, through the one reference
/// validator (limits and the torque it needs): an infeasible task is a parameter error
/// before the run, not a robot saturating for its whole duration.
fn check_reference(
    robot: &Model,
    params: &NodeParams,
    limits: &gpn_control::control_loop::ReferenceLimits,
    ticks: usize,
) -> Result<(), SimulateError> {
    let nv = robot.nv();
    let dt = params.sim.dt_secs();
    let (mut q, mut qd, mut qdd) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
    let mut data = gpn_dynamics::Data::new(robot);
    let joint = |j: usize| robot.joint_names()[j].clone();
    for k in 0..ticks {
        let t = k as f64 * dt;
        params.run.reference.sample(t, &mut q, &mut qd, &mut qdd);
        let tau = gpn_dynamics::rnea(robot, &mut data, &q, &qd, &qdd)?;
        if let Err(refusal) = limits
            .check(&q, &qd, &qdd)
            .and_then(|()| limits.check_effort(tau))
        {
            return Err(SimulateError::Param(format!(
                "run.reference is not feasible at t = {t:.3} s: joint {:?}: {} ({:.4} against \
                 the limit {:.4}); change run.reference (center_rad, amplitude_rad, \
                 frequencies_hz) or the limits",
                joint(refusal.joint),
                refusal.fault.name(),
                refusal.value,
                refusal.limit
            )));
        }
    }
    Ok(())
}

/// Where the run's models live (`model.isolation`). The simulated robot waits for the
/// model, so a plugin process gets a long deadline: a late answer would make the run depend
/// on the machine's load.
fn sim_model_host(params: &NodeParams) -> Result<ModelHost, SimulateError> {
    ModelHost::of(params, std::time::Duration::from_secs(10)).map_err(SimulateError::Param)
}

/// The run's operations: the swap schedule (learning runs with `run.swap_every_s`) and the
/// announced payload step (`run.announce_changes`).
fn sim_operations(params: &NodeParams, learning: bool, ticks: usize) -> SimOperations {
    let dt = params.sim.dt_secs();
    let schedule = if learning {
        SwapSchedule::new(
            &sim_model_host(params).unwrap_or(ModelHost::InProcess),
            &plugin_search(params),
            params.run.swap_every_s,
            &SwapTarget {
                plugin: params.model.plugin.clone(),
                config: params.model.config.clone(),
            },
            &params.run.swap_to,
            params.run.duration_s,
        )
    } else {
        None
    };
    let announce_at = params
        .sim
        .payload
        .step
        .as_ref()
        .map(|step| step.at_secs)
        .filter(|_| learning && params.run.announce_changes);
    SimOperations::new(schedule, ticks, dt, (ticks / 2) as u64, announce_at)
}

/// Completes the log from the model's report, the probes and the swaps; a learning run whose
/// model was never adopted fails with the model's reason.
fn finish_log(
    log: &mut RunLog,
    control_loop: &ControlLoop<ProbingReference<'_>>,
    ops: &mut SimOperations,
    learning: bool,
    (nv, dt): (usize, f64),
) -> Result<(), SimulateError> {
    let report = control_loop.model_report();
    log.experts = report.experts;
    log.beta_cal = report.beta_cal;
    log.fit_secs = report.counts.fit_secs;
    log.refits = [report.counts.refits_adopted, report.counts.refits_kept];
    log.learned_samples = report.counts.learned;
    let g = report.counts.gate;
    log.gated_samples = g.non_finite
        + g.position_limit
        + g.velocity_limit
        + g.effort_limit
        + g.jump
        + g.acceleration
        + g.innovation;
    log.overruns = report.supervisor.overruns;
    log.hyper = report.hyper;
    log.reidentified_mass_kg = report.reidentified_mass_kg;
    log.probes = control_loop.reference().records().to_vec();
    if let Some((labels, busy)) = ops.schedule().map(|s| (s.labels.clone(), s.busy_refusals)) {
        ops.log.labels = labels;
        log.swap_busy_ticks = busy;
        log.swaps = ops.log.resolve(&log.stats, nv, dt);
    }
    if learning
        && log.model_adopted_at_secs.is_none()
        && let Some(reason) = report.failure
    {
        return Err(SimulateError::Model(reason));
    }
    Ok(())
}

/// Streams the loop's outputs into the run's summaries (and its series, if kept).
struct RunLogger {
    log: RunLog,
    limits: Vec<gpn_dynamics::JointLimits>,
    /// |command| at which a joint counts as saturated, N·m.
    saturation_nm: Vec<f64>,
    /// The tick's tracking error, rad.
    error: Vec<f64>,
    /// The control thread's CPU usage at the previous tick's report.
    usage_at_last: Option<gpn_app::realtime::ThreadUsage>,
}

impl RunLogger {
    fn new(
        limits: &[gpn_dynamics::JointLimits],
        effort_limit_fraction: f64,
        (dt, ticks): (f64, usize),
        stats: RunStats,
        series: Series,
    ) -> Self {
        let nv = limits.len();
        let series = (series == Series::Kept).then(|| TickSeries {
            t_secs: Vec::with_capacity(ticks),
            error_rad: Vec::with_capacity(ticks * nv),
            command_nm: Vec::with_capacity(ticks * nv),
            learned: Vec::with_capacity(ticks),
        });
        let mut log = RunLog {
            nv,
            dt_secs: dt,
            stats,
            series,
            limit_ticks: vec![JointLimitTicks::default(); nv],
            ..RunLog::default()
        };
        log.changes.reserve(64);
        log.law_events.reserve(64);
        log.late.reserve(LATE_TICKS_KEPT);
        Self {
            log,
            limits: limits.to_vec(),
            // The command is clamped to exactly this; a hair below counts too.
            saturation_nm: limits
                .iter()
                .map(|l| l.effort * effort_limit_fraction * (1.0 - 1e-9))
                .collect(),
            error: vec![0.0; nv],
            usage_at_last: None,
        }
    }
}

impl OutputListener for RunLogger {
    fn on_output(&mut self, out: &LoopOutput) {
        if out.kind != OutKind::Tick {
            return;
        }
        // The listener runs on the control thread, right after the tick it reports: the
        // usage since the last report is the tick's (and one wait for it).
        let usage_now = gpn_app::realtime::thread_usage();
        let tick_usage = match (
            usage_now,
            std::mem::replace(&mut self.usage_at_last, usage_now),
        ) {
            (Some(now), Some(last)) => {
                let count = |a: u64, b: u64| i64::try_from(a.saturating_sub(b)).unwrap_or(i64::MAX);
                Some((
                    now.cpu_us - last.cpu_us,
                    (count(now.voluntary_switches, last.voluntary_switches) - 1).max(0),
                    count(now.involuntary_switches, last.involuntary_switches),
                ))
            }
            _ => None,
        };
        let log = &mut self.log;
        let t = out.t_secs;
        log.decision = out.counters.decision;
        let event = match out.verdict {
            Verdict::FallBack(reason, joint) => Some(LawEvent::Fallback { reason, joint }),
            Verdict::Readopt => Some(LawEvent::Readopted),
            Verdict::Keep => None,
        };
        if let Some(event) = event
            && log.law_events.len() < log.law_events.capacity()
        {
            log.law_events.push((t, event));
        }
        // A state the law did not answer (the safe output): not learned, no timing.
        let status = out.status.unwrap_or(TickStatus {
            result: TickResult::BadInput,
            exec_micros: 0.0,
            model_micros: 0.0,
            period_secs: 0.0,
            saturated: 0,
            adopted_model: false,
            implausible_joint: None,
        });
        for notice in out.changes() {
            if log.changes.len() < log.changes.capacity() {
                log.changes.push(*notice);
            }
        }
        if status.adopted_model && log.model_adopted_at_secs.is_none() {
            log.model_adopted_at_secs = Some(t);
        }
        for (j, limit) in self.limits.iter().enumerate() {
            let (q, v) = (out.truth.q[j], out.truth.v[j]);
            log.max_speed_fraction = log.max_speed_fraction.max(v.abs() / limit.velocity);
            let excess = (limit.position_lower - q).max(q - limit.position_upper);
            log.position_limit_excess_rad = log.position_limit_excess_rad.max(excess);
            let counts = &mut log.limit_ticks[j];
            counts.position += u64::from(excess > 0.0);
            counts.velocity += u64::from(v.abs() > limit.velocity);
            counts.saturated += u64::from(out.u[j].abs() >= self.saturation_nm[j]);
            self.error[j] = out.truth.q[j] - out.q_d[j];
        }
        log.stats.record(&TickValues {
            error_rad: &self.error,
            true_residual_nm: &out.truth.residual,
            mu_nm: &out.mu,
            eta_nm: [&out.eta, &out.eta_thm],
            tick_micros: status.exec_micros,
            adopted_model: status.adopted_model,
        });
        let learned = status.result == TickResult::Learned;
        if let Some(series) = log.series.as_mut() {
            series.t_secs.push(t);
            series.error_rad.extend_from_slice(&self.error);
            series.command_nm.extend_from_slice(&out.u);
            series.learned.push(learned);
        }
        log.ticks += 1;
        if status.exec_micros > log.dt_secs * 1e6 {
            log.late_ticks += 1;
            if log.late.len() < log.late.capacity() {
                log.late.push(LateTick::new(t, &status, tick_usage));
            }
        }
        log.final_tracking_bound = out.tracking_bound;
    }
}

/// Reports the fraction done about every 1 %.
struct Progress<'a> {
    ticks: usize,
    every: u64,
    report: &'a mut dyn FnMut(f64),
}

impl<'a> Progress<'a> {
    fn new(ticks: usize, report: &'a mut dyn FnMut(f64)) -> Self {
        Self {
            ticks,
            every: (ticks / 100).max(1) as u64,
            report,
        }
    }

    fn done(&mut self) {
        (self.report)(1.0);
    }
}

impl OutputListener for Progress<'_> {
    fn on_output(&mut self, out: &LoopOutput) {
        if out.tick.is_multiple_of(self.every) {
            (self.report)(out.tick as f64 / self.ticks as f64);
        }
    }
}

/// Writes the recording; the true residual at the learning samples comes from a copy of
/// the true robot (a function of the state and time only). The first error ends the writing
/// and is returned after the run.
struct RecordListener<'a> {
    rec: &'a mut Recorder,
    truth: Simulator,
    error: Option<SimulateError>,
}

impl OutputListener for RecordListener<'_> {
    fn on_output(&mut self, out: &LoopOutput) {
        if self.error.is_none()
            && let Err(e) = self.rec.write_tick(out, &mut self.truth)
        {
            self.error = Some(e);
        }
    }
}
