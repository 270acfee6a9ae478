//! The `control_msgs/action/FollowJointTrajectory` server (`~/follow_joint_trajectory`,
//! control mode), with the behaviour of ros2_control's joint trajectory controller:
//!
//! - a goal is validated when it arrives and rejected (with the reason on `/rosout`) if its
//!   joint names are empty, unknown, repeated or — unless `allow_partial_joints_goal` — not
//!   all of the robot's joints; if it has multi-DOF points or efforts; if its tolerances
//!   name unknown joints or hold invalid values; if a stamped trajectory ends in the past;
//!   or if the reference validator refuses a point (`Trajectory::from_goal`);
//! - an accepted goal preempts the one running, which is aborted with `INVALID_GOAL` ("goal
//!   cancelled due to new incoming action"), and its trajectory replaces the reference at the
//!   next tick (continuous in position and velocity); joints a partial goal leaves out hold;
//! - a cancel request of the running goal is accepted: the arm holds where it is and the
//!   goal ends `CANCELED` with `SUCCESSFUL`;
//! - the control thread checks the tolerances at every tick (`goal_monitor`); this side
//!   turns its outcomes into results (`SUCCESSFUL`, `PATH_TOLERANCE_VIOLATED`,
//!   `GOAL_TOLERANCE_VIOLATED`, `INVALID_GOAL` when the loop's validator refused the sampled
//!   reference or the node stopped commanding) and publishes feedback (desired, actual and
//!   error) at `action_monitor_rate`.
//!
//! Tolerances: the parameters' (`constraints.trajectory`, `.goal` per joint,
//! `.stopped_velocity_tolerance` as the goal's velocity tolerance, `.goal_time`), overridden
//! by the goal's as `control_msgs/JointTolerance` defines (0 keeps, −1 erases).
//!
//! Runs on the spin thread: the goal and cancel requests in a task of its local executor,
//! the outcomes and feedback in [`ActionServer::poll`] after each rcl wait.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::stream::{AbortHandle, SelectAll};
use futures::{Stream, StreamExt as _};
use gpn_app::RosParams;
use gpn_control::control_loop::ReferenceLimits;
use gpn_msgs::trajectory_msgs::JointTrajectory;
use r2r::control_msgs::action::FollowJointTrajectory as Fjt;
use r2r::trajectory_msgs::msg::JointTrajectoryPoint;
use r2r::{ActionServerCancelRequest, ActionServerGoal, ActionServerGoalRequest};

use super::goal_monitor::{
    GoalEvent, GoalFeedback, GoalOutcome, GoalReports, GoalTolerances, Tolerance, Violation,
};
use super::node_log::NodeLog;
use super::rcl_msgs::FromRcl as _;
use super::trajectory::{ReferenceInput, Trajectory};
use super::transport::{NodeClock, ros_now};

// control_msgs/action/FollowJointTrajectory result codes.
const SUCCESSFUL: i32 = 0;
const INVALID_GOAL: i32 = -1;
const PATH_TOLERANCE_VIOLATED: i32 = -4;
const GOAL_TOLERANCE_VIOLATED: i32 = -5;

/// Outcomes the control thread may report before this side drains them.
const EVENT_DEPTH: usize = 16;

/// Goal requests of the action server.
pub(crate) type GoalRequests =
    Pin<Box<dyn Stream<Item = ActionServerGoalRequest<Fjt::Action>> + Send>>;

type CancelStream = Pin<Box<dyn Stream<Item = (u64, ActionServerCancelRequest)>>>;

/// What the goals are checked against.
#[derive(Debug, Clone)]
pub(crate) struct GoalRules {
    joints: Vec<String>,
    limits: ReferenceLimits,
    /// Default tolerances per joint (path, goal).
    path: Vec<Tolerance>,
    goal: Vec<Tolerance>,
    goal_time_secs: f64,
    allow_partial: bool,
}

impl GoalRules {
    /// From the parameters; an error if a per-joint tolerance list has neither one value nor
    /// one per joint.
    pub(crate) fn new(
        ros: &RosParams,
        joints: &[String],
        limits: ReferenceLimits,
    ) -> Result<Self, String> {
        let c = &ros.constraints;
        let nv = joints.len();
        c.check_joints(joints)?;
        for (name, values) in [("trajectory", &c.trajectory), ("goal", &c.goal)] {
            if values.len() > 1 && values.len() != nv {
                return Err(format!(
                    "ros.constraints.{name} needs one value or {nv} (one per joint), got {}",
                    values.len()
                ));
            }
        }
        let (path, goal) = (0..nv)
            .map(|j| {
                let (path, goal) = c.of_joint(j, &joints[j]);
                (
                    Tolerance {
                        position: path,
                        ..Tolerance::default()
                    },
                    Tolerance {
                        position: goal,
                        velocity: c.stopped_velocity_tolerance,
                        acceleration: 0.0,
                    },
                )
            })
            .unzip();
        Ok(Self {
            joints: joints.to_vec(),
            limits,
            path,
            goal,
            goal_time_secs: c.goal_time,
            allow_partial: ros.allow_partial_joints_goal,
        })
    }

    /// The tolerances of `goal`: the defaults overridden by the goal's own.
    fn tolerances(&self, goal: &Fjt::Goal) -> Result<GoalTolerances, String> {
        let mut path = self.path.clone();
        let mut at_goal = self.goal.clone();
        for (what, given, into) in [
            ("path", &goal.path_tolerance, &mut path),
            ("goal", &goal.goal_tolerance, &mut at_goal),
        ] {
            for t in given {
                let j = self
                    .joints
                    .iter()
                    .position(|n| *n == t.name)
                    .ok_or_else(|| format!("{what} tolerance names unknown joint {:?}", t.name))?;
                let value = Tolerance {
                    position: t.position,
                    velocity: t.velocity,
                    acceleration: t.acceleration,
                };
                into[j] = into[j]
                    .overridden(value)
                    .map_err(|e| format!("{what} tolerance of joint {:?}: {e}", t.name))?;
            }
        }
        let d = &goal.goal_time_tolerance;
        let given = d.sec as f64 + d.nanosec as f64 * 1e-9;
        if !(given.is_finite() && given >= 0.0) {
            return Err(format!("goal_time_tolerance {given} s is negative"));
        }
        Ok(GoalTolerances {
            path,
            goal: at_goal,
            goal_time_secs: if given > 0.0 {
                given
            } else {
                self.goal_time_secs
            },
        })
    }

    /// The trajectory of goal `id`, or why it is rejected; `now_secs` is the node's time.
    fn trajectory(&self, goal: &Fjt::Goal, id: u64, now_secs: f64) -> Result<Trajectory, String> {
        let multi = &goal.multi_dof_trajectory;
        if !multi.joint_names.is_empty() || !multi.points.is_empty() {
            return Err("multi-DOF trajectories are not supported".into());
        }
        let msg = JointTrajectory::from_rcl(goal.trajectory.clone());
        if msg.joint_names.is_empty() {
            return Err("the trajectory names no joints".into());
        }
        if !self.allow_partial && msg.joint_names.len() != self.joints.len() {
            return Err(format!(
                "the trajectory names {} joints, the robot has {} (allow_partial_joints_goal is false)",
                msg.joint_names.len(),
                self.joints.len()
            ));
        }
        if let Some(i) = msg.points.iter().position(|p| !p.effort.is_empty()) {
            return Err(format!("point {i} has efforts, which are not supported"));
        }
        let stamp = msg.header.stamp;
        if !stamp.is_zero() {
            let end = stamp.as_secs_f64()
                + msg
                    .points
                    .last()
                    .map_or(0.0, |p| p.time_from_start.as_secs_f64());
            if end < now_secs {
                return Err(format!(
                    "the trajectory ends in the past ({:.3} s before now)",
                    now_secs - end
                ));
            }
        }
        let tolerances = self.tolerances(goal)?;
        Trajectory::from_goal(
            &msg,
            &self.joints,
            &self.limits,
            self.allow_partial,
            id,
            tolerances,
        )
        .map_err(|e| e.to_string())
    }
}

/// The goal being followed.
struct Active {
    id: u64,
    handle: ActionServerGoal<Fjt::Action>,
    /// Ends its cancel stream once it is over.
    cancels: AbortHandle,
}

/// The action server's state on the spin thread.
pub(crate) struct ActionServer {
    rules: GoalRules,
    to_reference: SyncSender<ReferenceInput>,
    events: Receiver<GoalEvent>,
    feedback: Arc<Mutex<GoalFeedback>>,
    feedback_period: Duration,
    clock: NodeClock,
    log: NodeLog,
    state: RefCell<State>,
}

struct State {
    next_id: u64,
    active: Option<Active>,
    last_feedback: Instant,
    /// The feedback slot's time last published (a slot not written since is not repeated).
    last_feedback_t: f64,
}

impl ActionServer {
    /// The server over `rules`, sending trajectories to the reference through
    /// `to_reference`; returns it and the control thread's ends of the goal reports.
    pub(crate) fn new(
        rules: GoalRules,
        monitor_rate_hz: f64,
        to_reference: SyncSender<ReferenceInput>,
        clock: NodeClock,
        log: NodeLog,
    ) -> (Self, GoalReports) {
        let (events_tx, events) = std::sync::mpsc::sync_channel(EVENT_DEPTH);
        let feedback = Arc::new(Mutex::new(GoalFeedback::new(rules.joints.len())));
        let reports = GoalReports {
            events: events_tx,
            feedback: feedback.clone(),
        };
        let server = Self {
            rules,
            to_reference,
            events,
            feedback,
            feedback_period: Duration::from_secs_f64(1.0 / monitor_rate_hz),
            clock,
            log,
            state: RefCell::new(State {
                next_id: 1,
                active: None,
                last_feedback: Instant::now(),
                last_feedback_t: f64::NAN,
            }),
        };
        (server, reports)
    }

    /// Answers goal and cancel requests until the goal stream ends (the node is dropped).
    pub(crate) async fn serve(self: Rc<Self>, goals: GoalRequests) {
        let mut goals = goals.fuse();
        let mut cancels: SelectAll<CancelStream> = SelectAll::new();
        loop {
            futures::select! {
                request = goals.next() => match request {
                    Some(request) => {
                        if let Some(stream) = self.on_goal(request) {
                            cancels.push(stream);
                        }
                    }
                    None => return,
                },
                (id, cancel) = cancels.select_next_some() => self.on_cancel(id, cancel),
            }
        }
    }

    fn on_goal(&self, request: ActionServerGoalRequest<Fjt::Action>) -> Option<CancelStream> {
        let id = {
            let mut state = self.state.borrow_mut();
            state.next_id += 1;
            state.next_id - 1
        };
        let now = ros_now(&self.clock);
        let now_secs = now.sec as f64 + now.nanosec as f64 * 1e-9;
        let trajectory = match self.rules.trajectory(&request.goal, id, now_secs) {
            Ok(t) => t,
            Err(why) => {
                self.log
                    .warn(&format!("FollowJointTrajectory goal rejected: {why}"));
                if let Err(e) = request.reject() {
                    self.log.error(&format!("cannot reject the goal: {e}"));
                }
                return None;
            }
        };
        let (handle, cancel_requests) = match request.accept() {
            Ok(accepted) => accepted,
            Err(e) => {
                self.log.error(&format!("cannot accept the goal: {e}"));
                return None;
            }
        };
        self.finish_active(
            INVALID_GOAL,
            "Current goal cancelled due to new incoming action.",
            false,
        );
        let (cancels, abort) = futures::stream::abortable(cancel_requests.map(move |c| (id, c)));
        let mut active = Active {
            id,
            handle,
            cancels: abort,
        };
        if self
            .to_reference
            .try_send(ReferenceInput::Follow(Box::new(trajectory)))
            .is_err()
        {
            end(
                &mut active,
                INVALID_GOAL,
                "the control loop is not taking trajectories (busy or stopped)",
                false,
            );
            return None;
        }
        self.state.borrow_mut().active = Some(active);
        Some(Box::pin(cancels))
    }

    fn on_cancel(&self, id: u64, cancel: ActionServerCancelRequest) {
        let running = self
            .state
            .borrow()
            .active
            .as_ref()
            .is_some_and(|a| a.id == id);
        if !running {
            cancel.reject();
            return;
        }
        cancel.accept();
        // Holds where the arm is (if the loop is full, the trajectory runs on: said below).
        let held = self
            .to_reference
            .try_send(ReferenceInput::Cancel(id))
            .is_ok();
        if !held {
            self.log.error(
                "cancel: the control loop did not take the request; the trajectory continues",
            );
        }
        self.finish_active(SUCCESSFUL, "cancelled: holding position", true);
    }

    /// Ends the running goal, if any, with `code` (aborted, or cancelled if `cancelled`).
    fn finish_active(&self, code: i32, message: &str, cancelled: bool) {
        let taken = self.state.borrow_mut().active.take();
        if let Some(mut active) = taken {
            end(&mut active, code, message, cancelled);
        }
    }

    /// Turns the control thread's outcomes into results and publishes feedback. Called on
    /// the spin thread after each rcl wait.
    pub(crate) fn poll(&self) {
        while let Ok(event) = self.events.try_recv() {
            let current = self.state.borrow().active.as_ref().map(|a| a.id);
            if current != Some(event.id) {
                continue; // already ended here (preempted or cancelled)
            }
            let (code, message) = result_of(&event.outcome, &self.rules.joints);
            if code == SUCCESSFUL {
                let taken = self.state.borrow_mut().active.take();
                if let Some(mut active) = taken {
                    active.cancels.abort();
                    let result = Fjt::Result {
                        error_code: SUCCESSFUL,
                        error_string: String::new(),
                    };
                    if let Err(e) = active.handle.succeed(result) {
                        self.log.error(&format!("cannot report success: {e}"));
                    }
                }
            } else {
                self.log
                    .warn(&format!("FollowJointTrajectory goal aborted: {message}"));
                self.finish_active(code, &message, false);
            }
        }
        self.publish_feedback();
    }

    fn publish_feedback(&self) {
        let mut state = self.state.borrow_mut();
        if state.last_feedback.elapsed() < self.feedback_period {
            return;
        }
        let Some(id) = state.active.as_ref().map(|a| a.id) else {
            return;
        };
        let feedback = {
            let Ok(slot) = self.feedback.lock() else {
                return;
            };
            if slot.id != id || slot.t_secs == state.last_feedback_t {
                return;
            }
            state.last_feedback_t = slot.t_secs;
            feedback_msg(&slot, &self.rules.joints, ros_now(&self.clock))
        };
        let Some(active) = state.active.as_ref() else {
            return;
        };
        if let Err(e) = active.handle.publish_feedback(feedback) {
            self.log.error(&format!("cannot publish feedback: {e}"));
        }
        state.last_feedback = Instant::now();
    }
}

/// Ends `active` with `code`: aborted, or cancelled if `cancelled`.
fn end(active: &mut Active, code: i32, message: &str, cancelled: bool) {
    active.cancels.abort();
    let result = Fjt::Result {
        error_code: code,
        error_string: message.to_owned(),
    };
    let _ = if cancelled {
        active.handle.cancel(result)
    } else {
        active.handle.abort(result)
    };
}

/// The result code and message of an outcome.
fn result_of(outcome: &GoalOutcome, joints: &[String]) -> (i32, String) {
    let describe = |v: &Violation, when: &str| {
        format!(
            "{when}: joint {:?}: {} error {:.6} beyond the tolerance {}",
            joints[v.joint],
            v.quantity.name(),
            v.error,
            v.tolerance
        )
    };
    match outcome {
        GoalOutcome::Succeeded => (SUCCESSFUL, String::new()),
        GoalOutcome::PathViolated(v) => (
            PATH_TOLERANCE_VIOLATED,
            describe(v, "path tolerance violated"),
        ),
        GoalOutcome::GoalViolated(v) => (
            GOAL_TOLERANCE_VIOLATED,
            describe(v, "goal tolerance violated after goal_time"),
        ),
        GoalOutcome::Refused => (
            INVALID_GOAL,
            "the reference validator refused the sampled trajectory; holding position".into(),
        ),
        GoalOutcome::Replaced => (
            INVALID_GOAL,
            "replaced by a trajectory on the reference topic".into(),
        ),
        GoalOutcome::Stopped => (
            INVALID_GOAL,
            "the node stopped commanding (deactivated); holding position".into(),
        ),
    }
}

fn feedback_msg(
    slot: &GoalFeedback,
    joints: &[String],
    stamp: r2r::builtin_interfaces::msg::Time,
) -> Fjt::Feedback {
    let error = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(d, m)| d - m).collect::<Vec<_>>();
    Fjt::Feedback {
        header: r2r::std_msgs::msg::Header {
            stamp,
            frame_id: String::new(),
        },
        joint_names: joints.to_vec(),
        desired: JointTrajectoryPoint {
            positions: slot.desired[0].clone(),
            velocities: slot.desired[1].clone(),
            accelerations: slot.desired[2].clone(),
            ..Default::default()
        },
        actual: JointTrajectoryPoint {
            positions: slot.actual[0].clone(),
            velocities: slot.actual[1].clone(),
            ..Default::default()
        },
        error: JointTrajectoryPoint {
            positions: error(&slot.desired[0], &slot.actual[0]),
            velocities: error(&slot.desired[1], &slot.actual[1]),
            ..Default::default()
        },
        ..Default::default()
    }
}
