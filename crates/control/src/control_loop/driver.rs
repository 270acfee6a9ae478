//! The control loop: the one implementation that drives any [`Plant`] — the embedded
//! simulator, the ROS topics, a test's script. It owns the tick, the learner, the reference
//! source and the command decision; it is given the plant, the clock, the operations and
//! the listeners.
//!
//! One iteration: apply the operations' pending commands → read the plant (waiting at most
//! until the watchdog's deadline) → for a new state: sample the reference, run the tick,
//! ask the plant for the truth (a simulator), pass the model-change results to the
//! operations, write the command unless newer states are already queued (only the newest
//! answer of a burst is written; every state is ticked, so the learner sees all data), hand
//! the output to the listeners, let a simulated clock wait for the model and pace the loop; for
//! a repeated stamp: write the last command again; on silence: the command decision's safe
//! output. An observe-only plant gets no command; its reference is the measurement.
//! Real-time: no allocation, lock or I/O after construction.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::clock::Clock;
use super::decision::{CommandDecision, Mode, TickView, Verdict, WatchdogAction};
use super::operations::{ControlCommand, ControlReply, LoopView, Operations};
use super::output::{CHANGES_PER_TICK, LoopCounters, LoopOutput, OutKind, OutputListener};
use super::plant::{Command, Plant, Read, StateFrame, Timing, TorqueOrigin};
use super::reference::{Desired, ReferenceSource};
use crate::control::{Fallback, Tick, TickInput, TickOutput, TickResult, TickStatus};
use crate::learn::{Learner, ModelSnapshot};

/// What happened to a state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Handled {
    /// Ticked; the output holds the result.
    Ticked(TickStatus),
    /// Answered without the law: the safe output (an implausible state) or, while inactive,
    /// nothing (`Mode::Inactive`: no command is written).
    Held(Mode),
    /// Same stamp as the last tick: the output repeats the last command.
    Repeated,
}

impl Handled {
    /// Whether a command answers this state.
    pub fn commands(self) -> bool {
        !matches!(self, Handled::Held(Mode::Inactive))
    }
}

/// What a finished run leaves of the model (read after the loop, off the tick).
#[derive(Debug, Clone)]
pub struct ModelReport {
    /// Experts (or components), if a model ran.
    pub experts: Option<u64>,
    /// β_cal per joint.
    pub beta_cal: Vec<Option<f64>>,
    /// Learner counters.
    pub counts: crate::learn::LearnCounts,
    /// Hyperparameters in use, if any.
    pub hyper: Option<serde_json::Value>,
    /// The payload mass change the last re-identification found, kg (NaN without one).
    pub reidentified_mass_kg: f64,
    /// Why the model could not be built, if it failed.
    pub failure: Option<String>,
    /// Supervisor counters.
    pub supervisor: crate::control::SupervisorCounts,
}

/// The loop over a reference source `R`.
pub struct ControlLoop<R> {
    tick: Tick,
    learner: Learner,
    reference: R,
    decision: CommandDecision,
    commands: bool,
    out: TickOutput,
    tau: Vec<f64>,
    q_d: Vec<f64>,
    qd_d: Vec<f64>,
    qdd_d: Vec<f64>,
    /// The last command sent (the command convention).
    last_u: Vec<f64>,
    /// Whether the last new state was answered with a command (a repeat of its stamp is
    /// answered the same way: an inactive node stays quiet).
    answered_last: bool,
    /// The last command in full torque (what acted, for learning from our own command).
    last_u_full: Vec<f64>,
    /// g(q) at the current state (the torque conventions).
    gravity: Vec<f64>,
    last_t: Option<f64>,
    /// The command being decided (the command convention).
    command: Vec<f64>,
    /// A safe output's target.
    target: Vec<f64>,
    /// Inverse-dynamics scratch (the reference's torque).
    scratch: Vec<f64>,
    /// The stamp clock's shift at the last state (sender's stamps → node time).
    shift_secs: f64,
    qdd_estimate: Vec<f64>,
    counters: LoopCounters,
}

impl<R: ReferenceSource> ControlLoop<R> {
    /// A loop over `tick` and `learner`, following `reference`, commanding by `decision`;
    /// `commands` false: the plant is observe-only (nothing is commanded).
    pub fn new(
        tick: Tick,
        learner: Learner,
        reference: R,
        decision: CommandDecision,
        commands: bool,
    ) -> Self {
        let nv = tick.nv();
        let z = || vec![0.0; nv];
        Self {
            tick,
            learner,
            reference,
            decision,
            commands,
            out: TickOutput::new(nv),
            tau: z(),
            q_d: z(),
            qd_d: z(),
            qdd_d: z(),
            last_u: z(),
            answered_last: false,
            last_u_full: z(),
            gravity: z(),
            last_t: None,
            command: z(),
            target: z(),
            scratch: z(),
            shift_secs: 0.0,
            qdd_estimate: z(),
            counters: LoopCounters::default(),
        }
    }

    /// Joints.
    pub fn nv(&self) -> usize {
        self.tick.nv()
    }

    /// The reference source.
    pub fn reference(&self) -> &R {
        &self.reference
    }

    /// The reference source, to change it between ticks (a test switching trajectories).
    pub fn reference_mut(&mut self) -> &mut R {
        &mut self.reference
    }

    /// The command decision (the watchdog's deadline and counters).
    pub fn decision(&self) -> &CommandDecision {
        &self.decision
    }

    /// The learner (read-only: counters, replay buffer; for tests and reports off the tick).
    pub fn learner(&self) -> &Learner {
        &self.learner
    }

    /// The learner, to query its model after a run (a held-out evaluation; off the tick).
    pub fn learner_mut(&mut self) -> &mut Learner {
        &mut self.learner
    }

    /// Counters so far.
    pub fn counters(&self) -> LoopCounters {
        let mut c = self.counters;
        c.supervisor = self.tick.supervisor_counts();
        c.learn = self.learner.counts();
        c.phase = Some(self.learner.phase());
        if let Some(w) = self.decision.watchdog() {
            c.watchdog_trips = w.trips();
            c.watchdog_episodes = w.episodes();
            c.stale = w.is_stale();
        }
        c.tracking_trajectory = self.reference.has_trajectory();
        c.decision = self.decision.counts();
        c.active = self.decision.is_active();
        c.law = self.decision.mode();
        c.coverage = self.learner.coverage();
        c.changes = self.learner.changes();
        c
    }

    /// What the model did, for a report at the end of a run (allocates).
    pub fn model_report(&self) -> ModelReport {
        ModelReport {
            experts: self.learner.model_stats().map(|s| s.experts),
            beta_cal: self.learner.beta_cal(),
            counts: self.learner.counts(),
            hyper: self.learner.hyper().cloned(),
            reidentified_mass_kg: self.learner.reidentified_mass_kg(),
            failure: self.learner.failure().map(str::to_owned),
            supervisor: self.tick.supervisor_counts(),
        }
    }

    /// Drives `plant` until it closes or `stop` is set: see the module doc. `clock` decides
    /// what the model's work costs and paces the loop; `ops` gives commands between ticks
    /// and gets their results; every output goes to each of `listeners`.
    pub fn run<P: Plant + ?Sized>(
        &mut self,
        plant: &mut P,
        clock: &mut dyn Clock,
        ops: &mut dyn Operations,
        listeners: &mut [&mut dyn OutputListener],
        stop: &AtomicBool,
    ) -> Result<(), P::Error> {
        let nv = self.nv();
        // Models that can miss a deadline (a plugin process) hold this thread to it.
        gpn_gp_core::model::mark_control_thread();
        self.commands = plant.accepts_commands();
        let mut frame = StateFrame::new(nv);
        let mut out = LoopOutput::new(nv);
        clock.start();
        while !stop.load(Ordering::Relaxed) {
            self.apply_operations(ops);
            let read = plant.read(&mut frame, self.decision.deadline(clock.now()))?;
            match read {
                Read::Closed => break,
                Read::Silent => {
                    if !self.on_silence(clock.now(), &mut out) {
                        continue;
                    }
                    if self.commands && self.decision.action() != WatchdogAction::StopPublishing {
                        plant.write(Command {
                            u: &out.u,
                            answers: None,
                        })?;
                    }
                }
                Read::State { more_queued } => {
                    let handled = self.on_state(&frame, clock.now(), &mut out);
                    out.superseded = more_queued;
                    // A repeat computed nothing new: no truth, no model-change results.
                    if handled != Handled::Repeated {
                        out.has_truth = plant.truth(&out.qdd_cmd, &mut out.truth)?;
                    }
                    if let Handled::Ticked(_) = handled {
                        for event in self.learner.take_events() {
                            ops.on_event(out.tick, event);
                        }
                    }
                    if self.commands && !more_queued && handled.commands() {
                        plant.write(Command {
                            u: &out.u,
                            answers: Some(frame.received),
                        })?;
                    }
                }
            }
            for listener in listeners.iter_mut() {
                listener.on_output(&out);
            }
            if read != Read::Silent {
                if clock.waits_for_model() {
                    // Simulated time stands still while a background fit runs (as if it
                    // were instantaneous), so runs are reproducible.
                    while self.learner.background_busy()
                        && !self.learner.wait_for_model(Duration::from_secs(1))
                    {
                    }
                }
                clock.pace();
            }
        }
        Ok(())
    }

    fn apply_operations(&mut self, ops: &mut dyn Operations) {
        loop {
            let view = LoopView {
                ticks: self.counters.ticks,
                phase: self.learner.phase(),
            };
            let Some(command) = ops.next_command(&view) else {
                return;
            };
            let reply = self.command(command);
            ops.on_applied(reply);
        }
    }

    /// Handles one state received at `now`, writing the output into `out` (the step of
    /// [`ControlLoop::run`] for a new or repeated state; tests drive it directly).
    pub fn on_state(&mut self, frame: &StateFrame, now: Instant, out: &mut LoopOutput) -> Handled {
        out.tick = self.counters.ticks;
        out.superseded = false;
        out.has_truth = false;
        if frame.timing == Timing::Repeat {
            self.counters.repeated += 1;
            self.fill_common(frame, out);
            out.kind = OutKind::Republish;
            if !self.answered_last {
                // Nothing was commanded for this stamp (inactive): nothing is repeated.
                out.mode = Mode::Inactive;
                out.u.fill(0.0);
                return Handled::Held(Mode::Inactive);
            }
            out.mode = self.decision.mode();
            out.u.copy_from_slice(&self.last_u);
            return Handled::Repeated;
        }
        let handled = self.on_new_state(frame, now, out);
        self.answered_last = handled.commands();
        handled
    }

    fn on_new_state(&mut self, frame: &StateFrame, now: Instant, out: &mut LoopOutput) -> Handled {
        self.shift_secs = frame.shift_secs();
        self.decision.on_state(now);
        let elapsed = self.last_t.map_or(0.0, |t| frame.t_secs - t);
        self.last_t = Some(frame.t_secs);
        if self.needs_gravity() {
            self.tick.gravity(&frame.q, &mut self.gravity);
        }
        if !self.commands || !self.decision.is_active() {
            if !self.commands {
                // Observe-only: the tick estimates, nothing is commanded.
                return self.run_tick(frame, elapsed, now, out);
            }
            if self.decision.ramping() {
                // Just deactivated: the safe output, rate-limited, before going quiet.
                self.safe_target(self.decision.action(), None);
                self.decision
                    .ramp_safe(&self.target, &mut self.command, now);
                self.remember_sent();
                return self.held(frame, Mode::Safe, out);
            }
            self.decision.idle();
            return self.held(frame, Mode::Inactive, out);
        }
        let plausible = self
            .decision
            .check_state(frame.t_secs, &frame.q, &frame.v)
            .is_ok();
        let (start, restart) = if plausible {
            self.decision.take_start()
        } else {
            (false, false)
        };
        if restart {
            self.reference.restart();
        }
        if start {
            // Bumpless: from the torque that holds the arm here.
            self.safe_target(WatchdogAction::HoldGravity, Some(&frame.q));
            self.decision.start_from(&self.target);
        }
        if !plausible {
            let action = match self.decision.action() {
                // A state is here: holding gravity is the safest thing to command.
                WatchdogAction::StopPublishing => WatchdogAction::HoldGravity,
                action => action,
            };
            self.safe_target(action, None);
            self.command.copy_from_slice(&self.target);
            self.send(Mode::Safe, false, elapsed, now);
            return self.held(frame, Mode::Safe, out);
        }
        self.run_tick(frame, elapsed, now, out)
    }

    fn needs_gravity(&self) -> bool {
        self.decision.command_convention().without_gravity()
            || self.decision.effort_convention().without_gravity()
    }

    /// The torque that acted over the last interval, in full torque, into `tau`.
    fn acted_torque(&mut self, frame: &StateFrame) {
        match frame.tau_origin {
            TorqueOrigin::Given => {
                self.tau.copy_from_slice(&frame.tau);
                if self.decision.effort_convention().without_gravity() {
                    for (t, g) in self.tau.iter_mut().zip(&self.gravity) {
                        *t += g;
                    }
                }
            }
            TorqueOrigin::OwnCommand => self.tau.copy_from_slice(&self.last_u_full),
        }
    }

    /// The safe output of `action` in the command convention, into `target`: holding gravity
    /// at the pose `at`, or (None) at the last plausible one.
    fn safe_target(&mut self, action: WatchdogAction, at: Option<&[f64]>) {
        let robot_holds = self.decision.command_convention().without_gravity();
        match (action, at) {
            (WatchdogAction::HoldGravity, Some(q)) if !robot_holds => {
                self.tick.holding_torque(q, &mut self.target);
            }
            (WatchdogAction::HoldGravity, None) if !robot_holds => {
                self.tick.hold_gravity(&mut self.out);
                self.target.copy_from_slice(&self.out.u);
            }
            _ => self.target.fill(0.0),
        }
    }

    /// Hands `command` (the law's, in the command convention) to the decision for the
    /// hand-over and the rate limit; it becomes the last command sent.
    fn send(&mut self, mode: Mode, switched: bool, elapsed: f64, now: Instant) {
        let gravity = self
            .decision
            .command_convention()
            .without_gravity()
            .then_some(&self.gravity[..]);
        self.decision
            .finish(mode, switched, &mut self.command, elapsed, now, gravity);
        self.remember_sent();
    }

    fn remember_sent(&mut self) {
        self.last_u.copy_from_slice(&self.command);
        self.last_u_full.copy_from_slice(&self.command);
        if self.decision.command_convention().without_gravity() {
            for (u, g) in self.last_u_full.iter_mut().zip(&self.gravity) {
                *u += g;
            }
        }
    }

    /// The reference for `frame`, validated: a refused sample makes the source fall back to
    /// holding position; if that is refused too, the measured pose (clamped into the limits)
    /// is held at rest.
    fn sample_reference(&mut self, frame: &StateFrame) {
        self.sample_source(frame);
        if !self.commands {
            return;
        }
        if let Err(refusal) = self.check_reference() {
            self.decision.count_reference_refusal(refusal);
            self.reference.refuse();
            self.sample_source(frame);
            if self.check_reference().is_err() {
                self.q_d.copy_from_slice(&frame.q);
                self.qd_d.fill(0.0);
                self.qdd_d.fill(0.0);
                self.decision
                    .reference_limits()
                    .clamp_position(&mut self.q_d);
            }
        }
    }

    /// The source's reference for `frame` into `q_d`, `qd_d`, `qdd_d`.
    fn sample_source(&mut self, frame: &StateFrame) {
        self.reference.sample(
            frame,
            &self.qdd_estimate,
            Desired {
                q: &mut self.q_d,
                qd: &mut self.qd_d,
                qdd: &mut self.qdd_d,
            },
        );
    }

    /// The validator on the sampled reference: a held pose is clamped into the position
    /// limits (the arm may rest a little beyond them) and needs no effort check; a trajectory
    /// is checked in full.
    fn check_reference(&mut self) -> Result<(), super::decision::ReferenceRefusal> {
        let trajectory = self.reference.has_trajectory();
        if !trajectory {
            self.decision
                .reference_limits()
                .clamp_position(&mut self.q_d);
        }
        self.decision
            .reference_limits()
            .check(&self.q_d, &self.qd_d, &self.qdd_d)?;
        if trajectory {
            let qva = (&self.q_d[..], &self.qd_d[..], &self.qdd_d[..]);
            if self.tick.inverse_dynamics(qva, &mut self.scratch) {
                self.decision
                    .reference_limits()
                    .check_effort(&self.scratch)?;
            }
        }
        Ok(())
    }

    /// The law's tick for a plausible state.
    fn run_tick(
        &mut self,
        frame: &StateFrame,
        elapsed: f64,
        now: Instant,
        out: &mut LoopOutput,
    ) -> Handled {
        self.acted_torque(frame);
        self.sample_reference(frame);
        self.tick.set_shadow(self.decision.shadow());
        let input = TickInput {
            t_secs: frame.t_secs,
            q: &frame.q,
            v: &frame.v,
            tau: &self.tau,
            q_d: &self.q_d,
            qd_d: &self.qd_d,
            qdd_d: &self.qdd_d,
        };
        let status = self.tick.step(&input, &mut self.learner, &mut self.out);
        out.has_sample = false;
        if let Some((x, y)) = self.learner.last_sample() {
            let nv = self.qdd_estimate.len();
            self.qdd_estimate.copy_from_slice(&x[2 * nv..3 * nv]);
            out.sample_x.copy_from_slice(x);
            out.sample_y.copy_from_slice(y);
            out.has_sample = true;
        }
        self.counters.ticks += 1;
        match status.result {
            TickResult::Learned => self.counters.learned_ticks += 1,
            TickResult::BadInput => self.counters.bad_input += 1,
            TickResult::Nominal(_) => {}
        }
        if status.adopted_model {
            self.counters.adoptions += 1;
        }
        if status.saturated > 0 {
            self.counters.saturated_ticks += 1;
        }
        let mode = match status.result {
            TickResult::Learned | TickResult::Nominal(Fallback::NonFinite) => Mode::Learned,
            TickResult::Nominal(_) => Mode::Nominal,
            TickResult::BadInput => Mode::Safe,
        };
        if status.result != TickResult::BadInput && self.commands {
            let verdict = self.decision.after_tick(&TickView {
                result: status.result,
                e: &self.out.e,
                ed: &self.out.ed,
                v: &frame.v,
                saturated: status.saturated,
                implausible_joint: status.implausible_joint,
                dt_secs: elapsed,
                coverage: self.learner.coverage(),
            });
            out.verdict = verdict;
        } else {
            out.verdict = Verdict::Keep;
        }
        if self.commands {
            if mode == Mode::Safe {
                // Bad input: the hold, as the safe output of the command convention.
                self.safe_target(WatchdogAction::HoldGravity, None);
                self.command.copy_from_slice(&self.target);
            } else {
                self.command.copy_from_slice(&self.out.u);
                if self.decision.command_convention().without_gravity() {
                    for (u, g) in self.command.iter_mut().zip(&self.gravity) {
                        *u -= g;
                    }
                }
            }
            self.send(mode, status.adopted_model, elapsed, now);
        }
        self.fill_common(frame, out);
        out.kind = OutKind::Tick;
        out.mode = if self.commands { mode } else { Mode::Inactive };
        out.q_d.copy_from_slice(&self.q_d);
        out.u.copy_from_slice(&self.command);
        out.tau_rbd.copy_from_slice(&self.out.tau_rbd);
        out.qdd_cmd.copy_from_slice(&self.out.qdd_cmd);
        out.mu.copy_from_slice(&self.out.mu);
        out.sigma.copy_from_slice(&self.out.sigma);
        out.eta.copy_from_slice(&self.out.eta_cal);
        out.eta_thm.copy_from_slice(&self.out.eta_thm);
        let all_nominal = matches!(status.result, TickResult::Nominal(f) if f != Fallback::NonFinite)
            || status.result == TickResult::BadInput;
        for (j, fb) in out.fallback.iter_mut().enumerate() {
            *fb = all_nominal || !self.out.sigma[j].is_finite();
        }
        out.status = Some(status);
        let mut listed = 0;
        for notice in self.learner.take_change_notices() {
            out.change = Some(notice);
            self.counters.last_change = Some(notice);
            if listed < CHANGES_PER_TICK {
                out.changes[listed] = Some(notice);
                listed += 1;
            }
        }
        if let Some(notice) = out.change {
            self.reference
                .on_change(frame.t_secs, &notice, &mut self.learner);
        }
        out.stats = self.learner.model_stats();
        out.tracking_bound = self.out.tracking_bound;
        out.counters = self.counters();
        Handled::Ticked(status)
    }

    /// The output of a state answered without the law (`Mode::Safe`: the command is in
    /// `command`; `Mode::Inactive`: none).
    fn held(&mut self, frame: &StateFrame, mode: Mode, out: &mut LoopOutput) -> Handled {
        self.counters.ticks += 1;
        self.fill_common(frame, out);
        out.kind = OutKind::Tick;
        out.mode = mode;
        out.has_sample = false;
        out.verdict = Verdict::Keep;
        out.q_d.copy_from_slice(&self.q_d);
        if mode == Mode::Inactive {
            out.u.fill(0.0);
        } else {
            out.u.copy_from_slice(&self.command);
        }
        out.qdd_cmd.fill(0.0);
        out.tau_rbd.fill(0.0);
        out.mu.fill(0.0);
        out.sigma.fill(f64::NAN);
        out.eta.fill(f64::NAN);
        out.eta_thm.fill(f64::NAN);
        out.fallback.fill(true);
        out.stats = self.learner.model_stats();
        out.counters = self.counters();
        Handled::Held(mode)
    }

    fn fill_common(&self, frame: &StateFrame, out: &mut LoopOutput) {
        out.change = None;
        out.changes = [None; CHANGES_PER_TICK];
        out.t_secs = frame.t_secs;
        out.stamp_secs = frame.stamp_secs;
        out.received = frame.received;
        out.q.copy_from_slice(&frame.q);
        out.status = None;
    }

    /// No state arrived before the deadline: asks the command decision at `now` and, when
    /// the watchdog trips (or the safe output is still ramping to its target), writes the
    /// safe output into `out` and returns true (command it).
    pub fn on_silence(&mut self, now: Instant, out: &mut LoopOutput) -> bool {
        let Some(action) = self.decision.on_silence(now) else {
            return false;
        };
        self.safe_target(action, None);
        if self.commands && action != WatchdogAction::StopPublishing {
            self.decision
                .ramp_safe(&self.target, &mut self.command, now);
            self.remember_sent();
        } else {
            self.command.copy_from_slice(&self.target);
        }
        out.kind = OutKind::Safe;
        out.mode = Mode::Safe;
        out.verdict = Verdict::Keep;
        out.tick = self.counters.ticks;
        out.superseded = false;
        out.has_truth = false;
        out.has_sample = false;
        out.change = None;
        out.changes = [None; CHANGES_PER_TICK];
        out.t_secs = self.last_t.unwrap_or(0.0);
        out.stamp_secs = out.t_secs + self.shift_secs;
        out.received = now;
        out.u.copy_from_slice(&self.command);
        out.status = None;
        out.counters = self.counters();
        true
    }

    /// Applies a command between ticks; returns the reply to send, if any. Real-time except
    /// `Save`, which serialises the model into new memory (timed and reported).
    pub fn command(&mut self, command: ControlCommand) -> Option<ControlReply> {
        match command {
            ControlCommand::Swap(request) => {
                let id = request.id;
                match self.learner.request_swap(request) {
                    Ok(()) => None,
                    Err((request, why)) => Some(ControlReply::Refused { id, request, why }),
                }
            }
            ControlCommand::CancelSwap { id } => Some(ControlReply::SwapCancel {
                id,
                outcome: self.learner.cancel_swap(id),
            }),
            ControlCommand::Reset {
                keep_hyperparameters,
                id,
            } => Some(ControlReply::Reset {
                id,
                result: self.learner.reset(keep_hyperparameters, id),
            }),
            ControlCommand::Save { id } => {
                let start = Instant::now();
                let result = self.learner.snapshot().map(Box::<ModelSnapshot>::new);
                Some(ControlReply::Saved {
                    id,
                    result,
                    blocked_micros: start.elapsed().as_secs_f64() * 1e6,
                })
            }
            ControlCommand::Law(mut law) => {
                self.tick.swap_law(&mut law);
                Some(ControlReply::OldLaw(law))
            }
            ControlCommand::UseModel(on) => {
                self.tick.set_use_model(on);
                None
            }
            ControlCommand::Supervisor(params) => {
                self.tick.set_supervisor(&params);
                None
            }
            ControlCommand::Gate(params) => {
                self.learner.set_gate_params(&params);
                None
            }
            ControlCommand::AdmitEvery(n) => {
                self.learner.set_admit_every(n);
                None
            }
            ControlCommand::AnnounceChange => {
                self.learner.announce_change();
                None
            }
            ControlCommand::FreezeCalibration => {
                self.learner.freeze_calibration();
                None
            }
            ControlCommand::HoldOut => {
                self.learner.hold_out();
                None
            }
            ControlCommand::Activate(active) => {
                if self.decision.set_active(active) && !active {
                    self.reference.deactivated();
                }
                None
            }
            ControlCommand::Watchdog { timeout, action } => {
                self.decision.set_watchdog(timeout, action);
                None
            }
        }
    }

    /// The learner's model-change results since the last call (for a test driving
    /// [`ControlLoop::on_state`] itself; [`ControlLoop::run`] hands them to the operations).
    /// Real-time.
    pub fn take_events(&mut self) -> std::vec::Drain<'_, crate::learn::SwapEvent> {
        self.learner.take_events()
    }
}
