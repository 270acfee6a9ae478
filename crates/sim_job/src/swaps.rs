//! Hot swaps during a simulated run (`run.swap_every_s`, `run.swap_to`): every `swap_every_s`
//! the model changes to the next entry of the cycle [configured model, swap_to…], built and
//! warmed on the replay buffer by the learner's worker and adopted at a tick boundary. The
//! requests are built before the run (no allocation in the loop); the report says when each
//! model was ready and adopted (in ticks), how many requests found the learner busy, the late
//! ticks, and the tracking error just before and after each adoption.

use std::time::Instant;

use gpn_app::{SwapTarget, model_factory};
use gpn_control::control_loop::{ControlCommand, ControlReply, LoopView, Operations};
use gpn_control::learn::{
    LearnPhase, ModelChange, SwapEvent, SwapOutcome, SwapRequest, SwapSource,
};
use gpn_plugin_host::SearchPath;

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
                source: SwapSource::Warm(model_factory(search, &target.plugin, &target.config)),
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

/// Raw events of a run, resolved into [`SwapRecord`]s after it.
#[derive(Debug, Clone, Default)]
pub struct SwapLog {
    /// (id, request tick) per request accepted.
    pub requested: Vec<(u64, usize)>,
    /// (id, adopting tick, ready instant) per adoption; (id, tick, message) per failure.
    pub adopted: Vec<(u64, usize, Instant)>,
    /// Failures.
    pub failed: Vec<(u64, String)>,
    /// Tick start instants.
    pub tick_started: Vec<Instant>,
    /// Labels by id.
    pub labels: Vec<String>,
}

impl SwapLog {
    /// Preallocated for `ticks` ticks and `swaps` swaps.
    pub fn with_capacity(ticks: usize, swaps: usize) -> Self {
        Self {
            requested: Vec::with_capacity(swaps),
            adopted: Vec::with_capacity(swaps),
            failed: Vec::with_capacity(swaps),
            tick_started: Vec::with_capacity(ticks),
            labels: Vec::new(),
        }
    }

    /// Records the learner's event at tick `k`.
    pub fn record(&mut self, k: usize, event: SwapEvent) {
        if event.change != ModelChange::Swap {
            return;
        }
        match event.outcome {
            SwapOutcome::Adopted { ready_at, .. } => self.adopted.push((event.id, k, ready_at)),
            SwapOutcome::Failed(message) => self.failed.push((event.id, message)),
            SwapOutcome::FactorySet => {}
        }
    }

    /// One record per planned swap; `error_rad` is the run's tracking error (tick-major,
    /// `nv` per tick), `dt` the period.
    pub fn resolve(&self, error_rad: &[f64], nv: usize, dt: f64) -> Vec<SwapRecord> {
        let ticks = self.tick_started.len().min(error_rad.len() / nv.max(1));
        let window = (0.25 / dt).round() as usize;
        let rms = |from: usize, to: usize| -> Option<f64> {
            (to > from && to <= ticks).then(|| {
                let slice = &error_rad[from * nv..to * nv];
                (slice.iter().map(|e| e * e).sum::<f64>() / slice.len() as f64).sqrt()
            })
        };
        (0..self.labels.len() as u64)
            .map(|i| {
                let id = i + 1;
                let label = self.labels[i as usize].clone();
                let requested = self.requested.iter().find(|r| r.0 == id).map(|r| r.1);
                if let Some(&(_, k, ready)) = self.adopted.iter().find(|a| a.0 == id) {
                    // The last tick that started before the model was ready.
                    let ready_tick = self.tick_started[..=k.min(ticks - 1)]
                        .iter()
                        .rposition(|t| *t <= ready)
                        .unwrap_or(0);
                    SwapRecord {
                        id,
                        label,
                        outcome: "adopted".into(),
                        adopted_at_s: Some(k as f64 * dt),
                        adoption_delay_ticks: Some((k - ready_tick.min(k)) as u64),
                        build_s: requested
                            .map(|r| ready.duration_since(self.tick_started[r]).as_secs_f64()),
                        rms_before_rad: rms(k.saturating_sub(window), k),
                        rms_after_rad: rms(k, (k + window).min(ticks)),
                    }
                } else {
                    let outcome = match self.failed.iter().find(|f| f.0 == id) {
                        Some((_, m)) => format!("failed: {m}"),
                        None if requested.is_some() => "not adopted before the end".into(),
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
        let log = SwapLog::with_capacity(
            if schedule.is_some() { ticks } else { 0 },
            schedule.as_ref().map_or(0, SwapSchedule::planned),
        );
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
                self.log.tick_started.push(Instant::now());
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
            None => self.log.requested.push(requested),
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
        assert_eq!(ops.log.tick_started.len(), ticks);
    }

    #[test]
    fn a_swap_adopted_at_the_last_tick_is_resolved_within_the_run() {
        let (ticks, nv) = (1000, 7);
        let start = Instant::now();
        let log = SwapLog {
            requested: vec![(1, ticks - 10)],
            adopted: vec![(1, ticks - 1, start)],
            failed: Vec::new(),
            // One start too many must not reach past the tracking error's end.
            tick_started: vec![start; ticks + 1],
            labels: vec!["skygp".into()],
        };
        let records = log.resolve(&vec![1e-3; ticks * nv], nv, 1e-3);
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].outcome, "adopted");
        assert!((records[0].rms_after_rad.expect("one tick after") - 1e-3).abs() < 1e-15);
    }
}
