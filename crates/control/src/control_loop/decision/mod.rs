//! The command decision: what reaches the motors, decided in one place. A state machine with
//! the priority **safe output > inactive > nominal law > learned law**:
//!
//! | mode | when | command |
//! |---|---|---|
//! | safe | joint states silent beyond the watchdog's timeout; a state that is not finite, beyond the position limits by more than the margin, faster than the velocity limit allows or that jumped (until `resume_ticks` plausible states in a row) | the watchdog's action: gravity compensation at the last plausible pose (default), zero torque, or nothing |
//! | inactive | not activated (`--autostart`, `ros.active`) | nothing (after a deactivation: the safe output first, rate-limited) |
//! | nominal | no model yet; a model fault (error, overrun, non-finite, quarantine: the supervisor inside the tick); `control.use_model` false; probation after a fallback | the computed-torque law with μ = 0 |
//! | learned | otherwise | the law with the learned residual μ |
//!
//! Transitions: learned → nominal when the learned law makes things worse ([`monitor`]:
//! tracking error beyond what the nominal law had, speed beyond the limit, implausible μ,
//! saturation streaks) — at the next tick, with an event and a counter; nominal → learned
//! only after the model passed its probation in shadow. A repeated stamp repeats the last
//! command.
//!
//! Every switch to the learned law or to a new model (adoption, swap, re-adoption,
//! activation, the end of a safe episode) blends over `control.handover_s`; a switch towards
//! safety (learned → nominal, anything → safe) does not wait for a blend. Every command —
//! safe outputs included — is bounded by the torque-rate limit ([`handover`]), by default
//! the full effort range in 20 ms. Activation
//! starts from the gravity-holding torque at the current pose (bumpless for an arm at rest
//! that its driver holds) and holds that pose until a reference arrives. A node active from
//! its first state starts from that torque too, but its first law — nominal, or a model it
//! was started with — is not a switch: only the rate limit leads to it.
//!
//! Torque convention (`control.command_convention`, `control.effort_convention`): the law
//! works in full torque; with `gravity_compensated_by_robot` the command sent is u − g(q)
//! and a measured effort τ_m is taken as τ_m + g(q), so the learning target and the bounds
//! are the same whichever the robot's interface.

mod handover;
pub mod monitor;
pub mod plausibility;

use std::time::{Duration, Instant};

use super::watchdog::{Watchdog, WatchdogVerdict};
use crate::control::{ControlError, ControlParams, TorqueConvention};
use crate::robot::Model;

pub use handover::Handover;
pub use monitor::{FallbackReason, LearnedLawMonitor, TickView, Verdict};
pub use plausibility::{ReferenceFault, ReferenceLimits, ReferenceRefusal, StateCheck, StateFault};

/// The safe output published when joint states stop (and for implausible states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WatchdogAction {
    /// Gravity compensation g(q) at the last good position, no feedback terms: the arm holds
    /// its weight and does not chase a reference it can no longer see (the default). With
    /// `gravity_compensated_by_robot` this is a zero command.
    HoldGravity,
    /// Zero command (only for arms whose brakes or hardware hold them).
    ZeroTorque,
    /// Publish nothing more (the effort controller keeps the last command it received).
    StopPublishing,
}

/// The mode of an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The safe output.
    Safe,
    /// Not commanding.
    #[default]
    Inactive,
    /// The nominal law.
    Nominal,
    /// The learned law.
    Learned,
}

impl Mode {
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Safe => "safe",
            Mode::Inactive => "inactive",
            Mode::Nominal => "nominal",
            Mode::Learned => "learned",
        }
    }
}

/// The decision's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DecisionCounts {
    /// States answered by the learned law.
    pub learned_ticks: u64,
    /// States answered by the nominal law.
    pub nominal_ticks: u64,
    /// States while inactive.
    pub inactive_ticks: u64,
    /// States answered by the safe output.
    pub safe_ticks: u64,
    /// Implausible states, per [`StateFault::index`].
    pub implausible_states: [u64; 3],
    /// Safe episodes (entries into the safe mode from a state).
    pub safe_episodes: u64,
    /// Activations.
    pub activations: u64,
    /// Fallbacks of the learned law, per [`FallbackReason::index`].
    pub fallbacks: [u64; 4],
    /// Re-adoptions after probation.
    pub readoptions: u64,
    /// The last fallback (reason, the joint that showed it if one did).
    pub last_fallback: Option<(FallbackReason, Option<usize>)>,
    /// The last implausible state (fault, joint).
    pub last_implausible: Option<(StateFault, usize)>,
    /// Sampled references refused in the loop, per [`ReferenceFault::index`].
    pub references_refused: [u64; 5],
    /// The last refused reference.
    pub last_reference_refusal: Option<ReferenceRefusal>,
    /// Blends started.
    pub handovers: u64,
    /// Commands the rate limit changed.
    pub rate_limited: u64,
    /// Largest change between two commands sent, N·m.
    pub max_command_step_nm: f64,
}

impl DecisionCounts {
    /// All fallbacks.
    pub fn total_fallbacks(&self) -> u64 {
        self.fallbacks.iter().sum()
    }

    /// Fallbacks per reason, by name.
    pub fn fallbacks_by_reason(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        FallbackReason::ALL
            .into_iter()
            .map(|r| (r.name(), self.fallbacks[r.index()]))
    }

    /// Implausible states per fault, by name.
    pub fn implausible_states_by_fault(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        StateFault::ALL
            .into_iter()
            .map(|f| (f.name(), self.implausible_states[f.index()]))
    }

    /// Sampled references refused per fault, by name.
    pub fn references_refused_by_fault(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        ReferenceFault::ALL
            .into_iter()
            .map(|f| (f.name(), self.references_refused[f.index()]))
    }
}

/// The longest the loop waits for a state before it checks the watchdog again.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// Per second, as a multiple of the effort limit: the default rate limit (the full range in
/// 20 ms).
const DEFAULT_RATE_PER_EFFORT: f64 = 50.0;

/// The decision's rules and state.
#[derive(Debug, Clone)]
pub struct CommandDecision {
    watchdog: Option<Watchdog>,
    action: WatchdogAction,
    active: bool,
    /// Activated since the last state: start from the holding torque.
    starting: bool,
    /// Activated at run time (not from the start): what the reference source queued while
    /// inactive is dropped, and the pose is held.
    restarting: bool,
    /// Active from the first state: its law, whichever it is, is not a switch (no blend).
    first_unblended: bool,
    state_check: StateCheck,
    resume_ticks: u32,
    /// The implausible state that began the safe episode in progress.
    safe: Option<StateFault>,
    plausible_streak: u32,
    reference: ReferenceLimits,
    monitor: LearnedLawMonitor,
    handover: Handover,
    command_convention: TorqueConvention,
    effort_convention: TorqueConvention,
    mode: Mode,
    /// The safe output still ramping towards its target during a silence.
    ramping: bool,
    last_command_at: Option<Instant>,
    counts: DecisionCounts,
}

impl CommandDecision {
    /// The decision for `robot` with these parameters: active, without a watchdog (a
    /// simulated plant, which is never silent).
    pub fn new(robot: &Model, params: &ControlParams) -> Result<Self, ControlError> {
        let nv = robot.nv();
        let limits = robot.limits();
        let fraction = params.effort_limit_fraction;
        let effort: Vec<f64> = limits.iter().map(|l| l.effort * fraction).collect();
        let rate = match &params.torque_rate_limits_nm_per_s {
            crate::robot::JointValues::Each(v) if v.is_empty() => {
                effort.iter().map(|e| e * DEFAULT_RATE_PER_EFFORT).collect()
            }
            // One value in a list: every joint's, as for the effort limits.
            crate::robot::JointValues::Each(v) if v.len() == 1 => vec![v[0]; nv],
            given => given.expand("torque_rate_limits_nm_per_s", nv)?,
        };
        if let Some(bad) = rate.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(ControlError::Param {
                key: "torque_rate_limits_nm_per_s",
                reason: format!("must be finite and > 0, found {bad}"),
            });
        }
        let kp = params.kp_per_s2.expand("kp_per_s2", nv)?;
        if !(params.handover_s.is_finite() && params.handover_s >= 0.0) {
            return Err(ControlError::Param {
                key: "handover_s",
                reason: format!("must be ≥ 0, found {}", params.handover_s),
            });
        }
        Ok(Self {
            watchdog: None,
            action: WatchdogAction::HoldGravity,
            active: true,
            starting: false,
            restarting: false,
            first_unblended: false,
            state_check: StateCheck::new(limits, &params.plausibility),
            resume_ticks: params.plausibility.resume_ticks.max(1),
            safe: None,
            plausible_streak: 0,
            reference: ReferenceLimits::new(limits, &effort, &params.plausibility),
            monitor: LearnedLawMonitor::new(limits, &kp, &params.fallback),
            handover: Handover::new(rate, params.handover_s, effort),
            command_convention: params.command_convention,
            effort_convention: params.effort_convention,
            mode: Mode::Nominal,
            ramping: false,
            last_command_at: None,
            counts: DecisionCounts::default(),
        })
    }

    /// With a watchdog and its safe output (a robot).
    pub fn with_watchdog(mut self, watchdog: Watchdog, action: WatchdogAction) -> Self {
        self.watchdog = Some(watchdog);
        self.action = action;
        self
    }

    /// The first state (when active from the start) begins from the torque that holds the
    /// arm at its pose, as an activation does: a robot, whose driver holds it until then. (A
    /// simulated robot starts from nothing: its first command is the law's.) Only the rate
    /// limit leads from it to the first law's command, the nominal law's or a warm-started
    /// model's alike: the first law is not a switch, so it does not blend (a blend held a
    /// warm model's first 50 ms near the holding torque while the arm moved on).
    pub fn bumpless_start(mut self) -> Self {
        self.starting = true;
        self.first_unblended = true;
        self
    }

    /// Starts inactive (commanding nothing until activated).
    pub fn inactive(mut self) -> Self {
        self.active = false;
        self.mode = Mode::Inactive;
        self
    }

    /// Whether the node commands.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Activates (from the next state: the holding torque at the current pose, then the
    /// law, blended) or deactivates. Returns true if the state changed.
    pub fn set_active(&mut self, active: bool) -> bool {
        if active == self.active {
            return false;
        }
        self.active = active;
        if active {
            self.starting = true;
            self.restarting = true;
            self.counts.activations += 1;
        } else {
            // A forward command controller keeps the last command: end with the safe output
            // (rate-limited), then command nothing.
            self.mode = Mode::Inactive;
            self.ramping =
                self.last_command_at.is_some() && self.action != WatchdogAction::StopPublishing;
        }
        true
    }

    /// Whether the safe output is still ramping to its target (a silence, or a
    /// deactivation): the caller commands the next step of it.
    pub fn ramping(&self) -> bool {
        self.ramping
    }

    /// Whether the next state is the first after activation (the caller starts the
    /// hand-over from the holding torque), and whether it was an activation at run time (the
    /// caller also drops what the reference source queued while inactive and holds the
    /// pose; a node active from the start follows what was sent to it before its first
    /// state, e.g. a latched reference).
    pub fn take_start(&mut self) -> (bool, bool) {
        (
            std::mem::take(&mut self.starting),
            std::mem::take(&mut self.restarting),
        )
    }

    /// The mode of the last output.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Counters.
    pub fn counts(&self) -> DecisionCounts {
        let mut c = self.counts;
        c.handovers = self.handover.blends;
        c.rate_limited = self.handover.rate_limited;
        c.max_command_step_nm = self.handover.max_step_nm;
        c
    }

    /// The command convention.
    pub fn command_convention(&self) -> TorqueConvention {
        self.command_convention
    }

    /// The measured effort's convention.
    pub fn effort_convention(&self) -> TorqueConvention {
        self.effort_convention
    }

    /// The reference validator.
    pub fn reference_limits(&self) -> &ReferenceLimits {
        &self.reference
    }

    /// Whether the model is on probation (predicts in shadow; the nominal law commands).
    pub fn shadow(&self) -> bool {
        self.monitor.on_probation()
    }

    /// A valid new state arrived at `now`.
    pub fn on_state(&mut self, now: Instant) {
        if let Some(w) = self.watchdog.as_mut() {
            w.feed(now);
        }
        // The law answers the state (a deactivation's ramp goes on).
        if self.active {
            self.ramping = false;
        }
    }

    /// Judges the state (q, q̇) at `t_secs`: Err (the fault of the episode) while the safe
    /// output must answer (an implausible state, and until `resume_ticks` plausible ones
    /// follow it).
    pub fn check_state(&mut self, t_secs: f64, q: &[f64], v: &[f64]) -> Result<(), StateFault> {
        match self.state_check.check(t_secs, q, v) {
            Err((fault, joint)) => {
                self.counts.implausible_states[fault.index()] += 1;
                self.counts.last_implausible = Some((fault, joint));
                self.plausible_streak = 0;
                if self.safe.is_none() {
                    self.counts.safe_episodes += 1;
                }
                self.safe = Some(fault);
                Err(fault)
            }
            Ok(()) => match self.safe {
                Some(reason) => {
                    self.plausible_streak += 1;
                    if self.plausible_streak >= self.resume_ticks {
                        self.safe = None;
                        Ok(())
                    } else {
                        Err(reason)
                    }
                }
                None => Ok(()),
            },
        }
    }

    /// Counts a sampled reference the validator refused.
    pub fn count_reference_refusal(&mut self, refusal: ReferenceRefusal) {
        self.counts.references_refused[refusal.fault.index()] += 1;
        self.counts.last_reference_refusal = Some(refusal);
    }

    /// After a tick that ran the law: the monitor judges it (a fallback or re-adoption takes
    /// effect at the next tick). Returns the verdict.
    pub fn after_tick(&mut self, view: &TickView<'_>) -> Verdict {
        let verdict = self.monitor.on_tick(view);
        match verdict {
            Verdict::FallBack(reason, joint) => {
                self.counts.fallbacks[reason.index()] += 1;
                self.counts.last_fallback = Some((reason, joint));
            }
            Verdict::Readopt => self.counts.readoptions += 1,
            Verdict::Keep => {}
        }
        verdict
    }

    /// Starts the hand-over history from `u` (activation: the holding torque, as sent).
    pub fn start_from(&mut self, u: &[f64]) {
        self.handover.start_from(u);
    }

    /// The command to send in `mode` for the law's `u` (sent convention, changed in place),
    /// `elapsed_s` after the previous state; `switched` says a new model was adopted;
    /// `gravity` is g(q) when the robot adds it to the command (see [`Handover::apply`]).
    pub fn finish(
        &mut self,
        mode: Mode,
        switched: bool,
        u: &mut [f64],
        elapsed_s: f64,
        now: Instant,
        gravity: Option<&[f64]>,
    ) {
        let first = std::mem::take(&mut self.first_unblended);
        match mode {
            // Towards safety no blend holds the old command: only the rate limit.
            Mode::Safe => self.handover.cancel_blend(),
            Mode::Nominal if self.mode == Mode::Learned => self.handover.cancel_blend(),
            // The first law of a node active from the start (see `bumpless_start`).
            _ if first => {}
            _ if mode != self.mode || switched => self.handover.begin_blend(u),
            _ => {}
        }
        self.handover.apply(u, elapsed_s, gravity);
        match mode {
            Mode::Learned => self.counts.learned_ticks += 1,
            Mode::Nominal => self.counts.nominal_ticks += 1,
            Mode::Safe => self.counts.safe_ticks += 1,
            Mode::Inactive => self.counts.inactive_ticks += 1,
        }
        self.mode = mode;
        self.last_command_at = Some(now);
    }

    /// A state while inactive.
    pub fn idle(&mut self) {
        self.counts.inactive_ticks += 1;
        self.mode = Mode::Inactive;
    }

    /// Nothing arrived until `now`: the safe output to command, if the watchdog trips or the
    /// last one is still ramping to its target (see [`CommandDecision::ramp_safe`]).
    pub fn on_silence(&mut self, now: Instant) -> Option<WatchdogAction> {
        if !self.active {
            return self.ramping.then_some(self.action);
        }
        let w = self.watchdog.as_mut()?;
        let trip = w.check(now) == WatchdogVerdict::Trip;
        (trip || self.ramping).then_some(self.action)
    }

    /// The safe output `target` (sent convention) during a silence, rate-limited from the
    /// last command, into `u`; keeps ramping at the tick period until it is reached.
    pub fn ramp_safe(&mut self, target: &[f64], u: &mut [f64], now: Instant) {
        u.copy_from_slice(target);
        let elapsed = self
            .last_command_at
            .map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
        self.handover.cancel_blend();
        self.handover.apply(u, elapsed, None);
        self.ramping = !self.handover.reached(target);
        self.mode = if self.active || self.ramping {
            Mode::Safe
        } else {
            Mode::Inactive
        };
        self.last_command_at = Some(now);
    }

    /// How long the loop may wait for the next state.
    pub fn deadline(&self, now: Instant) -> Duration {
        let watchdog = self
            .watchdog
            .as_ref()
            .map_or(MAX_WAIT, |w| w.next_deadline(now));
        let ramp = if self.ramping {
            Duration::from_millis(1)
        } else {
            MAX_WAIT
        };
        watchdog.min(ramp).min(MAX_WAIT)
    }

    /// New watchdog timeout and action (a robot's; ignored without a watchdog).
    pub fn set_watchdog(&mut self, timeout: Duration, action: WatchdogAction) {
        if let Some(w) = self.watchdog.as_mut() {
            w.set_timeout(timeout);
            self.action = action;
        }
    }

    /// The safe output.
    pub fn action(&self) -> WatchdogAction {
        self.action
    }

    /// The watchdog, if the plant can fall silent.
    pub fn watchdog(&self) -> Option<&Watchdog> {
        self.watchdog.as_ref()
    }
}
