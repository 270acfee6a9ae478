//! Issue 23, the control-thread side of `FollowJointTrajectory` (no ROS needed): a goal's
//! trajectory fed to the node's reference as the action server feeds it — partial goals hold
//! the joints they leave out, the tolerances are checked at every tick (a violation holds
//! where the arm is and is reported once; success after the last point keeps it held), a
//! cancel holds where the arm is, and goals naming unknown joints are refused.

use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};

use gp_node::control::PlausibilityParams;
use gp_node::control_loop::{Desired, ReferenceLimits, ReferenceSource, StateFrame};
use gp_node::robot::JointLimits;
use gp_node::ros::goal_monitor::{
    GoalEvent, GoalFeedback, GoalOutcome, GoalReports, GoalTolerances, Quantity, Tolerance,
};
use gp_node::ros::{ReferenceInput, TopicReference, Trajectory, TrajectoryError};
use gpn_msgs::builtin_interfaces::Duration;
use gpn_msgs::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};

const NV: usize = 3;

fn joints() -> Vec<String> {
    (0..NV).map(|i| format!("j{i}")).collect()
}

fn limits() -> ReferenceLimits {
    let joint = JointLimits {
        position_lower: -3.0,
        position_upper: 3.0,
        velocity: 10.0,
        effort: 100.0,
    };
    ReferenceLimits::new(&[joint; NV], &[100.0; NV], &PlausibilityParams::default())
}

/// One joint `name` moving to `q` at `t` (positions only, unstamped: starts when switched in).
fn goal_msg(names: &[&str], points: &[(f64, Vec<f64>)]) -> JointTrajectory {
    JointTrajectory {
        joint_names: names.iter().map(|s| s.to_string()).collect(),
        points: points
            .iter()
            .map(|(t, q)| JointTrajectoryPoint {
                positions: q.clone(),
                time_from_start: Duration::from_secs_f64(*t),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn tolerances(path: f64, goal: f64, goal_time: f64) -> GoalTolerances {
    let tol = |position, velocity| Tolerance {
        position,
        velocity,
        acceleration: 0.0,
    };
    GoalTolerances {
        path: vec![tol(path, 0.0); NV],
        goal: vec![tol(goal, 0.01); NV],
        goal_time_secs: goal_time,
    }
}

/// Goal `id`'s trajectory for `msg` on the test robot.
fn goal(
    msg: &JointTrajectory,
    partial: bool,
    id: u64,
    tolerances: GoalTolerances,
) -> Result<Trajectory, TrajectoryError> {
    Trajectory::from_goal(msg, &joints(), &limits(), partial, id, tolerances)
}

struct Rig {
    reference: TopicReference,
    inputs: std::sync::mpsc::SyncSender<ReferenceInput>,
    events: Receiver<GoalEvent>,
    feedback: Arc<Mutex<GoalFeedback>>,
    frame: StateFrame,
    desired: [Vec<f64>; 3],
}

impl Rig {
    fn new() -> Self {
        let (inputs, incoming) = sync_channel(4);
        let (trash, _trash_rx) = sync_channel(4);
        std::mem::forget(_trash_rx); // replaced trajectories land here (never read)
        let (events_tx, events) = sync_channel(16);
        let feedback = Arc::new(Mutex::new(GoalFeedback::new(NV)));
        let reference = TopicReference::new(NV)
            .fed_by(incoming, trash)
            .reporting_to(GoalReports {
                events: events_tx,
                feedback: feedback.clone(),
            });
        Self {
            reference,
            inputs,
            events,
            feedback,
            frame: StateFrame::new(NV),
            desired: [vec![0.0; NV], vec![0.0; NV], vec![0.0; NV]],
        }
    }

    /// One tick at `t` with the arm measured at `q` (at rest); returns the desired position.
    fn tick(&mut self, t: f64, q: &[f64]) -> Vec<f64> {
        self.frame.t_secs = t;
        self.frame.stamp_secs = t;
        self.frame.q.copy_from_slice(q);
        self.frame.v.fill(0.0);
        let [dq, dqd, dqdd] = &mut self.desired;
        self.reference.sample(
            &self.frame,
            &[0.0; NV],
            Desired {
                q: dq,
                qd: dqd,
                qdd: dqdd,
            },
        );
        self.desired[0].clone()
    }

    fn follow(&self, t: Trajectory) {
        self.inputs
            .try_send(ReferenceInput::Follow(Box::new(t)))
            .expect("room in the channel");
    }
}

#[test]
fn a_partial_goal_moves_its_joints_and_holds_the_others_where_the_reference_was() {
    let mut rig = Rig::new();
    let pose = [0.3, -0.2, 0.5];
    assert_eq!(rig.tick(0.0, &pose), pose.to_vec(), "holds the first pose");
    let msg = goal_msg(&["j1"], &[(1.0, vec![0.4])]);
    let t = goal(&msg, true, 7, tolerances(0.0, 0.0, 0.0)).expect("a partial goal is allowed");
    rig.follow(t);
    let mid = rig.tick(0.5, &pose);
    assert_eq!((mid[0], mid[2]), (0.3, 0.5), "the joints left out hold");
    assert!(mid[1] > -0.2 && mid[1] < 0.4, "j1 on its way: {mid:?}");
    let end = rig.tick(1.0, &[0.3, 0.4, 0.5]);
    assert_eq!(end, vec![0.3, 0.4, 0.5]);
    // Reached within the (unchecked) tolerances, at rest: succeeded, once.
    let event = rig.events.try_recv().expect("an outcome");
    assert_eq!((event.id, event.outcome), (7, GoalOutcome::Succeeded));
    rig.tick(1.1, &[0.3, 0.4, 0.5]);
    assert!(rig.events.try_recv().is_err(), "reported once");
    assert_eq!(
        rig.tick(2.0, &[0.3, 0.4, 0.5]),
        vec![0.3, 0.4, 0.5],
        "the end stays held"
    );
}

#[test]
fn a_path_violation_is_reported_once_and_the_arm_holds_where_it_is() {
    let mut rig = Rig::new();
    rig.tick(0.0, &[0.0; NV]);
    let msg = goal_msg(&["j0", "j1", "j2"], &[(1.0, vec![0.5, 0.0, 0.0])]);
    let t = goal(&msg, false, 3, tolerances(0.05, 0.0, 0.0)).expect("valid");
    rig.follow(t);
    let desired = rig.tick(0.5, &[0.0; NV]); // the arm did not move: j0 0.25 behind
    assert!(desired[0] > 0.05, "{desired:?}");
    let event = rig.events.try_recv().expect("a violation");
    match event.outcome {
        GoalOutcome::PathViolated(v) => {
            assert_eq!((v.joint, v.quantity), (0, Quantity::Position));
            assert!((v.error - desired[0]).abs() < 1e-12 && v.tolerance == 0.05);
        }
        other => panic!("expected a path violation, got {other:?}"),
    }
    assert_eq!(event.id, 3);
    // The feedback slot held that tick's desired and actual state.
    {
        let slot = rig.feedback.lock().unwrap();
        assert_eq!((slot.id, slot.desired[0].clone()), (3, desired.clone()));
    }
    let measured = [0.01, 0.0, 0.0];
    assert_eq!(
        rig.tick(0.6, &measured),
        measured.to_vec(),
        "holds where it is"
    );
    assert_eq!(rig.tick(0.9, &[0.02, 0.0, 0.0]), measured.to_vec());
    assert!(rig.events.try_recv().is_err(), "reported once");
}

#[test]
fn the_goal_tolerance_waits_for_goal_time_then_aborts_and_holds() {
    let mut rig = Rig::new();
    rig.tick(0.0, &[0.0; NV]);
    let msg = goal_msg(&["j2", "j0", "j1"], &[(0.5, vec![0.0, 0.2, 0.0])]);
    let t = goal(&msg, false, 4, tolerances(0.0, 0.01, 0.3)).expect("names in any order");
    rig.follow(t);
    let off = [0.15, 0.0, 0.0];
    assert_eq!(rig.tick(0.5, &off)[0], 0.2, "j0 is named second");
    rig.tick(0.7, &off);
    assert!(rig.events.try_recv().is_err(), "within goal_time");
    rig.tick(0.81, &off);
    let event = rig.events.try_recv().expect("goal violated");
    assert!(
        matches!(event.outcome, GoalOutcome::GoalViolated(v) if v.joint == 0),
        "{event:?}"
    );
    assert_eq!(rig.tick(0.9, &off), off.to_vec(), "holds where it is");
}

#[test]
fn a_cancel_holds_where_the_arm_is_and_a_cancel_of_another_goal_is_ignored() {
    let mut rig = Rig::new();
    rig.tick(0.0, &[0.0; NV]);
    let msg = goal_msg(&["j0", "j1", "j2"], &[(2.0, vec![1.0, 0.0, 0.0])]);
    let t = goal(&msg, false, 5, tolerances(0.0, 0.0, 0.0)).expect("valid");
    rig.follow(t);
    rig.tick(0.5, &[0.1, 0.0, 0.0]);
    rig.inputs.try_send(ReferenceInput::Cancel(99)).unwrap();
    assert!(
        rig.tick(0.6, &[0.12, 0.0, 0.0])[0] > 0.12,
        "another goal's cancel: still moving"
    );
    rig.inputs.try_send(ReferenceInput::Cancel(5)).unwrap();
    let here = [0.14, 0.0, 0.0];
    assert_eq!(rig.tick(0.7, &here), here.to_vec());
    assert_eq!(rig.tick(1.5, &[0.15, 0.0, 0.0]), here.to_vec());
    assert!(
        rig.events.try_recv().is_err(),
        "a cancel is answered by the action server"
    );
}

#[test]
fn a_trajectory_on_the_topic_ends_the_goal_it_replaces() {
    let mut rig = Rig::new();
    rig.tick(0.0, &[0.0; NV]);
    let msg = goal_msg(&["j0", "j1", "j2"], &[(2.0, vec![1.0, 0.0, 0.0])]);
    let goal = goal(&msg, false, 6, tolerances(0.0, 0.0, 0.0)).expect("valid");
    rig.follow(goal);
    rig.tick(0.5, &[0.0; NV]);
    let topic = Trajectory::from_msg(&msg, &joints(), &limits()).expect("valid");
    rig.follow(topic);
    rig.tick(0.6, &[0.0; NV]);
    let event = rig.events.try_recv().expect("the goal ended");
    assert_eq!((event.id, event.outcome), (6, GoalOutcome::Replaced));
}

#[test]
fn goals_naming_unknown_joints_or_too_few_are_refused() {
    let unknown = goal_msg(&["j0", "j1", "elbow"], &[(1.0, vec![0.0, 0.0, 0.0])]);
    let tol = || tolerances(0.0, 0.0, 0.0);
    assert_eq!(
        goal(&unknown, true, 1, tol()).unwrap_err(),
        TrajectoryError::UnknownJoint("elbow".into())
    );
    let partial = goal_msg(&["j0"], &[(1.0, vec![0.0])]);
    assert_eq!(
        goal(&partial, false, 1, tol()).unwrap_err(),
        TrajectoryError::MissingJoint("j1".into())
    );
    let twice = goal_msg(&["j0", "j0"], &[(1.0, vec![0.0, 0.1])]);
    assert_eq!(
        goal(&twice, true, 1, tol()).unwrap_err(),
        TrajectoryError::DuplicateJoint("j0".into())
    );
    // A held joint's placeholder never trips the validator, even when 0 is outside its range.
    let joint = JointLimits {
        position_lower: 0.5,
        position_upper: 1.0,
        velocity: 10.0,
        effort: 100.0,
    };
    let narrow = ReferenceLimits::new(&[joint; NV], &[100.0; NV], &PlausibilityParams::default());
    let only_j0 = goal_msg(&["j0"], &[(1.0, vec![0.7])]);
    assert!(Trajectory::from_goal(&only_j0, &joints(), &narrow, true, 1, tol()).is_ok());
}

#[test]
fn deactivation_ends_the_goal_being_followed_at_once() {
    let mut rig = Rig::new();
    rig.tick(0.0, &[0.0; NV]);
    let msg = goal_msg(&["j0", "j1", "j2"], &[(2.0, vec![1.0, 0.0, 0.0])]);
    let t = goal(&msg, false, 8, tolerances(0.0, 0.0, 0.0)).expect("valid");
    rig.follow(t);
    rig.tick(0.5, &[0.2, 0.0, 0.0]);
    rig.reference.deactivated();
    let event = rig.events.try_recv().expect("ended");
    assert_eq!((event.id, event.outcome), (8, GoalOutcome::Stopped));
    assert!(
        !rig.reference.has_trajectory(),
        "nothing is followed any more"
    );
}
