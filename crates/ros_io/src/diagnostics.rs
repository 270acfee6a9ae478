//! The `/diagnostics` message of the node: four statuses (joint states, model, control,
//! dynamics) built from the loop's and the receive thread's counters. Published by the publish thread
//! about once a second (ROS convention), never from the control thread.

use gpn_app::ros_params::{Mode, WatchdogAction};
use gpn_control::control_loop::LoopCounters;
use gpn_control::learn::LearnPhase;
use gpn_msgs::builtin_interfaces::Time;
use gpn_msgs::diagnostic_msgs::{DiagnosticArray, DiagnosticStatus, KeyValue};
use gpn_msgs::std_msgs::Header;

use super::ingest::IngestSnapshot;
use gpn_control::latency::LatencyHistogram;

/// What a diagnostics message is built from.
#[derive(Debug, Clone, Copy)]
pub struct DiagnosticsInput<'a> {
    /// Node name (prefix of the status names).
    pub node_name: &'a str,
    /// Robot name (hardware id).
    pub robot: &'a str,
    /// Plugin in use.
    pub model: &'a str,
    /// Mode.
    pub mode: Mode,
    /// Watchdog action.
    pub watchdog_action: WatchdogAction,
    /// Watchdog timeout, s.
    pub watchdog_timeout_s: f64,
    /// Loop counters (latest frame).
    pub counters: &'a LoopCounters,
    /// Counters at the previous diagnostics message (for "since last" levels).
    pub previous: &'a LoopCounters,
    /// Receive-thread counters.
    pub ingest: &'a IngestSnapshot,
    /// Receive-thread counters at the previous message.
    pub ingest_previous: &'a IngestSnapshot,
    /// The last refusal's message, if any.
    pub last_rejection: Option<&'a str>,
    /// Joint state in → command out latency.
    pub latency: &'a LatencyHistogram,
    /// Tick execution time.
    pub tick_time: &'a LatencyHistogram,
    /// Stamp of the message.
    pub stamp: Time,
    /// Coverage below which drift is suspected.
    pub coverage_alarm: f64,
    /// Joint names (model order).
    pub joints: &'a [String],
    /// Refused swaps, loads and saves: ("swap refused: not_found", n), only those that
    /// occurred.
    pub operations_refused: &'a [(String, u64)],
}

fn kv(key: &str, value: impl ToString) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: value.to_string(),
    }
}

fn phase_name(phase: Option<LearnPhase>) -> &'static str {
    match phase {
        None => "none",
        Some(LearnPhase::Collecting) => "collecting samples for the hyperparameter fit",
        Some(LearnPhase::Fitting) => "fitting hyperparameters",
        Some(LearnPhase::Active) => "active",
        Some(LearnPhase::Failed) => "failed",
    }
}

/// Builds the message: one status per concern, in this order.
pub fn diagnostics(input: &DiagnosticsInput<'_>) -> DiagnosticArray {
    DiagnosticArray {
        header: Header {
            stamp: input.stamp,
            frame_id: String::new(),
        },
        status: vec![
            joint_states_status(input),
            model_status(input),
            control_status(input),
            dynamics_status(input),
        ],
    }
}

/// A status of the node named "`node_name`: `what`", for the robot.
fn status(
    input: &DiagnosticsInput<'_>,
    what: &str,
    (level, message): (u8, String),
    values: Vec<KeyValue>,
) -> DiagnosticStatus {
    DiagnosticStatus {
        level,
        name: format!("{}: {what}", input.node_name),
        message,
        hardware_id: input.robot.into(),
        values,
    }
}

/// "joint states": the watchdog, then refusals since the last report.
fn joint_states_status(input: &DiagnosticsInput<'_>) -> DiagnosticStatus {
    let c = input.counters;
    let i = input.ingest;
    let ip = input.ingest_previous;

    let rejected_now = i.rejected() - ip.rejected().min(i.rejected());
    let verdict = if c.stale {
        let action = match input.watchdog_action {
            WatchdogAction::HoldGravity => "holding gravity compensation",
            WatchdogAction::ZeroTorque => "commanding zero torque",
            WatchdogAction::StopPublishing => "no longer commanding",
        };
        (
            DiagnosticStatus::ERROR,
            format!(
                "no valid joint state for more than {} s: {action}",
                input.watchdog_timeout_s
            ),
        )
    } else if i.joint_states == 0 {
        (
            DiagnosticStatus::STALE,
            "no joint state received yet".into(),
        )
    } else if rejected_now > 0 {
        (
            DiagnosticStatus::WARN,
            format!(
                "{rejected_now} joint states refused since the last report: {}",
                input.last_rejection.unwrap_or("")
            ),
        )
    } else {
        (DiagnosticStatus::OK, "receiving".into())
    };
    status(
        input,
        "joint states",
        verdict,
        [kv("received", i.joint_states)]
            .into_iter()
            .chain(
                i.joint_state_refusals()
                    .into_iter()
                    .map(|(reason, n)| kv(&format!("refused: {reason}"), n)),
            )
            .chain([
                kv("dropped in bursts", i.dropped_busy),
                kv("stamp clock resyncs", i.stamp_resyncs),
                kv("repeated stamp (command repeated)", c.repeated),
                kv("watchdog trips", c.watchdog_trips),
                kv("watchdog episodes", c.watchdog_episodes),
                kv("last refusal", input.last_rejection.unwrap_or("")),
            ])
            .collect(),
    )
}

/// "model": a failed model, a quarantine or fallbacks since the last report, else its phase.
fn model_status(input: &DiagnosticsInput<'_>) -> DiagnosticStatus {
    let c = input.counters;
    let s = c.supervisor;
    let sp = input.previous.supervisor;
    let faults_now = (s.model_errors + s.non_finite + s.overruns)
        .saturating_sub(sp.model_errors + sp.non_finite + sp.overruns);
    let quarantined_now = s.quarantined > sp.quarantined;
    let verdict = match c.phase {
        Some(LearnPhase::Failed) => (DiagnosticStatus::ERROR, "model failed: nominal law".into()),
        _ if quarantined_now => (
            DiagnosticStatus::WARN,
            "model quarantined after repeated faults: nominal law".into(),
        ),
        _ if faults_now > 0 => (
            DiagnosticStatus::WARN,
            format!("{faults_now} ticks fell back to the nominal law since the last report"),
        ),
        phase => (DiagnosticStatus::OK, phase_name(phase).into()),
    };
    let l = c.learn;
    let gated = l.gate.non_finite
        + l.gate.position_limit
        + l.gate.velocity_limit
        + l.gate.effort_limit
        + l.gate.jump
        + l.gate.acceleration
        + l.gate.innovation;
    status(
        input,
        "model",
        verdict,
        vec![
            kv("plugin", input.model),
            kv("phase", phase_name(c.phase)),
            kv("samples learned", l.learned),
            kv("samples gated", gated),
            kv("model failures", l.model_failures),
            kv("fit + warm-up (s)", format!("{:.3}", l.fit_secs)),
            kv("models adopted", c.adoptions),
            kv("ticks on the model", s.model_ticks),
            kv("ticks without a model", s.no_model),
            kv("model errors", s.model_errors),
            kv("non-finite outputs", s.non_finite),
            kv("overruns", s.overruns),
            kv("quarantines", s.quarantines),
        ]
        .into_iter()
        .chain(input.operations_refused.iter().map(|(key, n)| kv(key, n)))
        .collect(),
    )
}

/// "control": effort saturation since the last report, else the mode; tick counts and
/// latencies.
fn control_status(input: &DiagnosticsInput<'_>) -> DiagnosticStatus {
    let c = input.counters;
    let mode = match input.mode {
        Mode::Control => "control",
        Mode::Learn => "learn",
    };
    let sat_now = c
        .saturated_ticks
        .saturating_sub(input.previous.saturated_ticks);
    let (i, ip) = (input.ingest, input.ingest_previous);
    let refused_now = (i.trajectories_refused() + i.commands_refused())
        .saturating_sub(ip.trajectories_refused() + ip.commands_refused());
    let d = c.decision;
    let dp = input.previous.decision;
    let fallbacks_now = d.total_fallbacks().saturating_sub(dp.total_fallbacks());
    let safe_now = d.safe_ticks.saturating_sub(dp.safe_ticks);
    let verdict = if safe_now > 0 {
        let why = d
            .last_implausible
            .map_or("unusable state".to_owned(), |(fault, joint)| {
                format!("{} on joint {:?}", fault.name(), joint_name(input, joint))
            });
        (
            DiagnosticStatus::ERROR,
            format!("{safe_now} states answered by the safe output since the last report: {why}"),
        )
    } else if fallbacks_now > 0 {
        let why = d
            .last_fallback
            .map_or(String::new(), |(reason, joint)| match joint {
                Some(joint) => {
                    format!(": {} (joint {:?})", reason.name(), joint_name(input, joint))
                }
                None => format!(": {}", reason.name()),
            });
        (
            DiagnosticStatus::WARN,
            format!("the learned law fell back to the nominal law{why}; the model is on probation"),
        )
    } else if mode == "control" && !c.active {
        (
            DiagnosticStatus::OK,
            "inactive: commanding nothing (set ros.active true to command)".into(),
        )
    } else if refused_now > 0 {
        (
            DiagnosticStatus::WARN,
            format!(
                "{refused_now} reference trajectories or commands refused since the last report: {}",
                input.last_rejection.unwrap_or("")
            ),
        )
    } else if sat_now > 0 {
        (
            DiagnosticStatus::WARN,
            format!("{sat_now} ticks hit an effort limit since the last report"),
        )
    } else {
        (DiagnosticStatus::OK, format!("{mode} mode"))
    };
    let reference = if c.tracking_trajectory {
        "trajectory"
    } else {
        "holding the start pose"
    };
    let (latency, tick) = (input.latency, input.tick_time);
    let mut values = vec![
        kv("mode", mode),
        kv("active", c.active),
        kv("commanding law", c.law.name()),
        kv("ticks on the nominal law", d.nominal_ticks),
        kv("ticks on the safe output", d.safe_ticks),
        kv("states while inactive", d.inactive_ticks),
        kv("activations", d.activations),
        kv("re-adoptions after probation", d.readoptions),
        kv("hand-overs blended", d.handovers),
        kv("commands rate-limited", d.rate_limited),
        kv(
            "largest command step (N·m)",
            format!("{:.3}", d.max_command_step_nm),
        ),
    ];
    let counted = [
        ("fallback", d.fallbacks_by_reason().collect::<Vec<_>>()),
        (
            "implausible state",
            d.implausible_states_by_fault().collect(),
        ),
        (
            "reference refused in the loop",
            d.references_refused_by_fault().collect(),
        ),
    ];
    for (what, per_reason) in counted {
        for (reason, n) in per_reason {
            values.push(kv(&format!("{what}: {reason}"), n));
        }
    }
    values.extend([
        kv("ticks", c.ticks),
        kv("ticks on the learned law", c.learned_ticks),
        kv("bad input ticks", c.bad_input),
        kv("saturated ticks", c.saturated_ticks),
        kv("reference", reference),
        kv("reference trajectories accepted", i.trajectories_accepted),
    ]);
    for (reason, n) in i.reference_refusals() {
        values.push(kv(&format!("reference refused: {reason}"), n));
    }
    if input.mode == Mode::Learn {
        values.push(kv("commands accepted", i.commands_accepted));
        for (reason, n) in i.command_refusals() {
            values.push(kv(&format!("command refused: {reason}"), n));
        }
    }
    values.extend([
        kv(
            "state in -> command out p50 (us)",
            format!("{:.0}", latency.quantile(0.5)),
        ),
        kv(
            "state in -> command out p99 (us)",
            format!("{:.0}", latency.quantile(0.99)),
        ),
        kv("tick p50 (us)", format!("{:.1}", tick.quantile(0.5))),
        kv("tick p99 (us)", format!("{:.1}", tick.quantile(0.99))),
    ]);
    status(input, "control", verdict, values)
}

fn joint_name<'a>(input: &DiagnosticsInput<'a>, joint: usize) -> &'a str {
    // (a joint index from the decision, model order)
    input.joints.get(joint).map_or("?", String::as_str)
}

/// "dynamics": low coverage of ±η_cal (drift), then a change since the last report.
fn dynamics_status(input: &DiagnosticsInput<'_>) -> DiagnosticStatus {
    let c = input.counters;
    let last_change = c
        .last_change
        .map(|ch| gpn_control::learn::describe_change(&ch));
    let verdict = match c.coverage {
        Some(cov) if cov < input.coverage_alarm => (
            DiagnosticStatus::WARN,
            format!(
                "drift suspected: only {:.1} % of recent samples inside ±η_cal (alarm below {:.0} %)",
                cov * 100.0,
                input.coverage_alarm * 100.0
            ),
        ),
        _ if c.changes > input.previous.changes => (
            DiagnosticStatus::WARN,
            last_change
                .clone()
                .unwrap_or_else(|| "the dynamics changed".into()),
        ),
        Some(cov) => (
            DiagnosticStatus::OK,
            format!("{:.1} % of recent samples inside ±η_cal", cov * 100.0),
        ),
        None => (
            DiagnosticStatus::OK,
            "coverage not known yet (η_cal calibrating)".into(),
        ),
    };
    status(
        input,
        "dynamics",
        verdict,
        vec![
            kv(
                "coverage of ±η_cal (recent)",
                c.coverage.map_or("-".to_owned(), |v| format!("{v:.4}")),
            ),
            kv("changes detected or announced", c.changes),
            kv("last change", last_change.unwrap_or_default()),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_control::learn::{ChangeAction, ChangeNotice, ChangeSource};

    /// The "dynamics" status for `counters` against `previous`.
    fn dynamics(counters: &LoopCounters, previous: &LoopCounters) -> DiagnosticStatus {
        let (ingest, latency) = (IngestSnapshot::default(), LatencyHistogram::new());
        let input = DiagnosticsInput {
            node_name: "gp_learning_node",
            robot: "panda",
            model: "skygp",
            mode: Mode::Control,
            watchdog_action: WatchdogAction::HoldGravity,
            watchdog_timeout_s: 0.1,
            counters,
            previous,
            ingest: &ingest,
            ingest_previous: &ingest,
            last_rejection: None,
            latency: &latency,
            tick_time: &latency,
            stamp: Time::default(),
            coverage_alarm: 0.9,
            joints: &[],
            operations_refused: &[],
        };
        diagnostics(&input)
            .status
            .into_iter()
            .find(|s| s.name == "gp_learning_node: dynamics")
            .expect("a dynamics status")
    }

    #[test]
    fn the_dynamics_status_warns_on_low_coverage_and_on_a_new_change() {
        let quiet = LoopCounters {
            coverage: Some(0.96),
            ..LoopCounters::default()
        };
        let s = dynamics(&quiet, &quiet);
        assert_eq!(s.level, DiagnosticStatus::OK, "{}", s.message);
        assert!(s.message.contains("96.0 %"), "{}", s.message);
        assert_eq!(
            dynamics(&LoopCounters::default(), &quiet).level,
            DiagnosticStatus::OK
        );

        let drifting = LoopCounters {
            coverage: Some(0.85),
            ..quiet
        };
        let s = dynamics(&drifting, &quiet);
        assert_eq!(s.level, DiagnosticStatus::WARN);
        assert!(s.message.starts_with("drift suspected"), "{}", s.message);

        let change = ChangeNotice {
            source: ChangeSource::Announced,
            t_secs: 15.0,
            onset_secs: 15.0,
            joint: None,
            action: ChangeAction::Drop,
        };
        let changed = LoopCounters {
            changes: 1,
            last_change: Some(change),
            ..quiet
        };
        let s = dynamics(&changed, &quiet);
        assert_eq!(s.level, DiagnosticStatus::WARN);
        assert!(s.message.contains("older samples dropped"), "{}", s.message);
        let last = s
            .values
            .iter()
            .find(|kv| kv.key == "last change")
            .expect("value");
        assert_eq!(last.value, s.message);
        // Once reported, the same change no longer warns.
        assert_eq!(dynamics(&changed, &changed).level, DiagnosticStatus::OK);
    }
}
