//! The loop's outputs: one [`LoopOutput`] per tick (and per repeat or safe output), handed
//! to every [`OutputListener`] — the ROS publishers, rerun, the simulation report and
//! recorder. Listeners see only this value; none reaches into the learner.

use std::time::Instant;

use gpn_gp_core::model::ModelStats;

use super::decision::{DecisionCounts, Mode, Verdict};
use super::plant::Truth;
use crate::control::{SupervisorCounts, TickStatus};
use crate::learn::{ChangeNotice, LearnCounts, LearnPhase};

/// What an output answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutKind {
    /// A tick ran: the command (unless observe-only) and the estimate.
    Tick,
    /// A repeated stamp: the last command again, no estimate.
    Republish,
    /// The watchdog tripped: the safe output (written unless the action is to stop).
    Safe,
}

/// Counters (copied into every output).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoopCounters {
    /// Ticks run.
    pub ticks: u64,
    /// Ticks whose law used the model on every joint.
    pub learned_ticks: u64,
    /// Ticks the tick refused as bad input.
    pub bad_input: u64,
    /// States with the last stamp again.
    pub repeated: u64,
    /// Safe outputs commanded by the watchdog.
    pub watchdog_trips: u64,
    /// Silences that reached the watchdog timeout.
    pub watchdog_episodes: u64,
    /// Whether states are stale now.
    pub stale: bool,
    /// A reference trajectory is in force.
    pub tracking_trajectory: bool,
    /// Models adopted.
    pub adoptions: u64,
    /// Ticks whose command hit an effort limit on some joint.
    pub saturated_ticks: u64,
    /// Supervisor counters.
    pub supervisor: SupervisorCounts,
    /// The command decision's counters.
    pub decision: DecisionCounts,
    /// Whether the node commands (activated).
    pub active: bool,
    /// Who commanded the last output.
    pub law: Mode,
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

/// Changes of the dynamics one output carries at most (more in one tick are counted in
/// [`LoopCounters::changes`] but not listed).
pub const CHANGES_PER_TICK: usize = 4;

/// One output of the loop (buffers allocated once by [`LoopOutput::new`], reused).
#[derive(Debug, Clone)]
pub struct LoopOutput {
    /// What it answers.
    pub kind: OutKind,
    /// Who commanded: the safe output, nobody (inactive), the nominal or the learned law.
    pub mode: Mode,
    /// What the learned-law monitor decided at this tick (a fallback or re-adoption takes
    /// effect at the next one).
    pub verdict: Verdict,
    /// Ticks run before this one (the tick's index for `Tick` outputs).
    pub tick: u64,
    /// Newer states were already queued: this tick's command was superseded and not
    /// written (ROS publishes only the newest answer of a burst).
    pub superseded: bool,
    /// Time of the state answered on the node's timeline, s (for `Safe`: of the last good
    /// one).
    pub t_secs: f64,
    /// Its stamp on the sender's clock, s.
    pub stamp_secs: f64,
    /// When that state was received (in → out latency).
    pub received: Instant,
    /// Command as sent, N·m (model joint order; the command convention: with
    /// `gravity_compensated_by_robot`, without g(q)).
    pub u: Vec<f64>,
    /// τ_RBD(q, q̇, q̈_cmd), N·m.
    pub tau_rbd: Vec<f64>,
    /// Commanded acceleration, rad/s².
    pub qdd_cmd: Vec<f64>,
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
    /// The tick's status (`Tick` outputs).
    pub status: Option<TickStatus>,
    /// Model counters, if a model is active.
    pub stats: Option<ModelStats>,
    /// Theorem-2 tracking bound.
    pub tracking_bound: f64,
    /// Counters after this output.
    pub counters: LoopCounters,
    /// The last change of the dynamics noticed at this tick.
    pub change: Option<ChangeNotice>,
    /// All changes noticed at this tick (at most [`CHANGES_PER_TICK`]).
    pub changes: [Option<ChangeNotice>; CHANGES_PER_TICK],
    /// Measured position, rad.
    pub q: Vec<f64>,
    /// Reference position, rad.
    pub q_d: Vec<f64>,
    /// Whether the learner formed a learning sample at this tick (in `sample_x`,
    /// `sample_y`).
    pub has_sample: bool,
    /// The learning sample's input [q, q̇, q̈] of the interval that just ended.
    pub sample_x: Vec<f64>,
    /// Its target (the residual the learner saw), N·m.
    pub sample_y: Vec<f64>,
    /// Whether the plant knew the truth at this tick (a simulator; in `truth`).
    pub has_truth: bool,
    /// The plant's ground truth at this tick.
    pub truth: Truth,
}

impl LoopOutput {
    /// A zeroed output for `nv` joints.
    pub fn new(nv: usize) -> Self {
        let z = || vec![0.0; nv];
        Self {
            kind: OutKind::Tick,
            mode: Mode::Inactive,
            verdict: Verdict::Keep,
            tick: 0,
            superseded: false,
            t_secs: 0.0,
            stamp_secs: 0.0,
            received: Instant::now(),
            u: z(),
            tau_rbd: z(),
            qdd_cmd: z(),
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
            changes: [None; CHANGES_PER_TICK],
            q: z(),
            q_d: z(),
            has_sample: false,
            sample_x: vec![0.0; 3 * nv],
            sample_y: z(),
            has_truth: false,
            truth: Truth::new(nv),
        }
    }

    /// The changes noticed at this tick.
    pub fn changes(&self) -> impl Iterator<Item = &ChangeNotice> {
        self.changes.iter().flatten()
    }

    /// Copies `other` in (same joint count). Real-time: no allocation.
    pub fn copy_from(&mut self, other: &LoopOutput) {
        self.kind = other.kind;
        self.mode = other.mode;
        self.verdict = other.verdict;
        self.tick = other.tick;
        self.superseded = other.superseded;
        self.t_secs = other.t_secs;
        self.stamp_secs = other.stamp_secs;
        self.received = other.received;
        for (to, from) in [
            (&mut self.u, &other.u),
            (&mut self.tau_rbd, &other.tau_rbd),
            (&mut self.qdd_cmd, &other.qdd_cmd),
            (&mut self.mu, &other.mu),
            (&mut self.sigma, &other.sigma),
            (&mut self.eta, &other.eta),
            (&mut self.eta_thm, &other.eta_thm),
            (&mut self.q, &other.q),
            (&mut self.q_d, &other.q_d),
            (&mut self.sample_x, &other.sample_x),
            (&mut self.sample_y, &other.sample_y),
        ] {
            to.copy_from_slice(from);
        }
        self.fallback.copy_from_slice(&other.fallback);
        self.status = other.status;
        self.stats = other.stats;
        self.tracking_bound = other.tracking_bound;
        self.counters = other.counters;
        self.change = other.change;
        self.changes = other.changes;
        self.has_sample = other.has_sample;
        self.has_truth = other.has_truth;
        self.truth.copy_from(&other.truth);
    }
}

/// Takes the loop's outputs. Called on the control thread: real-time for a robot (hand the
/// output to another thread through a preallocated pool; never block).
pub trait OutputListener {
    /// One output.
    fn on_output(&mut self, out: &LoopOutput);
}
