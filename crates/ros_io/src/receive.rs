//! The receiving side of `gp-node run`, run on the spin thread right after rcl hands over
//! the messages: joint states, the reference, the other controller's command (learn mode)
//! and the payload signal, validated into frames for the loop.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt as _;
use gpn_control::control_loop::ControlCommand;
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::{Empty, Float64MultiArray};
use gpn_msgs::trajectory_msgs::JointTrajectory;

use super::ingest::IngestCounters;
use super::joint_state::{JointStateReader, StateFrame};
use super::trajectory::{ReferenceInput, Trajectory};
use super::transport::Subscription;
use gpn_app::record::{NodeRecording, wall_clock_ns};

/// Two deliveries of one reference message (one per reader) arrive within this; the same
/// message again later is a new reference (restarted when its stamp is zero).
const SAME_DELIVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// References waiting to be checked; one more is refused as `busy`.
const REFERENCE_QUEUE: usize = 4;

/// Checks the references the spin thread hands over, on a thread of its own, and passes
/// those accepted to the control loop.
struct ReferenceChecker {
    joints: Vec<String>,
    limits: gpn_control::control_loop::ReferenceLimits,
    ingest: Arc<IngestCounters>,
    last_rejection: Arc<Mutex<Option<String>>>,
    trajectories: SyncSender<ReferenceInput>,
}

impl ReferenceChecker {
    fn spawn(
        self,
        checks: Receiver<JointTrajectory>,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        std::thread::Builder::new()
            .name("gpn-reference-check".into())
            .spawn(move || self.run(checks))
    }

    fn run(self, checks: Receiver<JointTrajectory>) {
        // Both readers of `~/reference` (see `Endpoints::open`): a message of a
        // transient-local writer reaches both; the second copy is dropped.
        let mut last: Option<(JointTrajectory, Instant)> = None;
        while let Ok(msg) = checks.recv() {
            if last
                .as_ref()
                .is_some_and(|(m, at)| *m == msg && at.elapsed() < SAME_DELIVERY)
            {
                continue;
            }
            match Trajectory::from_msg(&msg, &self.joints, &self.limits) {
                Ok(t) => {
                    self.ingest.count(&self.ingest.trajectories_accepted);
                    let _ = self
                        .trajectories
                        .try_send(ReferenceInput::Follow(Box::new(t)));
                }
                Err(e) => {
                    self.ingest.refuse_trajectory(&e);
                    set_last(&self.last_rejection, e.to_string());
                }
            }
            last = Some((msg, Instant::now()));
        }
    }
}

/// State of the receiving side.
pub(super) struct Receiver_ {
    pub(super) reader: JointStateReader,
    pub(super) joints: Vec<String>,
    /// The reference validator (the command decision's).
    pub(super) limits: gpn_control::control_loop::ReferenceLimits,
    pub(super) ingest: Arc<IngestCounters>,
    pub(super) last_rejection: Arc<Mutex<Option<String>>>,
    pub(super) free: Receiver<StateFrame>,
    pub(super) spare: Option<StateFrame>,
    pub(super) full: SyncSender<StateFrame>,
    pub(super) trajectories: SyncSender<ReferenceInput>,
    pub(super) commands: SyncSender<ControlCommand>,
    /// `ros.record`: what arrives is recorded.
    pub(super) recording: Option<NodeRecording>,
}

impl Receiver_ {
    /// Handles the subscriptions' messages until they end (the node is dropped).
    pub(super) async fn run(
        mut self,
        joint_states: Subscription<JointState>,
        reference: (Subscription<JointTrajectory>, Subscription<JointTrajectory>),
        command: Option<Subscription<Float64MultiArray>>,
        payload_changed: Subscription<Empty>,
    ) {
        let commanded = RefCell::new(None::<Vec<f64>>);
        let commands = self.commands.clone();
        let recording = self.recording.clone();
        let nv = self.joints.len();
        let ingest = self.ingest.clone();
        let last_rejection = self.last_rejection.clone();
        let joints = self.joints.clone();
        let limits = self.limits.clone();
        // References are checked on a thread of their own: a trajectory of many points
        // takes milliseconds to validate (the torque it needs at every point), and the joint
        // states behind it on this thread must not wait (found by the hostile-input suite:
        // a 45 000-point reference left a third of the next states unanswered).
        let (to_check, checks) = std::sync::mpsc::sync_channel::<JointTrajectory>(REFERENCE_QUEUE);
        let checker = ReferenceChecker {
            joints: joints.clone(),
            limits: limits.clone(),
            ingest: ingest.clone(),
            last_rejection: last_rejection.clone(),
            trajectories: self.trajectories.clone(),
        }
        .spawn(checks);
        {
            let states = async {
                let mut stream = joint_states;
                while let Some(msg) = stream.next().await {
                    let received = Instant::now();
                    ingest.count(&ingest.joint_states);
                    if let Some(r) = &recording {
                        r.joint_state(wall_clock_ns(), &msg);
                    }
                    self.on_joint_state(&msg, commanded.borrow().as_deref(), received);
                }
            };
            let refs = async {
                let mut stream = futures::stream::select(reference.0, reference.1);
                // Both readers get a writer's message when durabilities allow: recorded once.
                let mut last_recorded: Option<JointTrajectory> = None;
                while let Some(msg) = stream.next().await {
                    if let Some(r) = &recording
                        && last_recorded.as_ref() != Some(&msg)
                    {
                        r.reference(wall_clock_ns(), &msg);
                        last_recorded = Some(msg.clone());
                    }
                    if let Err(TrySendError::Full(_)) = to_check.try_send(msg) {
                        ingest.count(&ingest.trajectories_refused_busy);
                        set_last(
                            &last_rejection,
                            "reference refused: the references before it are still being checked"
                                .into(),
                        );
                    }
                }
            };
            let cmds = async {
                let Some(mut stream) = command else {
                    return std::future::pending::<()>().await;
                };
                while let Some(msg) = stream.next().await {
                    if let Some(r) = &recording {
                        r.command(wall_clock_ns(), &msg.data);
                    }
                    if msg.data.len() != nv {
                        ingest.count(&ingest.commands_refused_length);
                        set_last(
                            &last_rejection,
                            format!(
                                "commanded torque: {} values for {nv} joints",
                                msg.data.len()
                            ),
                        );
                    } else if let Some(i) = msg.data.iter().position(|x| !x.is_finite()) {
                        ingest.count(&ingest.commands_refused_non_finite);
                        set_last(
                            &last_rejection,
                            format!("commanded torque of joint {:?} is not finite", joints[i]),
                        );
                    } else {
                        ingest.count(&ingest.commands_accepted);
                        *commanded.borrow_mut() = Some(msg.data);
                    }
                }
            };
            let announcements = async {
                let mut stream = payload_changed;
                while stream.next().await.is_some() {
                    let _ = commands.try_send(ControlCommand::AnnounceChange);
                }
            };
            futures::join!(states, refs, cmds, announcements);
        }
        drop(to_check);
        if let Ok(checker) = checker {
            let _ = checker.join();
        }
    }

    fn on_joint_state(&mut self, msg: &JointState, commanded: Option<&[f64]>, received: Instant) {
        let Some(mut frame) = self.spare.take().or_else(|| self.free.try_recv().ok()) else {
            self.ingest.count(&self.ingest.dropped_busy);
            return;
        };
        let read = self.reader.read(msg, commanded, received, &mut frame);
        self.ingest
            .stamp_resyncs
            .store(self.reader.stamp_resyncs(), Ordering::Relaxed);
        match read {
            Ok(()) => {
                if let Err(TrySendError::Full(f) | TrySendError::Disconnected(f)) =
                    self.full.try_send(frame)
                {
                    self.ingest.count(&self.ingest.dropped_busy);
                    self.spare = Some(f);
                }
            }
            Err(why) => {
                self.ingest.reject(&why);
                set_last(&self.last_rejection, why.to_string());
                // This thread holds the free pool's receiving end: keep the frame for next time.
                self.spare = Some(frame);
            }
        }
    }
}

pub(super) fn set_last(slot: &Mutex<Option<String>>, message: String) {
    if let Ok(mut last) = slot.lock() {
        *last = Some(message);
    }
}
