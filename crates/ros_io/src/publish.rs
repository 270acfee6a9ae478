//! The publish thread of `gp-node run`: commands and outputs from the control loop become
//! messages (the command, `~/residual`, `~/events`, `/diagnostics`) and latency histograms;
//! and the probe thread, which publishes the learner's probe offers.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpn_app::ros_params::RosParams;
use gpn_control::control_loop::{LoopCounters, LoopOutput, OutKind, Verdict};
use gpn_msgs::builtin_interfaces::Time;
use gpn_msgs::diagnostic_msgs::DiagnosticArray;
use gpn_msgs::gp_learning_node_msgs::{ChangeEvent, ResidualEstimate};
use gpn_msgs::std_msgs::Float64MultiArray;
use gpn_msgs::trajectory_msgs::JointTrajectory;

use super::diagnostics::{DiagnosticsInput, diagnostics};
use super::ingest::{IngestCounters, IngestSnapshot};
use super::node_log::NodeLog;
use super::ops::{self, SharedStatus};
use super::plant::{Outgoing, PublishEnd};
use super::rcl_msgs::node_time;
use super::trajectory::Trajectory;
use super::transport::{NodeClock, Publisher};
use gpn_app::record::{NodeRecording, change_event, residual_estimate, wall_clock_ns};
use gpn_control::latency::LatencyHistogram;

/// Probe offers published and refusals logged.
#[derive(Default)]
pub(super) struct ProbeCounts {
    pub(super) offered: AtomicU64,
    pub(super) refused: AtomicU64,
}

/// The probe thread: publishes each plan the learning worker offers and logs every outcome
/// (a refusal is logged, not published). Ends at stop or when the learner is gone.
pub(super) fn offer_probes(
    offers: &Receiver<gpn_control::learn::ProbeOffer>,
    publisher: &Publisher<JointTrajectory>,
    joints: &[String],
    stop: &AtomicBool,
    counts: &ProbeCounts,
    log: &NodeLog,
) {
    while !stop.load(Ordering::SeqCst) {
        let offer = match offers.recv_timeout(Duration::from_millis(100)) {
            Ok(offer) => offer,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        log.info(&super::probe_offer::describe_offer(&offer));
        match &offer.plan {
            Ok(plan) => {
                let msg = super::probe_offer::offer_message(plan, joints);
                if let Err(e) = publisher.publish(&msg) {
                    log.error(&format!("publishing the probe offer failed: {e}"));
                }
                counts.offered.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                counts.refused.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Runs one step of the publish thread; a panic (a defect) is logged and the thread goes on.
pub(super) fn survive(what: &str, f: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        ops::internal_error(what, panic.as_ref());
    }
}

/// What the publish thread measured.
pub(super) struct Published {
    pub(super) commands: u64,
    pub(super) latency: LatencyHistogram,
    pub(super) tick_time: LatencyHistogram,
}

/// State of the publish thread.
pub(super) struct Publisher_ {
    pub(super) node_name: String,
    pub(super) robot: String,
    pub(super) coverage_alarm: f64,
    pub(super) events: Publisher<ChangeEvent>,
    pub(super) shared: SharedStatus,
    pub(super) joints: Vec<String>,
    pub(super) ros: RosParams,
    pub(super) command: Option<Publisher<Float64MultiArray>>,
    pub(super) residual: Publisher<ResidualEstimate>,
    pub(super) diagnostics: Publisher<DiagnosticArray>,
    pub(super) ingest: Arc<IngestCounters>,
    pub(super) last_rejection: Arc<Mutex<Option<String>>>,
    /// Stamps the diagnostics.
    pub(super) clock: NodeClock,
    /// Changes of the dynamics are logged (console, log file, /rosout).
    pub(super) log: NodeLog,
    /// `ros.record`: what is sent is recorded.
    pub(super) recording: Option<NodeRecording>,
}

impl Publisher_ {
    pub(super) fn run(self, end: &PublishEnd, trash: &Receiver<Box<Trajectory>>) -> Published {
        let mut published = Published {
            commands: 0,
            latency: LatencyHistogram::new(),
            tick_time: LatencyHistogram::new(),
        };
        // Checked at start (ros.diagnostics_period_s ≤ 1 h); a second as the fallback.
        let period = Duration::try_from_secs_f64(self.ros.diagnostics_period_s)
            .unwrap_or(Duration::from_secs(1));
        let mut last_diag = Instant::now();
        let mut latest = LoopCounters::default();
        let mut previous = LoopCounters::default();
        let mut ingest_previous = IngestSnapshot::default();
        let mut ticks: u64 = 0;
        loop {
            match end
                .outgoing
                .recv_timeout(period.min(Duration::from_millis(100)))
            {
                Ok(message) => {
                    match &message {
                        Outgoing::Command(frame) => survive("publishing the command", || {
                            self.publish_command(&frame.u, frame.answers, &mut published);
                        }),
                        Outgoing::Output(frame) => {
                            latest = frame.counters;
                            survive("publishing", || {
                                self.publish_output(frame, &mut published, &mut ticks);
                            });
                        }
                    }
                    end.recycle(message);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            while let Ok(old) = trash.try_recv() {
                drop(old);
            }
            if last_diag.elapsed() >= period {
                survive("diagnostics", || {
                    last_diag = Instant::now();
                    let ingest = self.ingest.snapshot();
                    let last_rejection = self.last_rejection.lock().ok().and_then(|l| l.clone());
                    let model = self.model_label();
                    let operations_refused = self.shared.refusals.snapshot();
                    let msg = diagnostics(&DiagnosticsInput {
                        node_name: &self.node_name,
                        robot: &self.robot,
                        model: &model,
                        mode: self.ros.mode,
                        watchdog_action: self.ros.watchdog_action,
                        watchdog_timeout_s: self.ros.watchdog_timeout_s,
                        counters: &latest,
                        previous: &previous,
                        ingest: &ingest,
                        ingest_previous: &ingest_previous,
                        last_rejection: last_rejection.as_deref(),
                        latency: &published.latency,
                        tick_time: &published.tick_time,
                        stamp: self.now(),
                        coverage_alarm: self.coverage_alarm,
                        joints: &self.joints,
                        operations_refused: &operations_refused,
                    });
                    let _ = self.diagnostics.publish(&msg);
                    if let Some(r) = &self.recording {
                        r.diagnostics(wall_clock_ns(), &msg);
                    }
                    previous = latest;
                    ingest_previous = ingest;
                });
            }
        }
        published
    }

    /// The node's clock (ROS time: `/clock` with `use_sim_time`).
    fn now(&self) -> Time {
        node_time(&self.clock)
    }

    fn model_label(&self) -> String {
        self.shared
            .model_label
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    fn publish_command(&self, u: &[f64], answers: Option<Instant>, published: &mut Published) {
        let Some(command) = &self.command else { return };
        if let Some(r) = &self.recording {
            r.command(wall_clock_ns(), u);
        }
        // Straight to the rosidl type: the command is the message whose latency counts.
        let msg = r2r::std_msgs::msg::Float64MultiArray {
            layout: Default::default(),
            data: u.to_vec(),
        };
        if command.publish_rcl(&msg).is_ok() {
            published.commands += 1;
            if let Some(received) = answers {
                published
                    .latency
                    .record(received.elapsed().as_secs_f64() * 1e6);
            }
        }
    }

    /// A fallback of the learned law or a re-adoption, to the log (/rosout): what an operator
    /// must see without reading counters.
    fn log_law_change(&self, frame: &LoopOutput) {
        match frame.verdict {
            Verdict::FallBack(reason, joint) => self.log.warn(&format!(
                "the learned law fell back to the nominal law: {}{}; the model is on \
                 probation (predicting, not commanding)",
                reason.name(),
                joint
                    .and_then(|j| self.joints.get(j))
                    .map_or(String::new(), |name| format!(" (joint {name})"))
            )),
            Verdict::Readopt => self
                .log
                .info("the model passed its probation: the learned law commands again"),
            Verdict::Keep => {}
        }
    }

    fn publish_output(&self, frame: &LoopOutput, published: &mut Published, ticks: &mut u64) {
        if let Some(change) = frame.change {
            // This thread, not the tick, writes the log: a change rebuilds the model and may
            // discard data, which an operator should see without subscribing to ~/events.
            self.log.warn(&gpn_control::learn::describe_change(&change));
            let event = change_event(&change, &self.joints);
            let _ = self.events.publish(&event);
            if let Some(r) = &self.recording {
                r.event(wall_clock_ns(), &event);
            }
        }
        self.log_law_change(frame);
        if frame.kind != OutKind::Tick {
            return;
        }
        let Some(status) = frame.status else { return };
        published.tick_time.record(status.exec_micros);
        *ticks += 1;
        let every = u64::from(self.shared.residual_every.load(Ordering::Relaxed));
        if every == 0 || !(*ticks - 1).is_multiple_of(every) {
            return;
        }
        let model = if frame.stats.is_some() {
            self.model_label()
        } else {
            String::new()
        };
        let msg = residual_estimate(frame, &status, model, &self.joints);
        if self.command.is_none() {
            // Learn mode: the estimate is the output whose latency counts.
            published
                .latency
                .record(frame.received.elapsed().as_secs_f64() * 1e6);
        }
        let _ = self.residual.publish(&msg);
        if let Some(r) = &self.recording {
            r.residual(wall_clock_ns(), &msg);
        }
    }
}
