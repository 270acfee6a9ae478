//! Hot swaps during a simulated run (`run.swap_every_s`, `run.swap_to`): every `swap_every_s`
//! the model changes to the next entry of the cycle [configured model, swap_to…], built and
//! warmed on the replay buffer by the learner's worker and adopted at a tick boundary. The
//! requests are built before the run (no allocation in the loop); the report says when each
//! model was ready and adopted (in ticks), how many requests found the learner busy, the late
//! ticks, and the tracking error just before and after each adoption.

use std::time::Instant;

use gpn_app::{ModelHost, SwapTarget, hosted_model_factory};
use gpn_control::control_loop::{ControlCommand, ControlReply, LoopView, Operations};
use gpn_control::learn::{
    LearnPhase, ModelChange, SwapEvent, SwapOutcome, SwapRequest, SwapSource,
};
use gpn_plugin_host::SearchPath;

use super::stats::RunStats;

/// The requests of a run, in order.
pub(super) struct SwapSchedule {
    every_s: f64,
    /// Pending requests, last one first (popped from the end).
    requests: Vec<SwapRequest>,
    /// The request that found the learner busy, retried every tick.
    waiting: Option<SwapRequest>,
    next_t: f64,
    /// Requests refused because the learner was busy (one per refusal).
    pub busy_refusals: u64,
    /// Labels of the targets by request id (1-based).
    pub labels: Vec<String>,
}

impl SwapSchedule {
    /// Requests for a run of `duration_s`, cycling `[first, targets…]` from the second entry;
    /// None without swaps.
    pub fn new(
        host: &ModelHost,
        search: &SearchPath,
        every_s: f64,
        first: &SwapTarget,
        targets: &[SwapTarget],
        duration_s: f64,
    ) -> Option<Self> {
        if every_s.is_nan() || every_s <= 0.0 || targets.is_empty() {
            return None;
        }
        let cycle: Vec<&SwapTarget> = std::iter::once(first).chain(targets).collect();
        let count = ((duration_s / every_s).ceil() as usize).saturating_sub(1);
        let mut labels = Vec::with_capacity(count);
        let mut requests = Vec::with_capacity(count);
        for i in 0..count {
            let target = cycle[(i + 1) % cycle.len()];
            labels.push(format!("{} {}", target.plugin, target.config));
            requests.push(SwapRequest {
                id: i as u64 + 1,
                source: SwapSource::Warm(hosted_model_factory(
                    host,
                    search,
                    &target.plugin,
                    &target.config,
                )),
            });
        }
        requests.reverse();
        Some(Self {
            every_s,
            requests,
            waiting: None,
            next_t: every_s,
            busy_refusals: 0,
            labels,
        })
    }

    /// The request due at time `t`, if any (a refused one is offered again every tick).
    /// The clock starts when a model is `active` (before the first fit there is nothing to
    /// swap). Real-time: no allocation.
    pub fn due(&mut self, t: f64, active: bool) -> Option<SwapRequest> {
        if !active {
            self.next_t = t + self.every_s;
            return None;
        }
        if let Some(waiting) = self.waiting.take() {
            return Some(waiting);
        }
        if t + 1e-12 >= self.next_t {
            self.next_t += self.every_s;
            return self.requests.pop();
        }
        None
    }

    /// The learner refused `request` (busy): keep it for the next tick.
    pub fn refused(&mut self, request: SwapRequest) {
        self.busy_refusals += 1;
        self.waiting = Some(request);
    }

    /// Requests planned.
    pub fn planned(&self) -> usize {
        self.labels.len()
    }
}

/// What became of one swap.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SwapRecord {
    /// Request id (1-based, in order).
    pub id: u64,
    /// Target.
    pub label: String,
    /// Adopted, or why not.
    pub outcome: String,
    /// Simulated time of adoption, s.
    pub adopted_at_s: Option<f64>,
    /// Ticks from the last tick that started before the model was ready to the adopting
    /// tick (1: adopted by the next tick).
    pub adoption_delay_ticks: Option<u64>,
    /// Seconds from request to ready (copy of the replay buffer + build + warm), wall time.
    pub build_s: Option<f64>,
    /// RMS tracking error over joints in the 0.25 s before / after the adoption, rad.
    pub rms_before_rad: Option<f64>,
    /// See `rms_before_rad`.
    pub rms_after_rad: Option<f64>,
}

/// Tick start instants kept to place a model's ready time among the ticks: about 4 s at
/// 1 kHz (a later adoption reports the delay as at least this).
const TICK_STARTS_KEPT: usize = 4096;

/// The start instants of the last ticks (a ring: the run's memory does not grow with it).
#[derive(Debug, Clone)]
pub struct TickStarts {
    starts: Vec<Instant>,
    count: usize,
}

impl TickStarts {
    /// Room for the last `kept` (≥ 1) ticks.
    pub fn new(kept: usize) -> Self {
        Self {
            starts: vec![Instant::now(); kept.max(1)],
            count: 0,
        }
    }

    /// Tick `count()` starts now.
    pub fn push(&mut self, at: Instant) {
        let kept = self.starts.len();
        self.starts[self.count % kept] = at;
        self.count += 1;
    }

    /// Ticks started.
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.count
    }

    /// When tick `k` started, if it is still kept.
    pub fn start_of(&self, k: usize) -> Option<Instant> {
        (k < self.count && self.count - k <= self.starts.len())
            .then(|| self.starts[k % self.starts.len()])
    }

    /// The last tick up to `k` that started at or before `ready`; the oldest one kept when
    /// all kept ones started after it.
    fn last_started_by(&self, k: usize, ready: Instant) -> usize {
        let last = k.min(self.count.saturating_sub(1));
        let oldest = self.count.saturating_sub(self.starts.len());
        (oldest..=last)
            .rev()
            .find(|&i| self.starts[i % self.starts.len()] <= ready)
            .unwrap_or(oldest)
    }
}

/// One adoption of a swap.
#[derive(Debug, Clone, Copy)]
pub struct SwapAdoption {
    /// Request id.
    pub id: u64,
    /// The adopting tick.
    pub tick: usize,
    /// Ticks from the last tick that started before the model was ready.
    pub delay_ticks: u64,
    /// Request → ready, s (None if the request's tick is no longer known).
    pub build_s: Option<f64>,
}

/// Raw events of a run, resolved into [`SwapRecord`]s after it.
#[derive(Debug, Clone)]
pub struct SwapLog {
    /// (id, request tick, its start) per request accepted.
    pub requested: Vec<(u64, usize, Instant)>,
    /// Adoptions.
    pub adopted: Vec<SwapAdoption>,
    /// Failures: (id, message).
    pub failed: Vec<(u64, String)>,
    /// Start instants of the last ticks.
    pub tick_starts: TickStarts,
    /// Labels by id.
    pub labels: Vec<String>,
}

impl SwapLog {
    /// Preallocated for `swaps` swaps.
    pub fn with_capacity(swaps: usize) -> Self {
        Self {
            requested: Vec::with_capacity(swaps),
            adopted: Vec::with_capacity(swaps),
            failed: Vec::with_capacity(swaps),
            tick_starts: TickStarts::new(if swaps > 0 { TICK_STARTS_KEPT } else { 1 }),
            labels: Vec::new(),
        }
    }

    /// Records the learner's event at tick `k`.
    pub fn record(&mut self, k: usize, event: SwapEvent) {
        if event.change != ModelChange::Swap {
            return;
        }
        match event.outcome {
            SwapOutcome::Adopted { ready_at, .. } => {
                let ready_tick = self.tick_starts.last_started_by(k, ready_at);
                let requested = self.requested.iter().find(|r| r.0 == event.id);
                self.adopted.push(SwapAdoption {
                    id: event.id,
                    tick: k,
                    delay_ticks: (k - ready_tick.min(k)) as u64,
                    build_s: requested.map(|r| ready_at.duration_since(r.2).as_secs_f64()),
                });
            }
            SwapOutcome::Failed(message) => self.failed.push((event.id, message)),
            SwapOutcome::FactorySet => {}
        }
    }

    /// One record per planned swap; `stats` are the run's (the tracking error around each
    /// adoption), `dt` the period.
    pub fn resolve(&self, stats: &RunStats, nv: usize, dt: f64) -> Vec<SwapRecord> {
        (0..self.labels.len() as u64)
            .map(|i| {
                let id = i + 1;
                let label = self.labels[i as usize].clone();
                if let Some(adoption) = self.adopted.iter().find(|a| a.id == id) {
                    let window = stats.adoption_at(adoption.tick);
                    SwapRecord {
                        id,
                        label,
                        outcome: "adopted".into(),
                        adopted_at_s: Some(adoption.tick as f64 * dt),
                        adoption_delay_ticks: Some(adoption.delay_ticks),
                        build_s: adoption.build_s,
                        rms_before_rad: window.and_then(|w| w.rms_before_rad),
                        rms_after_rad: window.and_then(|w| w.rms_after_rad(nv)),
                    }
                } else {
                    let requested = self.requested.iter().any(|r| r.0 == id);
                    let outcome = match self.failed.iter().find(|f| f.0 == id) {
                        Some((_, m)) => format!("failed: {m}"),
                        None if requested => "not adopted before the end".into(),
                        None => "not requested before the end".into(),
                    };
                    SwapRecord {
                        id,
                        label,
                        outcome,
                        adopted_at_s: None,
                        adoption_delay_ticks: None,
                        build_s: None,
                        rms_before_rad: None,
                        rms_after_rad: None,
                    }
                }
            })
            .collect()
    }
}

/// The operations of a simulated run, in this order at each tick: freeze η_cal's
/// calibration at the half-way tick, request the swap that is due (`run.swap_every_s`),
/// announce the payload step (`run.announce_changes`). Records what the swaps did.
pub(super) struct SimOperations {
    schedule: Option<SwapSchedule>,
    pub(super) log: SwapLog,
    ticks: u64,
    dt: f64,
    freeze_at: u64,
    announce_at: Option<f64>,
    /// The tick the stages below are for, and the next stage.
    tick: Option<u64>,
    stage: u8,
    /// The swap just requested and its tick, until the loop says whether it was accepted.
    requested: Option<(u64, usize)>,
}

impl SimOperations {
    /// For a run of period `dt`, freezing the calibration at tick `freeze_at` and announcing
    /// a change at `announce_at`, s.
    pub(super) fn new(
        schedule: Option<SwapSchedule>,
        ticks: usize,
        dt: f64,
        freeze_at: u64,
        announce_at: Option<f64>,
    ) -> Self {
        let log = SwapLog::with_capacity(schedule.as_ref().map_or(0, SwapSchedule::planned));
        Self {
            schedule,
            log,
            ticks: ticks as u64,
            dt,
            freeze_at,
            announce_at,
            tick: None,
            stage: 0,
            requested: None,
        }
    }

    /// The schedule, when swaps were planned (busy refusals, labels).
    pub(super) fn schedule(&self) -> Option<&SwapSchedule> {
        self.schedule.as_ref()
    }
}

impl Operations for SimOperations {
    fn next_command(&mut self, view: &LoopView) -> Option<ControlCommand> {
        let k = view.ticks;
        // The loop asks once more after the last tick, before the plant closes: the run is
        // over, nothing is due.
        if k >= self.ticks {
            return None;
        }
        if self.tick != Some(k) {
            self.tick = Some(k);
            self.stage = 0;
            if self.schedule.is_some() {
                self.log.tick_starts.push(Instant::now());
            }
        }
        let t = k as f64 * self.dt;
        while self.stage < 3 {
            self.stage += 1;
            match self.stage {
                1 if k == self.freeze_at => return Some(ControlCommand::FreezeCalibration),
                2 => {
                    let active = view.phase == LearnPhase::Active;
                    if let Some(request) = self.schedule.as_mut().and_then(|s| s.due(t, active)) {
                        self.requested = Some((request.id, k as usize));
                        return Some(ControlCommand::Swap(request));
                    }
                }
                3 if self.announce_at.is_some_and(|at| t >= at) => {
                    self.announce_at = None;
                    return Some(ControlCommand::AnnounceChange);
                }
                _ => {}
            }
        }
        None
    }

    fn on_applied(&mut self, reply: Option<ControlReply>) {
        let Some(requested) = self.requested.take() else {
            return;
        };
        match reply {
            None => {
                let start = self.log.tick_starts.start_of(requested.1);
                let (id, k) = requested;
                self.log
                    .requested
                    .push((id, k, start.unwrap_or_else(Instant::now)));
            }
            Some(ControlReply::Refused {
                request: Some(request),
                ..
            }) => {
                if let Some(schedule) = self.schedule.as_mut() {
                    schedule.refused(request);
                }
            }
            Some(_) => {}
        }
    }

    fn on_event(&mut self, tick: u64, event: SwapEvent) {
        self.log.record(tick as usize, event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(duration_s: f64) -> SwapSchedule {
        let target = |variant: &str| SwapTarget {
            plugin: "skygp".into(),
            config: serde_json::json!({ "variant": variant }),
        };
        let search = SearchPath::standard(Vec::<&str>::new());
        SwapSchedule::new(
            &ModelHost::InProcess,
            &search,
            0.5,
            &target("dense"),
            &[target("fast")],
            duration_s,
        )
        .expect("swaps planned")
    }

    #[test]
    fn one_tick_start_per_tick_of_the_run_though_the_loop_asks_once_more() {
        let ticks = 100;
        let mut ops = SimOperations::new(Some(schedule(0.1)), ticks, 1e-3, 50, None);
        for k in 0..=ticks as u64 {
            let view = LoopView {
                ticks: k,
                phase: LearnPhase::Collecting,
            };
            while ops.next_command(&view).is_some() {}
        }
        assert_eq!(ops.log.tick_starts.count(), ticks);
    }

    #[test]
    fn a_ready_time_is_placed_among_the_kept_tick_starts() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + std::time::Duration::from_millis(ms);
        let mut starts = TickStarts::new(4);
        for k in 0..10 {
            starts.push(at(k));
        }
        // Kept: ticks 6–9.
        assert_eq!(starts.start_of(5), None);
        assert_eq!(starts.start_of(7), Some(at(7)));
        assert_eq!(starts.last_started_by(9, at(8)), 8);
        assert_eq!(starts.last_started_by(7, at(9)), 7);
        // Ready before every kept start: the oldest kept (the delay is at least that).
        assert_eq!(starts.last_started_by(9, at(2)), 6);
    }
}
