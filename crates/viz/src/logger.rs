//! The logger thread: turns frames into rerun calls. Scalars are gathered into columns and
//! sent every [`BATCH_TICKS`] ticks (`send_columns`, one chunk per entity and batch); the
//! robot's pose is logged at [`POSE_RATE_HZ`] of simulated time.

use std::sync::mpsc::TryRecvError;

use re_sdk::blueprint::BlueprintActivation;
use re_sdk::log::TimeColumn;
use re_sdk::{EntityPath, EntityPathPart, RecordingStream};
use re_sdk_types::archetypes::{Scalars, SeriesLines, TextLog};
use re_sdk_types::components::Color;

use gpn_control::control_loop::Mode;

use super::error::{Result, VizError};
use super::pool::{Frame, FrameReceiver};
use super::robot3d::{Robot3d, log_error};
use super::{BATCH_TICKS, POSE_RATE_HZ, VizRun};

/// Name of the tick-index timeline.
pub(crate) const TICK: &str = "tick";
/// How long the logger sleeps when no frame is queued (the pool holds 2 s of ticks).
const POLL: std::time::Duration = std::time::Duration::from_millis(10);
/// Entity of the model events (text logs).
pub(crate) const EVENTS: &str = "dynamics/events";
/// Root of the nominal run's entities.
pub(crate) const NOMINAL: &str = "nominal";

/// `joints/J/<parts>`: joint `J`'s entity (a joint name is one path part, escaped as needed).
pub(crate) fn joint_entity(joint: &str, parts: &[&str]) -> EntityPath {
    EntityPath::new(
        ["joints", joint]
            .iter()
            .chain(parts)
            .map(|p| EntityPathPart::new(*p))
            .collect(),
    )
}

/// `nominal/joints/J/<parts>`: joint `J`'s entity of the nominal run.
pub(crate) fn nominal_entity(joint: &str, parts: &[&str]) -> EntityPath {
    root_entity(&[NOMINAL]).join(&joint_entity(joint, parts))
}

/// `<parts>` from the root.
pub(crate) fn root_entity(parts: &[&str]) -> EntityPath {
    EntityPath::new(parts.iter().map(|p| EntityPathPart::new(*p)).collect())
}

/// A logged scalar quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    Q,
    QDesired,
    TrackingError,
    TorqueApplied,
    TorqueRbd,
    ResidualTrue,
    ResidualMeasured,
    ResidualPredicted,
    ResidualUpper,
    ResidualLower,
    Sigma,
    LatencyMicros,
    Experts,
    Coverage,
}

impl Quantity {
    const PER_JOINT: [Quantity; 11] = [
        Quantity::Q,
        Quantity::QDesired,
        Quantity::TrackingError,
        Quantity::TorqueApplied,
        Quantity::TorqueRbd,
        Quantity::ResidualTrue,
        Quantity::ResidualMeasured,
        Quantity::ResidualPredicted,
        Quantity::ResidualUpper,
        Quantity::ResidualLower,
        Quantity::Sigma,
    ];

    /// Entity path: `joints/J/...` per joint, else from the root.
    fn path(self, joint: &str) -> EntityPath {
        let (per_joint, parts): (bool, &[&str]) = match self {
            Quantity::Q => (true, &["position", "q"]),
            Quantity::QDesired => (true, &["position", "q_d"]),
            Quantity::TrackingError => (true, &["tracking_error"]),
            Quantity::TorqueApplied => (true, &["torque", "applied"]),
            Quantity::TorqueRbd => (true, &["torque", "rbd"]),
            Quantity::ResidualTrue => (true, &["residual", "true"]),
            Quantity::ResidualMeasured => (true, &["residual", "measured"]),
            Quantity::ResidualPredicted => (true, &["residual", "predicted"]),
            Quantity::ResidualUpper => (true, &["residual", "upper"]),
            Quantity::ResidualLower => (true, &["residual", "lower"]),
            Quantity::Sigma => (true, &["sigma"]),
            Quantity::LatencyMicros => (false, &["tick", "latency_us"]),
            Quantity::Experts => (false, &["model", "experts"]),
            Quantity::Coverage => (false, &["dynamics", "coverage"]),
        };
        if per_joint {
            joint_entity(joint, parts)
        } else {
            root_entity(parts)
        }
    }

    /// What the nominal run logs: no model, so no residual, σ, band or experts; its
    /// reference is the learned run's.
    const NOMINAL_PER_JOINT: [Quantity; 3] = [
        Quantity::Q,
        Quantity::TrackingError,
        Quantity::TorqueApplied,
    ];

    /// Series name and colour in the plot.
    fn style(self) -> (&'static str, [u8; 3]) {
        match self {
            Quantity::Q => ("q", [31, 119, 180]),
            Quantity::QDesired => ("q_d", [255, 127, 14]),
            Quantity::TrackingError => ("q − q_d", [214, 39, 40]),
            Quantity::TorqueApplied => ("u (applied)", [31, 119, 180]),
            Quantity::TorqueRbd => ("τ_RBD", [127, 127, 127]),
            Quantity::ResidualTrue => ("true residual", [40, 40, 40]),
            Quantity::ResidualMeasured => ("measured residual (learning sample)", [255, 127, 14]),
            Quantity::ResidualPredicted => ("μ (predicted)", [31, 119, 180]),
            Quantity::ResidualUpper => ("μ + η_cal", [158, 202, 225]),
            Quantity::ResidualLower => ("μ − η_cal", [158, 202, 225]),
            Quantity::Sigma => ("σ", [148, 103, 189]),
            Quantity::LatencyMicros => ("tick µs", [44, 160, 44]),
            Quantity::Experts => ("experts", [140, 86, 75]),
            Quantity::Coverage => ("coverage of ±η_cal (recent)", [23, 190, 207]),
        }
    }

    /// The value in `f` (joint `j` where per joint).
    fn value(self, f: &Frame, j: usize) -> f64 {
        match self {
            Quantity::Q => f.q[j],
            Quantity::QDesired => f.q_d[j],
            Quantity::TrackingError => f.q[j] - f.q_d[j],
            Quantity::TorqueApplied => f.u[j],
            Quantity::TorqueRbd => f.tau_rbd[j],
            Quantity::ResidualTrue => f.true_residual[j],
            Quantity::ResidualMeasured => f.measured_residual[j],
            Quantity::ResidualPredicted => f.mu[j],
            Quantity::ResidualUpper => f.mu[j] + f.eta_cal[j],
            Quantity::ResidualLower => f.mu[j] - f.eta_cal[j],
            Quantity::Sigma => f.sigma[j],
            Quantity::LatencyMicros => f.exec_micros,
            Quantity::Experts => f.experts,
            Quantity::Coverage => f.coverage,
        }
    }
}

/// One scalar entity and its pending column.
struct Series {
    run: VizRun,
    path: EntityPath,
    quantity: Quantity,
    joint: usize,
    /// Its name and colour are logged (with its first value).
    declared: bool,
    t_secs: Vec<f64>,
    ticks: Vec<i64>,
    values: Vec<f64>,
}

/// The logger thread's state: the recording, the pending columns and the robot.
pub(crate) struct Logger {
    rec: RecordingStream,
    /// The time axis.
    timeline: &'static str,
    series: Vec<Series>,
    pending: usize,
    robot: Robot3d,
    last_pose: Option<i64>,
    poses: u64,
    /// Models adopted in the learned run so far.
    adoptions: u64,
    /// The learned run's law at the previous tick.
    last_law: Option<Mode>,
}

impl Series {
    /// The name and colour in the plot: a nominal series is the learned one's, marked and
    /// greyed.
    fn style(&self) -> (String, [u8; 3]) {
        let (name, color) = self.quantity.style();
        match self.run {
            VizRun::Learned => (name.to_owned(), color),
            VizRun::Nominal => (format!("{name} (nominal)"), [150, 150, 150]),
        }
    }
}

fn log_series_lines(
    rec: &RecordingStream,
    path: &EntityPath,
    name: &str,
    [r, g, b]: [u8; 3],
) -> Result<()> {
    rec.log_static(
        path.clone(),
        &SeriesLines::new()
            .with_names([name])
            .with_colors([Color::from_rgb(r, g, b)]),
    )
    .map_err(log_error(path))
}

impl Logger {
    /// A logger for joints `joint_names` writing to `rec` with times on `timeline`; logs the
    /// static entities now.
    pub fn new(
        rec: RecordingStream,
        joint_names: &[String],
        robot: Robot3d,
        timeline: &'static str,
    ) -> Result<Self> {
        // Only our own timelines: no wall-clock `log_time`, no `log_tick`.
        rec.set_log_time_enabled(false);
        rec.set_log_tick_enabled(false);
        let mut series = Vec::new();
        for (j, name) in joint_names.iter().enumerate() {
            for quantity in Quantity::PER_JOINT {
                series.push((VizRun::Learned, quantity, j, quantity.path(name)));
            }
            for quantity in Quantity::NOMINAL_PER_JOINT {
                let path = root_entity(&[NOMINAL]).join(&quantity.path(name));
                series.push((VizRun::Nominal, quantity, j, path));
            }
        }
        for quantity in [
            Quantity::LatencyMicros,
            Quantity::Experts,
            Quantity::Coverage,
        ] {
            series.push((VizRun::Learned, quantity, 0, quantity.path("")));
        }
        let series = series
            .into_iter()
            .map(|(run, quantity, joint, path)| Series {
                run,
                path,
                quantity,
                joint,
                declared: false,
                t_secs: Vec::with_capacity(BATCH_TICKS),
                ticks: Vec::with_capacity(BATCH_TICKS),
                values: Vec::with_capacity(BATCH_TICKS),
            })
            .collect::<Vec<_>>();
        robot.log_static(&rec)?;
        crate::blueprint::layout(joint_names, timeline)
            .send(&rec, BlueprintActivation::default())
            .map_err(|e| VizError::Log {
                entity: "(blueprint)".into(),
                message: e.to_string(),
            })?;
        Ok(Self {
            rec,
            timeline,
            series,
            pending: 0,
            robot,
            last_pose: None,
            poses: 0,
            adoptions: 0,
            last_law: None,
        })
    }

    /// Logs frames until the sending side closes, then flushes; returns the poses logged.
    ///
    /// It polls: it takes every queued frame, then sleeps [`POLL`]. Never parked on the
    /// channel, it is never woken by the tick (a wake per tick would cost the control thread
    /// a system call and the other core a context switch, 1000 times a second).
    pub fn run(mut self, frames: FrameReceiver) -> Result<u64> {
        loop {
            let frame = match frames.full.try_recv() {
                Ok(frame) => frame,
                Err(TryRecvError::Empty) => {
                    std::thread::sleep(POLL);
                    continue;
                }
                Err(TryRecvError::Disconnected) => break,
            };
            let logged = self.push(&frame);
            // Back to the pool; fails only once the tick side is gone.
            let _ = frames.free.try_send(frame);
            logged?;
        }
        self.send()?;
        self.rec.flush_blocking().map_err(|e| VizError::Log {
            entity: "(flush)".into(),
            message: e.to_string(),
        })?;
        Ok(self.poses)
    }

    fn push(&mut self, frame: &Frame) -> Result<()> {
        let tick = i64::try_from(frame.tick).unwrap_or(i64::MAX);
        for s in self.series.iter_mut().filter(|s| s.run == frame.run) {
            let v = s.quantity.value(frame, s.joint);
            if v.is_finite() {
                if !s.declared {
                    s.declared = true;
                    let (name, color) = s.style();
                    log_series_lines(&self.rec, &s.path, &name, color)?;
                }
                s.t_secs.push(frame.t_secs);
                s.ticks.push(tick);
                s.values.push(v);
            }
        }
        if frame.run == VizRun::Learned {
            self.log_events(frame, tick)?;
        }
        self.pending += 1;
        if self.pending >= BATCH_TICKS {
            self.send()?;
        }
        // The 3-D robot shows the learned run.
        if frame.run == VizRun::Nominal {
            return Ok(());
        }
        let pose = (frame.t_secs * POSE_RATE_HZ + 1e-9).floor() as i64;
        if self.last_pose != Some(pose) {
            self.last_pose = Some(pose);
            self.rec.set_time_sequence(TICK, tick);
            self.rec.set_duration_secs(self.timeline, frame.t_secs);
            self.robot.log_pose(&self.rec, &frame.q, frame.t_secs)?;
            self.poses += 1;
        }
        Ok(())
    }

    /// The learned run's events at this frame: a change of the dynamics, a model going live,
    /// the law switching (the first tick's law is not an event).
    fn log_events(&mut self, frame: &Frame, tick: i64) -> Result<()> {
        let mut texts = Vec::new();
        if let Some(change) = frame.change {
            texts.push(gpn_control::learn::describe_change(&change));
        }
        if frame.adopted_model {
            self.adoptions += 1;
            texts.push(format!(
                "model #{} live (the first model, a refit or a swap)",
                self.adoptions
            ));
        }
        if let Some(last) = self.last_law.replace(frame.law)
            && last != frame.law
        {
            texts.push(format!("law: {} → {}", last.name(), frame.law.name()));
        }
        if texts.is_empty() {
            return Ok(());
        }
        let path = EntityPath::from(EVENTS);
        self.rec.set_time_sequence(TICK, tick);
        self.rec.set_duration_secs(self.timeline, frame.t_secs);
        for text in texts {
            self.rec
                .log(path.clone(), &TextLog::new(text))
                .map_err(log_error(&path))?;
        }
        Ok(())
    }

    /// Sends the pending columns.
    fn send(&mut self) -> Result<()> {
        self.pending = 0;
        for s in &mut self.series {
            if s.values.is_empty() {
                continue;
            }
            let times = [
                TimeColumn::new_duration_secs(self.timeline, s.t_secs.drain(..)),
                TimeColumn::new_sequence(TICK, s.ticks.drain(..)),
            ];
            let columns = Scalars::new(s.values.drain(..))
                .columns_of_unit_batches()
                .map_err(|e| VizError::Log {
                    entity: s.path.to_string(),
                    message: e.to_string(),
                })?;
            self.rec
                .send_columns(s.path.clone(), times, columns)
                .map_err(log_error(&s.path))?;
        }
        Ok(())
    }
}
