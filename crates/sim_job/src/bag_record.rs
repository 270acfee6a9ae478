//! `gp-node sim --record DIR`: the learned run recorded as the ROS node records a robot's
//! (`gpn_app::record`: the same topics and types, rosbag2 MCAP with a Jazzy
//! `metadata.yaml`). The joint states are the simulator's measurements as the loop read them
//! (noise and glitches included; the torque sensor's effort), the command as the loop wrote
//! it, the residual estimates and change events from the loop's outputs. Log times are the
//! wall clock at the start of the run plus simulated time, so that `gp-node learn` estimates
//! a constant offset between them and the stamps (simulated time). The simulator has no
//! reference topic and no diagnostics: those topics are listed with no messages.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gpn_app::NodeParams;
use gpn_app::record::{
    NodeRecording, RecordReport, RecordedTopics, Recorder, change_event, residual_estimate,
    wall_clock_ns,
};
use gpn_control::control_loop::{
    Command, LoopOutput, OutKind, OutputListener, Plant, Read, StateFrame, Truth,
};
use gpn_dynamics::Model;

use super::SimulateError;

/// A recording of a simulated run in progress.
pub struct SimBag {
    path: PathBuf,
    recorder: Recorder,
    recording: NodeRecording,
    joints: Vec<String>,
    /// Log time of simulated time 0, ns since the epoch.
    origin_ns: u64,
}

impl SimBag {
    /// Creates the recording folder `path` (it must not exist) for a run of `robot` (its
    /// URDF text `urdf` recorded as the robot description, if given) with `params`' topic
    /// and node names.
    pub fn create(
        path: &Path,
        robot: &Model,
        urdf: Option<&str>,
        params: &NodeParams,
    ) -> Result<Self, SimulateError> {
        let ros = &params.ros;
        let namespace = ros.namespace.trim_matches('/');
        let fqn = if namespace.is_empty() {
            format!("/{}", ros.node_name)
        } else {
            format!("/{namespace}/{}", ros.node_name)
        };
        let topics = RecordedTopics::resolve(&ros.topics, "~/events", &fqn, &ros.namespace);
        let origin_ns = wall_clock_ns();
        let (recorder, recording) = NodeRecording::start(path, &topics, urdf, origin_ns)
            .map_err(|e| SimulateError::Param(format!("--record {}: {e}", path.display())))?;
        Ok(Self {
            path: path.to_path_buf(),
            recorder,
            recording,
            joints: robot.joint_names().to_vec(),
            origin_ns,
        })
    }

    fn log_ns(&self, t_secs: f64) -> u64 {
        self.origin_ns + (t_secs.max(0.0) * 1e9).round() as u64
    }

    /// Ends the recording (after the run) and says what it holds.
    pub fn finish(self) -> RecordReport {
        RecordReport::of(&self.path, self.recorder.finish())
    }
}

/// The simulated plant with what the loop reads and writes recorded (when `bag` is given).
pub(crate) struct RecordingPlant<'a, P> {
    pub(crate) inner: P,
    bag: Option<&'a SimBag>,
    last_t: f64,
}

impl<'a, P> RecordingPlant<'a, P> {
    pub(crate) fn new(inner: P, bag: Option<&'a SimBag>) -> Self {
        Self {
            inner,
            bag,
            last_t: 0.0,
        }
    }
}

impl<P: Plant> Plant for RecordingPlant<'_, P> {
    type Error = P::Error;

    fn nv(&self) -> usize {
        self.inner.nv()
    }

    fn accepts_commands(&self) -> bool {
        self.inner.accepts_commands()
    }

    fn read(&mut self, frame: &mut StateFrame, deadline: Duration) -> Result<Read, Self::Error> {
        let read = self.inner.read(frame, deadline)?;
        if let (Some(bag), Read::State { .. }) = (self.bag, read) {
            self.last_t = frame.t_secs;
            bag.recording
                .state_frame(bag.log_ns(frame.t_secs), frame, &bag.joints);
        }
        Ok(read)
    }

    fn write(&mut self, command: Command<'_>) -> Result<(), Self::Error> {
        if let Some(bag) = self.bag {
            bag.recording.command(bag.log_ns(self.last_t), command.u);
        }
        self.inner.write(command)
    }

    fn truth(&mut self, qdd: &[f64], truth: &mut Truth) -> Result<bool, Self::Error> {
        self.inner.truth(qdd, truth)
    }
}

/// The loop's residual estimates and change events, to the recording.
pub(crate) struct BagListener<'a> {
    pub(crate) bag: &'a SimBag,
    pub(crate) model: String,
}

impl OutputListener for BagListener<'_> {
    fn on_output(&mut self, out: &LoopOutput) {
        let log_ns = self.bag.log_ns(out.t_secs);
        for change in out.changes() {
            let event = change_event(change, &self.bag.joints);
            self.bag.recording.event(log_ns, &event);
        }
        if out.kind != OutKind::Tick {
            return;
        }
        let Some(status) = out.status else { return };
        let model = if out.stats.is_some() {
            self.model.clone()
        } else {
            String::new()
        };
        let msg = residual_estimate(out, &status, model, &self.bag.joints);
        self.bag.recording.residual(log_ns, &msg);
    }
}
