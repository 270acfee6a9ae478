//! A run as a rosbag2 recording (`gp-node run --record`, `ros.record`; `gp-node sim
//! --record DIR`): what the node received (joint states, references, in learn mode the other
//! controller's command) and what it sent (command, residual estimates, diagnostics,
//! events), plus the robot description, so that `gp-node learn` reads it back without
//! `--urdf`. Both jobs record the same topics with the same types.
//!
//! Senders hand each message to the recorder thread without waiting (`gpn_bag::Recorder`).
//! Every message carries its log time: the ROS node gives the wall clock when it received
//! or sent it, as `ros2 bag record` logs them ([`wall_clock_ns`]); the simulator its own
//! time.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::ros_params::TopicNames;
pub use gpn_bag::Recorder;
use gpn_bag::{BagError, BagWriter, Qos, RecordHandle, RecordSummary, TopicId};
use gpn_control::control::TickStatus;
use gpn_control::control_loop::{LoopOutput, StateFrame, TorqueOrigin};
use gpn_msgs::builtin_interfaces::Time;
use gpn_msgs::diagnostic_msgs::DiagnosticArray;
use gpn_msgs::gp_learning_node_msgs::{ChangeEvent, ResidualEstimate};
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::{Float64MultiArray, Header, StringMessage};
use gpn_msgs::trajectory_msgs::JointTrajectory;

/// The topics of a recording, as names resolved in the node's namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedTopics {
    /// Joint states in.
    pub joint_states: String,
    /// Reference trajectories in.
    pub reference: String,
    /// The effort command (out in control mode, in in learn mode).
    pub command: String,
    /// Residual estimates out.
    pub residual: String,
    /// Diagnostics out.
    pub diagnostics: String,
    /// Change events out.
    pub events: String,
    /// The robot description (recorded once, latched).
    pub robot_description: String,
}

impl RecordedTopics {
    /// The configured names resolved as rcl resolves them without a remap: `~/x` under the
    /// node's fully qualified name `node_fqn`, a relative `x` in its `namespace`.
    pub fn resolve(topics: &TopicNames, events: &str, node_fqn: &str, namespace: &str) -> Self {
        let resolve = |name: &str| resolve_topic(name, node_fqn, namespace);
        Self {
            joint_states: resolve(&topics.joint_states),
            reference: resolve(&topics.reference),
            command: resolve(&topics.command),
            residual: resolve(&topics.residual),
            diagnostics: resolve(&topics.diagnostics),
            events: resolve(events),
            robot_description: resolve("robot_description"),
        }
    }
}

/// `name` resolved against the node (ROS 2 topic name expansion, without remaps).
pub fn resolve_topic(name: &str, node_fqn: &str, namespace: &str) -> String {
    if let Some(rest) = name.strip_prefix("~/") {
        format!("{}/{rest}", node_fqn.trim_end_matches('/'))
    } else if name.starts_with('/') {
        name.to_string()
    } else {
        let ns = namespace.trim_matches('/');
        if ns.is_empty() {
            format!("/{name}")
        } else {
            format!("/{ns}/{name}")
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Ids {
    joint_states: TopicId,
    reference: TopicId,
    command: TopicId,
    residual: TopicId,
    diagnostics: TopicId,
    events: TopicId,
}

/// Records the node's messages; cloned into the threads that see them.
#[derive(Clone)]
pub struct NodeRecording {
    handle: RecordHandle,
    ids: Ids,
}

/// Now on the wall clock, ns since the epoch.
pub fn wall_clock_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl NodeRecording {
    /// Creates the recording folder `path` (it must not exist), records the robot
    /// description `urdf` (if known) at `log_ns` and starts the recorder thread.
    pub fn start(
        path: &Path,
        topics: &RecordedTopics,
        urdf: Option<&str>,
        log_ns: u64,
    ) -> Result<(Recorder, Self), BagError> {
        let mut writer = BagWriter::create(path)?;
        let ids = Ids {
            joint_states: writer.add_topic::<JointState>(&topics.joint_states, Qos::SENSOR_DATA)?,
            reference: writer.add_topic::<JointTrajectory>(&topics.reference, Qos::DEFAULT)?,
            command: writer.add_topic::<Float64MultiArray>(&topics.command, Qos::DEFAULT)?,
            residual: writer.add_topic::<ResidualEstimate>(&topics.residual, Qos::DEFAULT)?,
            diagnostics: writer.add_topic::<DiagnosticArray>(&topics.diagnostics, Qos::DEFAULT)?,
            events: writer.add_topic::<ChangeEvent>(&topics.events, Qos::DEFAULT)?,
        };
        if let Some(urdf) = urdf {
            let id = writer.add_topic::<StringMessage>(&topics.robot_description, Qos::LATCHED)?;
            let msg = StringMessage {
                data: urdf.to_string(),
            };
            writer.write_message(id, log_ns, &msg)?;
        }
        let recorder = Recorder::start(writer)?;
        let handle = recorder.handle();
        Ok((recorder, Self { handle, ids }))
    }

    /// A joint state as received.
    pub fn joint_state(&self, log_ns: u64, msg: &JointState) {
        self.handle.record(self.ids.joint_states, log_ns, msg);
    }

    /// A state the loop read from a plant (`gp-node sim`): stamped with its sender's time,
    /// the effort the measured torque when the plant gave one.
    pub fn state_frame(&self, log_ns: u64, frame: &StateFrame, joints: &[String]) {
        let msg = JointState {
            header: Header {
                stamp: Time::from_secs_f64(frame.stamp_secs),
                frame_id: String::new(),
            },
            name: joints.to_vec(),
            position: frame.q.clone(),
            velocity: frame.v.clone(),
            effort: match frame.tau_origin {
                TorqueOrigin::Given => frame.tau.clone(),
                TorqueOrigin::OwnCommand => Vec::new(),
            },
        };
        self.joint_state(log_ns, &msg);
    }

    /// A reference as received.
    pub fn reference(&self, log_ns: u64, msg: &JointTrajectory) {
        self.handle.record(self.ids.reference, log_ns, msg);
    }

    /// The command sent (control mode), or the other controller's as received (learn mode).
    pub fn command(&self, log_ns: u64, u: &[f64]) {
        let msg = Float64MultiArray {
            data: u.to_vec(),
            ..Default::default()
        };
        self.handle.record(self.ids.command, log_ns, &msg);
    }

    /// A residual estimate sent.
    pub fn residual(&self, log_ns: u64, msg: &ResidualEstimate) {
        self.handle.record(self.ids.residual, log_ns, msg);
    }

    /// Diagnostics sent.
    pub fn diagnostics(&self, log_ns: u64, msg: &DiagnosticArray) {
        self.handle.record(self.ids.diagnostics, log_ns, msg);
    }

    /// A change event sent.
    pub fn event(&self, log_ns: u64, msg: &ChangeEvent) {
        self.handle.record(self.ids.events, log_ns, msg);
    }

    /// Messages dropped so far (the recorder was behind).
    pub fn dropped(&self) -> u64 {
        self.handle.dropped()
    }
}

/// A finished recording for the run summary.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RecordReport {
    /// The folder.
    pub path: String,
    /// Messages written.
    pub written: u64,
    /// Messages dropped (the disk was behind).
    pub dropped: u64,
    /// Why the recording is incomplete, if it is.
    pub error: Option<String>,
}

impl RecordReport {
    /// What `finish` of the recorder gave.
    pub fn of(path: &Path, finished: Result<RecordSummary, BagError>) -> Self {
        match finished {
            Ok(s) => Self {
                path: path.display().to_string(),
                written: s.bag.counts.iter().map(|(_, n)| n).sum(),
                dropped: s.dropped + s.unencodable,
                error: None,
            },
            Err(e) => Self {
                path: path.display().to_string(),
                written: 0,
                dropped: 0,
                error: Some(e.to_string()),
            },
        }
    }
}

/// The events-topic message of a change; `joints` name the detector's joint index.
pub fn change_event(c: &gpn_control::learn::ChangeNotice, joints: &[String]) -> ChangeEvent {
    use gpn_control::learn::{ChangeAction, ChangeSource};
    ChangeEvent {
        header: Header {
            stamp: Time::from_secs_f64(c.t_secs),
            frame_id: String::new(),
        },
        onset: Time::from_secs_f64(c.onset_secs),
        source: match c.source {
            ChangeSource::Detected => "detected".into(),
            ChangeSource::Announced => "announced".into(),
        },
        joint: c
            .joint
            .and_then(|j| joints.get(j))
            .cloned()
            .unwrap_or_default(),
        action: match c.action {
            ChangeAction::Report => "report",
            ChangeAction::Inject => "inject",
            ChangeAction::Drop => "drop",
            ChangeAction::Reidentify => "reidentify",
        }
        .into(),
        description: gpn_control::learn::describe_change(c),
    }
}

/// The residual-topic message of a tick's output (`status` its tick status), for a model
/// labelled `model` ("" while none is active) on `joints`.
pub fn residual_estimate(
    out: &LoopOutput,
    status: &TickStatus,
    model: String,
    joints: &[String],
) -> ResidualEstimate {
    let stats = out.stats.unwrap_or_default();
    ResidualEstimate {
        header: Header {
            stamp: Time::from_secs_f64(out.stamp_secs),
            frame_id: String::new(),
        },
        model,
        joint_names: joints.to_vec(),
        mu: out.mu.clone(),
        sigma: out.sigma.clone(),
        eta: out.eta.clone(),
        eta_thm: out.eta_thm.clone(),
        fallback: out.fallback.clone(),
        samples_seen: stats.samples_seen,
        samples_stored: stats.samples_stored,
        experts: stats.experts,
        model_us: status.model_micros,
        tick_us: status.exec_micros,
        tracking_bound: out.tracking_bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_control::learn::{ChangeAction, ChangeNotice, ChangeSource};

    #[test]
    fn names_resolve_as_rcl_resolves_them() {
        let fqn = "/arm/gp_learning_node";
        assert_eq!(
            resolve_topic("~/residual", fqn, "/arm"),
            "/arm/gp_learning_node/residual"
        );
        assert_eq!(resolve_topic("/joint_states", fqn, "/arm"), "/joint_states");
        assert_eq!(
            resolve_topic("robot_description", fqn, "/arm"),
            "/arm/robot_description"
        );
        assert_eq!(
            resolve_topic("robot_description", "/n", "/"),
            "/robot_description"
        );
    }

    #[test]
    fn a_recording_holds_each_message_on_its_topic_and_the_robot_description() {
        let dir = std::env::temp_dir().join(format!("gpn_node_record_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let topics =
            RecordedTopics::resolve(&TopicNames::default(), "~/events", "/gp_learning_node", "/");
        let path = dir.join("run");
        let (recorder, recording) =
            NodeRecording::start(&path, &topics, Some("<robot name=\"r\"/>"), 5).expect("start");
        recording.joint_state(6, &JointState::default());
        recording.command(7, &[1.0, 2.0]);
        recording.residual(8, &ResidualEstimate::default());
        recording.event(9, &ChangeEvent::default());
        let report = RecordReport::of(&path, recorder.finish());
        assert_eq!((report.written, report.dropped, report.error), (5, 0, None));
        let bag = gpn_bag::Recording::open(&path).expect("open");
        let wanted = [gpn_bag::Wanted::new(
            "/effort_controller/commands",
            "std_msgs/msg/Float64MultiArray",
        )];
        let commands: Vec<Float64MultiArray> = bag
            .messages(&wanted)
            .map(|m| gpn_bag::decode(&m.expect("message").data).expect("decode"))
            .collect();
        assert_eq!(commands.len(), 1);
        assert_eq!(commands[0].data, [1.0, 2.0]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_change_event_names_the_joint_whose_detector_fired() {
        let joints: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
        let detected = ChangeNotice {
            source: ChangeSource::Detected,
            t_secs: 15.04,
            onset_secs: 15.01,
            joint: Some(3),
            action: ChangeAction::Drop,
        };
        let e = change_event(&detected, &joints);
        assert_eq!(
            (e.source.as_str(), e.joint.as_str(), e.action.as_str()),
            ("detected", "panda_joint4", "drop")
        );
        assert!(
            (e.onset.sec, e.onset.nanosec) == (15, 10_000_000),
            "{:?}",
            e.onset
        );
        let announced = ChangeNotice {
            source: ChangeSource::Announced,
            joint: None,
            ..detected
        };
        let e = change_event(&announced, &joints);
        assert_eq!((e.source.as_str(), e.joint.as_str()), ("announced", ""));
    }
}
