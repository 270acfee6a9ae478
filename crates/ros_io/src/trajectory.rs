//! The reference the tick tracks: a `trajectory_msgs/JointTrajectory` checked and converted
//! to model joint order ([`Trajectory::from_msg`]), sampled in time with splines as
//! ros2_control's joint trajectory controller does, or — before any trajectory — the pose
//! held at start ([`Reference`]).
//!
//! Interpolation between consecutive points uses what both points give: positions,
//! velocities and accelerations → quintic; positions and velocities → cubic; positions only
//! → linear. Before the first point the segment starts from the reference in force when the
//! trajectory began; after the last point its position is held at rest. Sampling allocates
//! nothing.

use std::sync::mpsc::{Receiver, SyncSender};

use gpn_control::control_loop::{
    Desired, ReferenceLimits, ReferenceRefusal, ReferenceSource, StateFrame,
};
use gpn_msgs::trajectory_msgs::JointTrajectory;

use super::goal_monitor::{self, GoalOutcome, GoalReports, GoalTolerances, TickState};

/// Why a trajectory was refused (the previous reference stays in force).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrajectoryError {
    /// No points.
    #[error("reference trajectory has no points")]
    Empty,
    /// A joint of the model is not in `joint_names`.
    #[error("reference trajectory lacks joint {0:?}")]
    MissingJoint(String),
    /// A goal names a joint the model does not have.
    #[error("trajectory names joint {0:?}, which the robot model does not have")]
    UnknownJoint(String),
    /// A name appears twice.
    #[error("reference trajectory names joint {0:?} twice")]
    DuplicateJoint(String),
    /// A point's array has the wrong length.
    #[error("reference point {point}: {field} has {found} entries for {joints} joints")]
    Length {
        /// Point index.
        point: usize,
        /// Which array.
        field: &'static str,
        /// Joints in the trajectory.
        joints: usize,
        /// Entries found.
        found: usize,
    },
    /// A value is NaN or infinite.
    #[error("reference point {point}: {field} of joint {joint:?} is not finite")]
    NonFinite {
        /// Point index.
        point: usize,
        /// Which array.
        field: &'static str,
        /// The joint.
        joint: String,
    },
    /// `header.stamp` is not a time (nanosec ≥ 10⁹): the trajectory has no start.
    #[error("reference trajectory: header.stamp has nanosec {nanosec} (≥ 10⁹), not a time")]
    Stamp {
        /// The stamp's nanoseconds.
        nanosec: u32,
    },
    /// Times must increase strictly and be ≥ 0.
    #[error("reference point {point}: time_from_start {secs} s does not increase")]
    Time {
        /// Point index.
        point: usize,
        /// Its time.
        secs: f64,
    },
    /// A point breaks a limit of the reference validator: a position outside the URDF
    /// limits, a velocity or acceleration above its limit, or a mean velocity from the
    /// previous point above the velocity limit (no interpolation could follow it).
    #[error("reference point {point}: joint {joint:?}: {what}: {value} against the limit {limit}")]
    Limit {
        /// Point index.
        point: usize,
        /// The joint.
        joint: String,
        /// Which limit.
        what: &'static str,
        /// The value.
        value: f64,
        /// The limit.
        limit: f64,
    },
}

/// Which derivatives a point carries (every point of a trajectory is checked on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Order {
    Position,
    Velocity,
    Acceleration,
}

#[derive(Debug, Clone)]
struct Point {
    t_secs: f64,
    order: Order,
    q: Vec<f64>,
    qd: Vec<f64>,
    qdd: Vec<f64>,
}

/// A checked trajectory in model joint order.
#[derive(Debug, Clone)]
pub struct Trajectory {
    /// Start time on the joint-state clock, s; None: "start when first sampled".
    start_secs: Option<f64>,
    points: Vec<Point>,
    /// The reference in force when the trajectory began (segment before the first point).
    anchor: Point,
    /// Joints a partial goal leaves out: they hold the reference in force at the switch.
    held: Vec<bool>,
    /// The action goal this trajectory serves, if any.
    goal: Option<GoalRun>,
}

/// An action goal being followed: its tolerances, checked at every tick until it ends.
#[derive(Debug, Clone)]
struct GoalRun {
    id: u64,
    tolerances: GoalTolerances,
    ended: bool,
}

impl Trajectory {
    /// Checks `msg` against the model's `joints` (model order) and the reference validator
    /// `limits`: each point's values, and the mean velocity between consecutive points.
    pub fn from_msg(
        msg: &JointTrajectory,
        joints: &[String],
        limits: &ReferenceLimits,
    ) -> Result<Self, TrajectoryError> {
        Self::parse(msg, joints, limits, false)
    }

    /// The trajectory of action goal `id`: like [`Trajectory::from_msg`], and every name must
    /// be a model joint; with `allow_partial` the joints it leaves out hold the reference in
    /// force when it starts. `tolerances` are checked at every tick ([`goal_monitor`]).
    pub fn from_goal(
        msg: &JointTrajectory,
        joints: &[String],
        limits: &ReferenceLimits,
        allow_partial: bool,
        id: u64,
        tolerances: GoalTolerances,
    ) -> Result<Self, TrajectoryError> {
        if let Some(unknown) = msg.joint_names.iter().find(|n| !joints.contains(n)) {
            return Err(TrajectoryError::UnknownJoint(unknown.clone()));
        }
        let mut trajectory = Self::parse(msg, joints, limits, allow_partial)?;
        trajectory.goal = Some(GoalRun {
            id,
            tolerances,
            ended: false,
        });
        Ok(trajectory)
    }

    fn parse(
        msg: &JointTrajectory,
        joints: &[String],
        limits: &ReferenceLimits,
        allow_partial: bool,
    ) -> Result<Self, TrajectoryError> {
        if msg.points.is_empty() {
            return Err(TrajectoryError::Empty);
        }
        // A stamp that is not a time would start the trajectory at NaN (found by fuzzing).
        let stamp = msg.header.stamp;
        if !stamp.as_secs_f64().is_finite() {
            return Err(TrajectoryError::Stamp {
                nanosec: stamp.nanosec,
            });
        }
        let n = msg.joint_names.len();
        // Column of each model joint in the message; None: held (a partial goal).
        let mut column = vec![None::<usize>; joints.len()];
        for (j, joint) in joints.iter().enumerate() {
            let mut found = msg
                .joint_names
                .iter()
                .enumerate()
                .filter(|(_, n)| *n == joint);
            column[j] = match (found.next(), found.next()) {
                (Some((k, _)), None) => Some(k),
                (Some(_), Some(_)) => return Err(TrajectoryError::DuplicateJoint(joint.clone())),
                (None, _) if allow_partial => None,
                (None, _) => return Err(TrajectoryError::MissingJoint(joint.clone())),
            };
        }
        if let Some(k) = (0..n).find(|k| msg.joint_names[..*k].contains(&msg.joint_names[*k])) {
            return Err(TrajectoryError::DuplicateJoint(msg.joint_names[k].clone()));
        }
        // Held joints' placeholders (replaced at the switch) inside the limits.
        let mut placeholder = vec![0.0; joints.len()];
        limits.clamp_position(&mut placeholder);
        let nv = joints.len();
        let mut points = Vec::with_capacity(msg.points.len());
        let mut previous_t = -1.0;
        for (i, p) in msg.points.iter().enumerate() {
            let t = p.time_from_start.as_secs_f64();
            if !(t.is_finite() && t >= 0.0 && t > previous_t) {
                return Err(TrajectoryError::Time { point: i, secs: t });
            }
            previous_t = t;
            let length = |field: &'static str, len: usize, required: bool| {
                if (len == 0 && !required) || len == n {
                    Ok(len == n)
                } else {
                    Err(TrajectoryError::Length {
                        point: i,
                        field,
                        joints: n,
                        found: len,
                    })
                }
            };
            length("positions", p.positions.len(), true)?;
            let has_v = length("velocities", p.velocities.len(), false)?;
            let has_a = length("accelerations", p.accelerations.len(), false)?;
            let order = match (has_v, has_a) {
                (true, true) => Order::Acceleration,
                (true, false) => Order::Velocity,
                _ => Order::Position,
            };
            let mut point = Point {
                t_secs: t,
                order,
                q: vec![0.0; nv],
                qd: vec![0.0; nv],
                qdd: vec![0.0; nv],
            };
            for j in 0..nv {
                let Some(k) = column[j] else {
                    point.q[j] = placeholder[j];
                    continue;
                };
                let value = |field: &'static str, values: &[f64]| -> Result<f64, TrajectoryError> {
                    let x = values.get(k).copied().unwrap_or(0.0);
                    if x.is_finite() {
                        Ok(x)
                    } else {
                        Err(TrajectoryError::NonFinite {
                            point: i,
                            field,
                            joint: joints[j].clone(),
                        })
                    }
                };
                point.q[j] = value("positions", &p.positions)?;
                point.qd[j] = value("velocities", &p.velocities)?;
                point.qdd[j] = value("accelerations", &p.accelerations)?;
            }
            let refused = |r: ReferenceRefusal| TrajectoryError::Limit {
                point: i,
                joint: joints[r.joint].clone(),
                what: r.fault.name(),
                value: r.value,
                limit: r.limit,
            };
            limits
                .check(&point.q, &point.qd, &point.qdd)
                .map_err(refused)?;
            if let Some(before) = points.last() {
                let before: &Point = before;
                limits
                    .check_step(&before.q, &point.q, point.t_secs - before.t_secs)
                    .map_err(refused)?;
            }
            points.push(point);
        }
        Ok(Self {
            start_secs: (!stamp.is_zero()).then(|| stamp.as_secs_f64()),
            anchor: Point {
                t_secs: 0.0,
                order: Order::Acceleration,
                q: vec![0.0; nv],
                qd: vec![0.0; nv],
                qdd: vec![0.0; nv],
            },
            points,
            held: column.iter().map(Option::is_none).collect(),
            goal: None,
        })
    }

    /// The action goal this trajectory serves.
    pub fn goal_id(&self) -> Option<u64> {
        self.goal.as_ref().map(|g| g.id)
    }

    /// Moves an absolute start (a stamped trajectory) by `secs`: from the sender's clock to
    /// the node's timeline. A trajectory that starts when first sampled is left alone.
    pub fn shift_start(&mut self, secs: f64) {
        if let Some(start) = self.start_secs.as_mut() {
            *start += secs;
        }
    }

    /// Duration from start to the last point, s.
    pub fn duration_secs(&self) -> f64 {
        self.points.last().map_or(0.0, |p| p.t_secs)
    }

    /// Writes the reference at `t_secs` (joint-state clock).
    fn sample(&self, t_secs: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        let tau = t_secs - self.start_secs.unwrap_or(t_secs);
        let last = &self.points[self.points.len() - 1];
        if tau >= last.t_secs {
            q.copy_from_slice(&last.q);
            qd.fill(0.0);
            qdd.fill(0.0);
            return;
        }
        let i = self.points.partition_point(|p| p.t_secs <= tau);
        let (a, b) = if i == 0 {
            (&self.anchor, &self.points[0])
        } else {
            (&self.points[i - 1], &self.points[i])
        };
        segment(a, b, tau.max(0.0), q, qd, qdd);
    }
}

/// Samples the segment a → b at time `t` (a.t ≤ t < b.t). A segment of no duration is the
/// wait before a trajectory whose first point is at its start: it holds a, at rest (the
/// splines would divide by zero: found by fuzzing).
fn segment(a: &Point, b: &Point, t: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
    let h = b.t_secs - a.t_secs;
    if h <= 0.0 {
        q.copy_from_slice(&a.q);
        qd.fill(0.0);
        qdd.fill(0.0);
        return;
    }
    let s = if h > 0.0 { (t - a.t_secs) / h } else { 1.0 };
    let order = a.order.min(b.order);
    for j in 0..q.len() {
        let (p, v, acc) = match order {
            Order::Position => {
                let v = if h > 0.0 { (b.q[j] - a.q[j]) / h } else { 0.0 };
                (a.q[j] + s * (b.q[j] - a.q[j]), v, 0.0)
            }
            Order::Velocity => cubic(a.q[j], a.qd[j], b.q[j], b.qd[j], h, s),
            Order::Acceleration => quintic(
                [a.q[j], a.qd[j], a.qdd[j]],
                [b.q[j], b.qd[j], b.qdd[j]],
                h,
                s,
            ),
        };
        q[j] = p;
        qd[j] = v;
        qdd[j] = acc;
    }
}

/// Cubic Hermite on [0, h] at normalised time s: position, velocity, acceleration.
fn cubic(p0: f64, v0: f64, p1: f64, v1: f64, h: f64, s: f64) -> (f64, f64, f64) {
    // p(τ) = c0 + c1 τ + c2 τ² + c3 τ³ with p(0)=p0, p'(0)=v0, p(h)=p1, p'(h)=v1.
    let d = p1 - p0;
    let c2 = (3.0 * d - (2.0 * v0 + v1) * h) / (h * h);
    let c3 = (-2.0 * d + (v0 + v1) * h) / (h * h * h);
    let t = s * h;
    (
        p0 + v0 * t + c2 * t * t + c3 * t * t * t,
        v0 + 2.0 * c2 * t + 3.0 * c3 * t * t,
        2.0 * c2 + 6.0 * c3 * t,
    )
}

/// Quintic through position, velocity and acceleration at both ends of [0, h].
fn quintic(a: [f64; 3], b: [f64; 3], h: f64, s: f64) -> (f64, f64, f64) {
    let [p0, v0, a0] = a;
    let [p1, v1, a1] = b;
    let (h2, h3) = (h * h, h * h * h);
    let c0 = p0;
    let c1 = v0;
    let c2 = 0.5 * a0;
    // Remaining coefficients from the end conditions (standard closed form).
    let c3 = (20.0 * (p1 - p0) - (8.0 * v1 + 12.0 * v0) * h - (3.0 * a0 - a1) * h2) / (2.0 * h3);
    let c4 = (30.0 * (p0 - p1) + (14.0 * v1 + 16.0 * v0) * h + (3.0 * a0 - 2.0 * a1) * h2)
        / (2.0 * h3 * h);
    let c5 = (12.0 * (p1 - p0) - (6.0 * v1 + 6.0 * v0) * h - (a0 - a1) * h2) / (2.0 * h3 * h2);
    let t = s * h;
    let (t2, t3, t4, t5) = (t * t, t * t * t, t * t * t * t, t * t * t * t * t);
    (
        c0 + c1 * t + c2 * t2 + c3 * t3 + c4 * t4 + c5 * t5,
        c1 + 2.0 * c2 * t + 3.0 * c3 * t2 + 4.0 * c4 * t3 + 5.0 * c5 * t4,
        2.0 * c2 + 6.0 * c3 * t + 12.0 * c4 * t2 + 20.0 * c5 * t3,
    )
}

/// The reference in force: the pose held at start until a trajectory arrives, then the
/// latest accepted trajectory. Switching samples the old reference at the switch time as the
/// new trajectory's anchor, so the reference is continuous in position and velocity.
#[derive(Debug)]
pub struct Reference {
    hold: Vec<f64>,
    holding_set: bool,
    trajectory: Option<Box<Trajectory>>,
    last_t: f64,
    q: Vec<f64>,
    qd: Vec<f64>,
    qdd: Vec<f64>,
}

impl Reference {
    /// No reference yet for `nv` joints (the first sample holds its pose).
    pub fn new(nv: usize) -> Self {
        Self {
            hold: vec![0.0; nv],
            holding_set: false,
            trajectory: None,
            last_t: 0.0,
            q: vec![0.0; nv],
            qd: vec![0.0; nv],
            qdd: vec![0.0; nv],
        }
    }

    /// Whether a trajectory is in force.
    pub fn has_trajectory(&self) -> bool {
        self.trajectory.is_some()
    }

    /// Switches to `next` at the last sampled time; returns the previous trajectory (to be
    /// dropped off the control thread). Real-time: no allocation.
    pub fn switch(&mut self, mut next: Box<Trajectory>) -> Option<Box<Trajectory>> {
        let t = self.last_t;
        if next.start_secs.is_none() {
            next.start_secs = Some(t);
        }
        let start = next.start_secs.unwrap_or(t);
        // The anchor: the current reference, placed at the switch time on the trajectory's
        // clock (clamped to [0, first point]: a trajectory that started in the past begins
        // its first segment late, one that starts later waits at the anchor).
        next.anchor.q.copy_from_slice(&self.q);
        next.anchor.qd.copy_from_slice(&self.qd);
        next.anchor.qdd.copy_from_slice(&self.qdd);
        next.anchor.t_secs = (t - start).clamp(0.0, next.points[0].t_secs);
        // Joints a partial goal left out hold the reference in force now.
        for j in 0..next.held.len() {
            if next.held[j] {
                for p in &mut next.points {
                    (p.q[j], p.qd[j], p.qdd[j]) = (self.q[j], 0.0, 0.0);
                }
            }
        }
        self.trajectory.replace(next)
    }

    /// The goal being followed, if a goal's trajectory is in force and has not ended.
    fn running_goal(&mut self) -> Option<&mut GoalRun> {
        self.trajectory.as_mut()?.goal.as_mut().filter(|g| !g.ended)
    }

    /// The action goal whose trajectory is in force.
    pub fn goal_id(&self) -> Option<u64> {
        self.trajectory.as_ref().and_then(|t| t.goal_id())
    }

    /// Drops the trajectory (returned, to be dropped off the control thread) and holds the
    /// pose measured at the next sample. Real-time.
    pub fn hold_next_pose(&mut self) -> Option<Box<Trajectory>> {
        self.holding_set = false;
        self.trajectory.take()
    }

    /// The reference at `t_secs`; `q_now` is the measured position (taken as the held pose
    /// on the first call). Real-time: no allocation.
    pub fn sample(&mut self, t_secs: f64, q_now: &[f64]) -> (&[f64], &[f64], &[f64]) {
        if !self.holding_set {
            self.hold.copy_from_slice(q_now);
            self.holding_set = true;
        }
        self.last_t = t_secs;
        match &self.trajectory {
            Some(traj) => traj.sample(t_secs, &mut self.q, &mut self.qd, &mut self.qdd),
            None => {
                self.q.copy_from_slice(&self.hold);
                self.qd.fill(0.0);
                self.qdd.fill(0.0);
            }
        }
        (&self.q, &self.qd, &self.qdd)
    }
}

/// What the spin thread sends the reference: a trajectory to follow (from the reference topic
/// or an action goal), or the cancellation of a goal.
#[derive(Debug)]
pub enum ReferenceInput {
    /// Switch to this trajectory at the next tick.
    Follow(Box<Trajectory>),
    /// Goal `id` was cancelled: if its trajectory is in force, hold where the arm is.
    Cancel(u64),
}

/// The reference source of the ROS node in control mode: the [`Reference`], switched to each
/// trajectory that arrives on the reference topic or as an action goal (through a channel
/// from the spin thread) at the next tick. Replaced trajectories go back through `trash` to
/// be dropped off the control thread. A goal's tolerances are checked at every tick and its
/// outcome and feedback reported ([`goal_monitor`]).
#[derive(Debug)]
pub struct TopicReference {
    reference: Reference,
    incoming: Option<Receiver<ReferenceInput>>,
    trash: Option<SyncSender<Box<Trajectory>>>,
    reports: Option<GoalReports>,
    /// The stamp clock's shift at the last state (sender's stamps → node time).
    shift_secs: f64,
}

impl TopicReference {
    /// Holds the first measured pose until a trajectory is switched in.
    pub fn new(nv: usize) -> Self {
        Self {
            reference: Reference::new(nv),
            incoming: None,
            trash: None,
            reports: None,
            shift_secs: 0.0,
        }
    }

    /// Takes trajectories from `incoming` and returns replaced ones through `trash`.
    pub fn fed_by(
        mut self,
        incoming: Receiver<ReferenceInput>,
        trash: SyncSender<Box<Trajectory>>,
    ) -> Self {
        self.incoming = Some(incoming);
        self.trash = Some(trash);
        self
    }

    /// Reports the outcome and feedback of action goals to `reports`.
    pub fn reporting_to(mut self, reports: GoalReports) -> Self {
        self.reports = Some(reports);
        self
    }

    /// Switches to `trajectory` (its start on the sender's clock) at the last tick's time;
    /// returns the previous one, to be dropped off the control thread. Real-time.
    pub fn switch(&mut self, mut trajectory: Box<Trajectory>) -> Option<Box<Trajectory>> {
        trajectory.shift_start(-self.shift_secs);
        self.reference.switch(trajectory)
    }
}

impl ReferenceSource for TopicReference {
    fn sample(&mut self, frame: &StateFrame, _qdd_estimate: &[f64], desired: Desired<'_>) {
        while let Some(input) = self.incoming.as_ref().and_then(|rx| rx.try_recv().ok()) {
            match input {
                ReferenceInput::Follow(next) => {
                    self.end_goal(GoalOutcome::Replaced);
                    if let Some(old) = self.switch(next) {
                        self.discard(old);
                    }
                }
                ReferenceInput::Cancel(id) => {
                    if self.reference.goal_id() == Some(id) {
                        self.hold_here();
                    }
                }
            }
        }
        self.shift_secs = frame.shift_secs();
        let (q, qd, qdd) = self.reference.sample(frame.t_secs, &frame.q);
        desired.q.copy_from_slice(q);
        desired.qd.copy_from_slice(qd);
        desired.qdd.copy_from_slice(qdd);
        self.monitor_goal(frame);
    }

    fn has_trajectory(&self) -> bool {
        self.reference.has_trajectory()
    }

    /// The validator refused the trajectory's sample: hold where the arm is (a goal being
    /// followed ends).
    fn refuse(&mut self) {
        self.end_goal(GoalOutcome::Refused);
        self.hold_here();
    }

    /// Activation: trajectories that arrived while inactive are dropped (a goal among them,
    /// or one being followed, ends); hold where the arm is.
    fn restart(&mut self) {
        while let Some(stale) = self.incoming.as_ref().and_then(|rx| rx.try_recv().ok()) {
            if let ReferenceInput::Follow(stale) = stale {
                if let (Some(id), Some(reports)) = (stale.goal_id(), self.reports.as_ref()) {
                    reports.report(id, GoalOutcome::Stopped, self.reference.last_t);
                }
                self.discard(stale);
            }
        }
        self.end_goal(GoalOutcome::Stopped);
        self.hold_here();
    }

    /// Deactivation: a goal being followed ends now (not at the next activation); the
    /// trajectory is dropped.
    fn deactivated(&mut self) {
        self.end_goal(GoalOutcome::Stopped);
        self.hold_here();
    }
}

impl TopicReference {
    /// Checks the goal being followed against its tolerances at this tick; reports its
    /// outcome (holding where the arm is on a violation) and the feedback. Real-time.
    fn monitor_goal(&mut self, frame: &StateFrame) {
        let Some(reports) = self.reports.as_ref() else {
            return;
        };
        let (q, qd, qdd) = (&self.reference.q, &self.reference.qd, &self.reference.qdd);
        let t = self.reference.last_t;
        let Some(trajectory) = self.reference.trajectory.as_mut() else {
            return;
        };
        let elapsed_secs = t - trajectory.start_secs.unwrap_or(t);
        let duration_secs = trajectory.duration_secs();
        let Some(goal) = trajectory.goal.as_mut().filter(|g| !g.ended) else {
            return;
        };
        let state = TickState {
            t_secs: t,
            elapsed_secs,
            duration_secs,
            desired: (q, qd, qdd),
            actual: (&frame.q, &frame.v),
        };
        reports.write_feedback(goal.id, &state);
        let Some(outcome) = goal_monitor::check(&goal.tolerances, &state) else {
            return;
        };
        goal.ended = true;
        reports.report(goal.id, outcome, t);
        if !matches!(outcome, GoalOutcome::Succeeded) {
            self.hold_here();
        }
    }

    /// Ends the goal being followed, if any, with `outcome`.
    fn end_goal(&mut self, outcome: GoalOutcome) {
        let t = self.reference.last_t;
        if let (Some(reports), Some(goal)) = (self.reports.as_ref(), self.reference.running_goal())
        {
            goal.ended = true;
            reports.report(goal.id, outcome, t);
        }
    }

    fn hold_here(&mut self) {
        if let Some(old) = self.reference.hold_next_pose() {
            self.discard(old);
        }
    }

    /// Drops `old` on the publish thread; if its bin is full, here (rare).
    fn discard(&self, old: Box<Trajectory>) {
        if let Some(trash) = self.trash.as_ref() {
            let _ = trash.try_send(old);
        }
    }
}
