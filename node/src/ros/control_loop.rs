//! The node's control loop without transport: joint-state frames in, command and estimate
//! frames out. It owns the tick, the learner, the reference and the watchdog; the ROS
//! adapter (`transport`) feeds it and publishes what it returns, and tests drive it
//! directly.
//!
//! Per frame (timed by the stream's [`super::StampClock`], which refuses out-of-order and
//! implausible stamps before they get here): a repeated stamp republishes the last command
//! without ticking (a lock-step driver re-sending a state it got no answer to); a new one
//! feeds the watchdog, samples the reference and runs the tick. In learn mode the query
//! point is the measured state (reference = measurement, q̈_d = the latest q̈ estimate, one
//! tick old), so μ estimates the residual acting now, and no command is produced. Real-time: no allocation, lock or I/O after construction.

use std::time::Instant;

use gpn_gp_core::model::ModelStats;

use super::joint_state::{StateFrame, TorqueOrigin};
use super::stamp_clock::Timing;
use super::trajectory::{Reference, Trajectory};
use super::watchdog::{Watchdog, WatchdogVerdict};
use crate::app::ros_params::{Mode, WatchdogAction};
use crate::control::{
    ControlLaw, SupervisorCounts, SupervisorParams, Tick, TickInput, TickOutput, TickResult,
    TickStatus,
};
use crate::learn::{
    CancelOutcome, ChangeNotice, GateParams, LearnCounts, LearnPhase, Learner, ModelSnapshot,
    SwapEvent, SwapRefusal, SwapRequest,
};

/// What an [`OutFrame`] asks the publisher to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutKind {
    /// A tick ran: publish the command (control mode) and the estimate.
    Tick,
    /// A repeated stamp: publish the last command again, no estimate.
    Republish,
    /// The watchdog tripped: publish the safe output (unless the action is to stop).
    Safe,
}

/// Counters for diagnostics (copied into every frame).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoopCounters {
    /// Ticks run.
    pub ticks: u64,
    /// Ticks whose law used the model on every joint.
    pub learned_ticks: u64,
    /// Ticks the tick refused as bad input.
    pub bad_input: u64,
    /// Frames with the last stamp again.
    pub repeated: u64,
    /// Safe outputs published by the watchdog.
    pub watchdog_trips: u64,
    /// Silences that reached the watchdog timeout.
    pub watchdog_episodes: u64,
    /// Whether joint states are stale now.
    pub stale: bool,
    /// A reference trajectory is in force.
    pub tracking_trajectory: bool,
    /// Models adopted.
    pub adoptions: u64,
    /// Ticks whose command hit an effort limit on some joint.
    pub saturated_ticks: u64,
    /// Supervisor counters.
    pub supervisor: SupervisorCounts,
    /// Learner counters.
    pub learn: LearnCounts,
    /// Learner phase.
    pub phase: Option<LearnPhase>,
    /// Coverage of ±η_cal over the learner's recent window.
    pub coverage: Option<f64>,
    /// Changes of the dynamics detected or announced.
    pub changes: u64,
    /// The last one.
    pub last_change: Option<ChangeNotice>,
}

/// One output of the loop (buffers allocated once, reused through the pool).
#[derive(Debug, Clone)]
pub struct OutFrame {
    /// What to do.
    pub kind: OutKind,
    /// Time of the joint state answered on the node's timeline, s (for `Safe`: of the last
    /// good one).
    pub t_secs: f64,
    /// Its stamp on the sender's clock, s.
    pub stamp_secs: f64,
    /// When that joint state was received (in → out latency).
    pub received: Instant,
    /// Command, N·m (model joint order).
    pub u: Vec<f64>,
    /// Residual used in the law, N·m.
    pub mu: Vec<f64>,
    /// Posterior standard deviation, N·m.
    pub sigma: Vec<f64>,
    /// η_cal, N·m.
    pub eta: Vec<f64>,
    /// η_thm, N·m.
    pub eta_thm: Vec<f64>,
    /// Joints on the nominal law.
    pub fallback: Vec<bool>,
    /// The tick's status (`Tick` frames).
    pub status: Option<TickStatus>,
    /// Model counters, if a model is active.
    pub stats: Option<ModelStats>,
    /// Theorem-2 tracking bound.
    pub tracking_bound: f64,
    /// Loop counters after this frame.
    pub counters: LoopCounters,
    /// A change of the dynamics noticed at this frame's tick.
    pub change: Option<ChangeNotice>,
    /// Measured position and reference position (for diagnostics and logging), rad.
    pub q: Vec<f64>,
    /// Reference position, rad.
    pub q_d: Vec<f64>,
}

impl OutFrame {
    /// A zeroed frame for `nv` joints.
    pub fn new(nv: usize) -> Self {
        let z = || vec![0.0; nv];
        Self {
            kind: OutKind::Tick,
            t_secs: 0.0,
            stamp_secs: 0.0,
            received: Instant::now(),
            u: z(),
            mu: z(),
            sigma: z(),
            eta: z(),
            eta_thm: z(),
            fallback: vec![false; nv],
            status: None,
            stats: None,
            tracking_bound: f64::NAN,
            counters: LoopCounters::default(),
            change: None,
            q: z(),
            q_d: z(),
        }
    }
}

impl OutFrame {
    /// Copies `other` in (same joint count). Real-time: no allocation.
    pub fn copy_from(&mut self, other: &OutFrame) {
        self.kind = other.kind;
        self.t_secs = other.t_secs;
        self.stamp_secs = other.stamp_secs;
        self.received = other.received;
        self.u.copy_from_slice(&other.u);
        self.mu.copy_from_slice(&other.mu);
        self.sigma.copy_from_slice(&other.sigma);
        self.eta.copy_from_slice(&other.eta);
        self.eta_thm.copy_from_slice(&other.eta_thm);
        self.fallback.copy_from_slice(&other.fallback);
        self.status = other.status;
        self.stats = other.stats;
        self.tracking_bound = other.tracking_bound;
        self.counters = other.counters;
        self.change = other.change;
        self.q.copy_from_slice(&other.q);
        self.q_d.copy_from_slice(&other.q_d);
    }
}

/// A change the node's operations ask of the loop, applied between ticks.
pub enum ControlCommand {
    /// Change the model (a swap or a loaded model).
    Swap(SwapRequest),
    /// Cancel the model change `id` if it is still in progress (its caller gave up).
    CancelSwap {
        /// The change's id.
        id: u64,
    },
    /// Forget what was learned.
    Reset {
        /// Keep the hyperparameters (a fresh model) or fit them again.
        keep_hyperparameters: bool,
        /// Caller's id.
        id: u64,
    },
    /// Serialise the running model (allocates: done between ticks, timed).
    Save {
        /// Caller's id.
        id: u64,
    },
    /// A new control law (gains, effort limits), built off the control thread.
    Law(Box<ControlLaw>),
    /// Use the learned residual in the law, or not.
    UseModel(bool),
    /// Supervisor settings.
    Supervisor(SupervisorParams),
    /// Gate settings.
    Gate(GateParams),
    /// Learn every n-th admitted sample.
    AdmitEvery(u32),
    /// The dynamics changed now (a payload picked up): react as configured.
    AnnounceChange,
    /// Watchdog timeout and action.
    Watchdog {
        /// Timeout.
        timeout: std::time::Duration,
        /// Action.
        action: WatchdogAction,
    },
}

/// What the loop answers (sent back to the operations thread).
pub enum ControlReply {
    /// A model change finished (adopted, failed, or the factory was set).
    Event(SwapEvent),
    /// A model change was refused at once; the request comes back to be dropped off the
    /// control thread.
    Refused {
        /// Caller's id.
        id: u64,
        /// The request, if it could be given back.
        request: Option<SwapRequest>,
        /// Why.
        why: SwapRefusal,
    },
    /// A reset was accepted or refused.
    Reset {
        /// Caller's id.
        id: u64,
        /// Result.
        result: Result<(), SwapRefusal>,
    },
    /// The running model's snapshot (or why there is none) and how long the control thread
    /// spent on it, µs.
    Saved {
        /// Caller's id.
        id: u64,
        /// The snapshot.
        result: Result<Box<ModelSnapshot>, String>,
        /// Time the control thread spent serialising.
        blocked_micros: f64,
    },
    /// The law that was replaced, to be dropped off the control thread.
    OldLaw(Box<ControlLaw>),
    /// What became of a cancelled model change.
    SwapCancel {
        /// The change's id.
        id: u64,
        /// Cancelled, or how it had already ended.
        outcome: CancelOutcome,
    },
}

/// What happened to a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Handled {
    /// Ticked; the out frame holds the result.
    Ticked(TickStatus),
    /// Same stamp as the last tick: the out frame repeats the last command.
    Repeated,
}

/// The loop.
pub struct ControlLoop {
    tick: Tick,
    learner: Learner,
    reference: Reference,
    watchdog: Watchdog,
    mode: Mode,
    action: WatchdogAction,
    out: TickOutput,
    tau: Vec<f64>,
    last_u: Vec<f64>,
    has_command: bool,
    last_t: Option<f64>,
    /// The stamp clock's shift at the last state (sender's stamps → node time).
    shift_secs: f64,
    qdd_now: Vec<f64>,
    counters: LoopCounters,
}

impl ControlLoop {
    /// A loop over `tick` and `learner` in `mode`, the watchdog started at `now`.
    pub fn new(
        tick: Tick,
        learner: Learner,
        mode: Mode,
        watchdog: Watchdog,
        action: WatchdogAction,
    ) -> Self {
        let nv = tick.nv();
        Self {
            tick,
            learner,
            reference: Reference::new(nv),
            watchdog,
            mode,
            action,
            out: TickOutput::new(nv),
            tau: vec![0.0; nv],
            last_u: vec![0.0; nv],
            has_command: false,
            last_t: None,
            shift_secs: 0.0,
            qdd_now: vec![0.0; nv],
            counters: LoopCounters::default(),
        }
    }

    /// Joints.
    pub fn nv(&self) -> usize {
        self.tick.nv()
    }

    /// The learner (read-only: counters, replay buffer).
    pub fn learner(&self) -> &Learner {
        &self.learner
    }

    /// Counters so far.
    pub fn counters(&self) -> LoopCounters {
        let mut c = self.counters;
        c.supervisor = self.tick.supervisor_counts();
        c.learn = self.learner.counts();
        c.phase = Some(self.learner.phase());
        c.watchdog_trips = self.watchdog.trips();
        c.watchdog_episodes = self.watchdog.episodes();
        c.stale = self.watchdog.is_stale();
        c.tracking_trajectory = self.reference.has_trajectory();
        c.coverage = self.learner.coverage();
        c.changes = self.learner.changes();
        c
    }

    /// The watchdog (for the wait deadline).
    pub fn watchdog(&self) -> &Watchdog {
        &self.watchdog
    }

    /// Switches the reference to `trajectory` at the last tick's time; returns the previous
    /// one for dropping off the control thread.
    pub fn switch_reference(&mut self, mut trajectory: Box<Trajectory>) -> Option<Box<Trajectory>> {
        trajectory.shift_start(-self.shift_secs);
        self.reference.switch(trajectory)
    }

    /// Handles one joint-state frame received at `now`, writing what to publish into `out`.
    pub fn on_state(&mut self, frame: &StateFrame, now: Instant, out: &mut OutFrame) -> Handled {
        if frame.timing == Timing::Repeat {
            self.counters.repeated += 1;
            self.fill_common(frame, out);
            out.kind = OutKind::Republish;
            out.u.copy_from_slice(&self.last_u);
            return Handled::Repeated;
        }
        self.shift_secs = frame.shift_secs();
        self.watchdog.feed(now);
        match frame.tau_origin {
            TorqueOrigin::Given => self.tau.copy_from_slice(&frame.tau),
            TorqueOrigin::OwnCommand => self.tau.copy_from_slice(&self.last_u),
        }
        let status = match self.mode {
            Mode::Control => {
                let (q_d, qd_d, qdd_d) = self.reference.sample(frame.t_secs, &frame.q);
                let input = TickInput {
                    t_secs: frame.t_secs,
                    q: &frame.q,
                    v: &frame.v,
                    tau: &self.tau,
                    q_d,
                    qd_d,
                    qdd_d,
                };
                out.q_d.copy_from_slice(q_d);
                self.tick.step(&input, &mut self.learner, &mut self.out)
            }
            Mode::Learn => {
                let input = TickInput {
                    t_secs: frame.t_secs,
                    q: &frame.q,
                    v: &frame.v,
                    tau: &self.tau,
                    q_d: &frame.q,
                    qd_d: &frame.v,
                    qdd_d: &self.qdd_now,
                };
                out.q_d.copy_from_slice(&frame.q);
                let status = self.tick.step(&input, &mut self.learner, &mut self.out);
                if let Some((x, _)) = self.learner.last_sample() {
                    let nv = self.qdd_now.len();
                    self.qdd_now.copy_from_slice(&x[2 * nv..3 * nv]);
                }
                status
            }
        };
        self.last_t = Some(frame.t_secs);
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
        if self.mode == Mode::Control {
            self.last_u.copy_from_slice(&self.out.u);
            self.has_command = true;
        }
        self.fill_common(frame, out);
        out.kind = OutKind::Tick;
        out.u.copy_from_slice(&self.out.u);
        out.mu.copy_from_slice(&self.out.mu);
        out.sigma.copy_from_slice(&self.out.sigma);
        out.eta.copy_from_slice(&self.out.eta_cal);
        out.eta_thm.copy_from_slice(&self.out.eta_thm);
        let all_nominal = matches!(status.result, TickResult::Nominal(f) if f != crate::control::Fallback::NonFinite)
            || status.result == TickResult::BadInput;
        for (j, fb) in out.fallback.iter_mut().enumerate() {
            *fb = all_nominal || !self.out.sigma[j].is_finite();
        }
        out.status = Some(status);
        for notice in self.learner.take_change_notices() {
            out.change = Some(notice);
            self.counters.last_change = Some(notice);
        }
        out.stats = self.learner.model_stats();
        out.tracking_bound = self.out.tracking_bound;
        out.counters = self.counters();
        Handled::Ticked(status)
    }

    fn fill_common(&self, frame: &StateFrame, out: &mut OutFrame) {
        out.change = None;
        out.t_secs = frame.t_secs;
        out.stamp_secs = frame.stamp_secs;
        out.received = frame.received;
        out.q.copy_from_slice(&frame.q);
        out.status = None;
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
                let result = self.learner.snapshot().map(Box::new);
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
            ControlCommand::Watchdog { timeout, action } => {
                self.watchdog.set_timeout(timeout);
                self.action = action;
                None
            }
        }
    }

    /// The learner's model-change results since the last call. Real-time.
    pub fn take_events(&mut self) -> std::vec::Drain<'_, SwapEvent> {
        self.learner.take_events()
    }

    /// No joint state arrived before the deadline: checks the watchdog at `now` and, when it
    /// trips, writes the safe output into `out` and returns true (publish it).
    pub fn on_silence(&mut self, now: Instant, out: &mut OutFrame) -> bool {
        if self.watchdog.check(now) != WatchdogVerdict::Trip {
            return false;
        }
        match self.action {
            WatchdogAction::HoldGravity => self.tick.hold_gravity(&mut self.out),
            WatchdogAction::ZeroTorque | WatchdogAction::StopPublishing => self.out.u.fill(0.0),
        }
        if self.mode == Mode::Control && self.action != WatchdogAction::StopPublishing {
            self.last_u.copy_from_slice(&self.out.u);
        }
        out.kind = OutKind::Safe;
        out.change = None;
        out.t_secs = self.last_t.unwrap_or(0.0);
        out.stamp_secs = out.t_secs + self.shift_secs;
        out.received = now;
        out.u.copy_from_slice(&self.out.u);
        out.status = None;
        out.counters = self.counters();
        true
    }
}
