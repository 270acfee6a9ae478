//! One closed-loop run on the embedded simulator: the true robot, the sensors, the
//! reference and the control tick, tick by tick, with everything the report needs.
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

use std::time::Instant;

use crate::control::{BudgetClock, Tick, TickInput, TickOutput, TickResult};
use crate::learn::{Learner, ModelFactory};
use crate::robot::Model;
use crate::sim::{SimState, Simulator};
use crate::viz::{Viz, VizTick};

use super::SimulateError;
use super::record::Recorder;
use super::swaps::{SwapLog, SwapSchedule};
use crate::app::SwapTarget;
use crate::app::{NodeParams, model_factory, plugin_search};

/// Per-tick series of a run (joint-major where per joint: `[tick * nv + j]`).
#[derive(Debug, Clone, Default)]
pub struct RunLog {
    /// Joints.
    pub nv: usize,
    /// Tick period, s.
    pub dt_secs: f64,
    /// Time of each tick, s.
    pub t_secs: Vec<f64>,
    /// True tracking error q − q_d, rad.
    pub error_rad: Vec<f64>,
    /// True residual at the query point, N·m.
    pub true_residual_nm: Vec<f64>,
    /// Residual used in the law (0 on fallback), N·m.
    pub mu_nm: Vec<f64>,
    /// η_cal, N·m (NaN before calibration or without a model).
    pub eta_cal_nm: Vec<f64>,
    /// η_thm, N·m (NaN without a model).
    pub eta_thm_nm: Vec<f64>,
    /// Whether the learned law ran at the tick (per tick).
    pub learned: Vec<bool>,
    /// Tick execution time, µs.
    pub tick_micros: Vec<f64>,
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
    /// Samples the model learned.
    pub learned_samples: u64,
    /// Samples the gate refused.
    pub gated_samples: u64,
    /// Supervisor: ticks over budget.
    pub overruns: u64,
    /// Ticks whose execution took longer than the tick period.
    pub late_ticks: u64,
    /// Hyperparameters the model used (its config's `"hyper"`), if any.
    pub hyper: Option<serde_json::Value>,
    /// Hot swaps (`run.swap_every_s`), one record per planned swap.
    pub swaps: Vec<super::swaps::SwapRecord>,
    /// Ticks on which a due swap found the learner busy (it is offered again next tick).
    pub swap_busy_ticks: u64,
    /// Changes of the dynamics the learner noticed.
    pub changes: Vec<crate::learn::ChangeNotice>,
    /// Probing trajectories planned after changes (`learn.probe`).
    pub probes: Vec<super::probing::ProbeRecord>,
    /// The payload mass change the last re-identification found, kg (NaN without one).
    pub reidentified_mass_kg: f64,
}

/// Runs `params` for `params.run.duration_s`; `learning` false runs the nominal law.
/// `progress` is called about every 1 % with the fraction done.
pub fn run(
    robot: &Model,
    params: &NodeParams,
    learning: bool,
    recorder: Option<&mut Recorder>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunLog, SimulateError> {
    run_with_viz(robot, params, learning, recorder, None, progress)
}

/// As [`run`], also handing every tick to `viz` (rerun logging; it never blocks the loop).
pub fn run_with_viz(
    robot: &Model,
    params: &NodeParams,
    learning: bool,
    recorder: Option<&mut Recorder>,
    viz: Option<&mut Viz>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunLog, SimulateError> {
    let factory = model_factory(
        &plugin_search(params),
        &params.model.plugin,
        &params.model.config,
        3 * robot.nv(),
        robot.nv(),
    );
    run_inner(robot, params, learning, factory, recorder, viz, progress)
}

/// As [`run`], with the model created by `factory` instead of the configured plugin (tests
/// use it to put doubles in the loop).
pub fn run_with_factory(
    robot: &Model,
    params: &NodeParams,
    learning: bool,
    factory: ModelFactory,
    recorder: Option<&mut Recorder>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunLog, SimulateError> {
    run_inner(robot, params, learning, factory, recorder, None, progress)
}

fn run_inner(
    robot: &Model,
    params: &NodeParams,
    learning: bool,
    factory: ModelFactory,
    mut recorder: Option<&mut Recorder>,
    mut viz: Option<&mut Viz>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunLog, SimulateError> {
    let nv = robot.nv();
    params
        .run
        .reference
        .check(nv)
        .map_err(SimulateError::Param)?;
    let mut sim = Simulator::new(robot, &params.sim)?;
    let mut control = params.control.clone();
    control.use_model = learning;
    let budget_clock = if params.run.realtime {
        BudgetClock::Wall
    } else {
        BudgetClock::Simulated
    };
    let mut tick = Tick::new(robot, &control, budget_clock)?;
    let dt = params.sim.dt_secs();
    let ticks = (params.run.duration_s / dt).round() as usize;
    let mut learn_params = params.learn.clone();
    // η_cal calibrates on the first half of the run: it freezes at the half-way tick (see
    // `freeze_calibration` below) on what the model predicted until then.
    learn_params.calibration_samples = (ticks / 2).max(1);
    let hyper = params.model.config.get("hyper").cloned();
    let mut learner = Learner::new(robot, learn_params, hyper, factory)?;
    let mut announce_at = params.sim.payload.step.as_ref().map(|step| step.at_secs);
    let mut schedule = if learning {
        SwapSchedule::new(
            &plugin_search(params),
            params.run.swap_every_s,
            &SwapTarget {
                plugin: params.model.plugin.clone(),
                config: params.model.config.clone(),
            },
            &params.run.swap_to,
            params.run.duration_s,
            3 * nv,
            nv,
        )
    } else {
        None
    };

    let reference = &params.run.reference;
    let (mut q_d, mut qd_d, mut qdd_d) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
    reference.sample(0.0, &mut q_d, &mut qd_d, &mut qdd_d);
    let mut state = SimState {
        t_secs: 0.0,
        q: q_d.clone(),
        v: qd_d.clone(),
    };
    let mut out = TickOutput::new(nv);
    let mut tau_prev = vec![0.0; nv];
    let mut truth = vec![0.0; nv];
    let mut query_state = state.clone();

    let mut log = RunLog {
        nv,
        dt_secs: dt,
        ..RunLog::default()
    };
    let per_joint = ticks * nv;
    log.t_secs.reserve(ticks);
    for series in [
        &mut log.error_rad,
        &mut log.true_residual_nm,
        &mut log.mu_nm,
        &mut log.eta_cal_nm,
        &mut log.eta_thm_nm,
    ] {
        series.reserve(per_joint);
    }
    log.learned.reserve(ticks);
    log.changes.reserve(64);
    log.tick_micros.reserve(ticks);
    let half = ticks / 2;
    let report_every = (ticks / 100).max(1);
    let mut swap_log = SwapLog::with_capacity(
        if schedule.is_some() { ticks } else { 0 },
        schedule.as_ref().map_or(0, SwapSchedule::planned),
    );
    let wall = Instant::now();

    let mut probing = super::probing::ProbingReference::new(reference, &params.learn.probe);
    for k in 0..ticks {
        let t = k as f64 * dt;
        state.t_secs = t;
        if k == half {
            learner.freeze_calibration();
        }
        probing.sample(t, &mut q_d, &mut qd_d, &mut qdd_d);
        if let Some(schedule) = schedule.as_mut() {
            swap_log.tick_started.push(Instant::now());
            let active = learner.phase() == crate::learn::LearnPhase::Active;
            if let Some(request) = schedule.due(t, active) {
                let id = request.id;
                match learner.request_swap(request) {
                    Ok(()) => swap_log.requested.push((id, k)),
                    Err((Some(request), _)) => schedule.refused(request),
                    Err((None, _)) => {}
                }
            }
        }
        if learning && params.run.announce_changes && announce_at.is_some_and(|at| t >= at) {
            announce_at = None;
            learner.announce_change();
        }
        let measured = sim.measure(&state, &tau_prev)?;
        let input = TickInput {
            t_secs: t,
            q: &measured.q,
            v: &measured.v,
            tau: &measured.tau,
            q_d: &q_d,
            qd_d: &qd_d,
            qdd_d: &qdd_d,
        };
        let status = tick.step(&input, &mut learner, &mut out);
        for event in learner.take_events() {
            swap_log.record(k, event);
        }
        let mut change = None;
        for notice in learner.take_change_notices() {
            change = Some(notice);
            if log.changes.len() < log.changes.capacity() {
                log.changes.push(notice);
            }
        }
        if let Some(notice) = change.filter(|_| learning)
            && let Some(record) = probing.on_change(robot, &mut learner, t, notice.onset_secs)
        {
            log.probes.push(record);
        }
        if status.adopted_model && log.model_adopted_at_secs.is_none() {
            log.model_adopted_at_secs = Some(t);
        }
        query_state.t_secs = t;
        query_state.q.copy_from_slice(&state.q);
        query_state.v.copy_from_slice(&state.v);
        sim.true_residual(&query_state, &out.qdd_cmd, &mut truth)?;

        log.t_secs.push(t);
        for j in 0..nv {
            log.error_rad.push(state.q[j] - q_d[j]);
            log.true_residual_nm.push(truth[j]);
            log.mu_nm.push(out.mu[j]);
            log.eta_cal_nm.push(out.eta_cal[j]);
            log.eta_thm_nm.push(out.eta_thm[j]);
        }
        log.learned.push(status.result == TickResult::Learned);
        log.tick_micros.push(status.exec_micros);
        if status.exec_micros > dt * 1e6 {
            log.late_ticks += 1;
        }
        if let Some(rec) = recorder.as_deref_mut() {
            rec.write_tick(t, &state, &q_d, &out, &truth, &learner, &mut sim)?;
        }
        if let Some(viz) = viz.as_deref_mut() {
            viz.log_tick(&VizTick {
                tick: k as u64,
                t_secs: t,
                q: &state.q,
                q_d: &q_d,
                out: &out,
                true_residual: &truth,
                exec_micros: status.exec_micros,
                experts: learner.model_stats().map(|s| s.experts),
                coverage: learner.coverage(),
                change,
            });
        }

        if params.run.realtime {
            // Paced: tick k starts at wall time k·dt after the start.
            let due = wall + std::time::Duration::from_secs_f64((k + 1) as f64 * dt);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        } else if learner.background_busy() {
            // Faster than the wall clock, simulated time stands still while a background
            // fit runs (as if it were instantaneous), so runs are reproducible; its wall
            // time is reported.
            while !learner.wait_for_model(std::time::Duration::from_secs(1))
                && learner.background_busy()
            {}
        }
        sim.step(&mut state, &out.u)?;
        tau_prev.copy_from_slice(&out.u);
        if k % report_every == 0 {
            progress(k as f64 / ticks as f64);
        }
    }
    progress(1.0);
    log.wall_secs = wall.elapsed().as_secs_f64();
    log.final_tracking_bound = out.tracking_bound;
    log.experts = learner.model_stats().map(|s| s.experts);
    log.beta_cal = learner.beta_cal();
    let counts = learner.counts();
    log.fit_secs = counts.fit_secs;
    log.learned_samples = counts.learned;
    let g = counts.gate;
    log.gated_samples = g.non_finite
        + g.position_limit
        + g.velocity_limit
        + g.effort_limit
        + g.jump
        + g.acceleration
        + g.innovation;
    log.overruns = tick.supervisor_counts().overruns;
    log.hyper = learner.hyper().cloned();
    log.reidentified_mass_kg = learner.reidentified_mass_kg();
    if let Some(schedule) = schedule {
        swap_log.labels = schedule.labels.clone();
        log.swap_busy_ticks = schedule.busy_refusals;
        log.swaps = swap_log.resolve(&log.error_rad, nv, dt);
    }
    if let Some(rec) = recorder {
        rec.flush()?;
    }
    if learning
        && log.model_adopted_at_secs.is_none()
        && let Some(reason) = learner.failure()
    {
        return Err(SimulateError::Model(reason.to_owned()));
    }
    Ok(log)
}
