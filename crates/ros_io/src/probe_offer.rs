//! Side query (b) on the ROS graph: a probing trajectory the learning worker planned after a
//! change ([`gpn_control::learn::ProbeOffer`]) becomes a `trajectory_msgs/JointTrajectory` on
//! `~/probe_offer` (reliable, transient local). The node never runs it on its own: whoever
//! commands the robot (an operator, a task planner) decides, and executes it by sending it to
//! the node's reference topic, where it is checked again like any reference.
//!
//! The message holds the plan exactly: one point per waypoint with position, velocity and
//! acceleration, so the reference's quintic interpolation between points reproduces the
//! plan's rest-to-rest quintic segments. `header.stamp` is zero ("start on receipt"); the
//! first point is the pose the robot had when the change was noticed, at `time_from_start` 0.

use gpn_control::learn::{ProbeOffer, ProbePlan};
use gpn_msgs::builtin_interfaces::Duration;
use gpn_msgs::std_msgs::Header;
use gpn_msgs::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};

/// The plan as a trajectory over `joints` (the model's joint order).
pub fn offer_message(plan: &ProbePlan, joints: &[String]) -> JointTrajectory {
    let last = plan.waypoints.len().saturating_sub(1);
    let rest = vec![0.0; plan.boundary_v.len()];
    let points = plan
        .waypoints
        .iter()
        .enumerate()
        .map(|(k, q)| {
            let boundary = k == 0 || k == last;
            let (v, a) = if boundary {
                (&plan.boundary_v, &plan.boundary_a)
            } else {
                (&rest, &rest)
            };
            JointTrajectoryPoint {
                positions: q.clone(),
                velocities: v.clone(),
                accelerations: a.clone(),
                effort: Vec::new(),
                time_from_start: duration(k as f64 * plan.segment_s),
            }
        })
        .collect();
    JointTrajectory {
        header: Header::default(),
        joint_names: joints.to_vec(),
        points,
    }
}

/// One line for the log: what was offered, or why nothing was.
pub fn describe_offer(offer: &ProbeOffer) -> String {
    match &offer.plan {
        Ok(plan) => format!(
            "probe offered on ~/probe_offer after the change at t = {:.3} s: {} waypoints, {:.1} s, \
             worst |τ_nom + μ| + βσ at {:.0} % of the effort limit, planned in {:.0} ms",
            offer.onset_secs,
            plan.waypoints.len().saturating_sub(2),
            plan.duration_s(),
            100.0 * plan.worst_effort_ratio,
            offer.plan_ms
        ),
        Err(refusal) => format!(
            "no probe offered after the change at t = {:.3} s: {refusal}",
            offer.onset_secs
        ),
    }
}

fn duration(secs: f64) -> Duration {
    let whole = secs.floor();
    Duration {
        sec: whole as i32,
        nanosec: ((secs - whole) * 1e9).round().min(999_999_999.0) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{Reference, Trajectory};
    use gpn_control::control::PlausibilityParams;
    use gpn_control::control_loop::ReferenceLimits;
    use gpn_control::learn::ProbeRefusal;
    use gpn_dynamics::JointLimits;

    fn plan() -> ProbePlan {
        let start = vec![0.1, -0.7, 0.0, -2.3, 0.0, 1.5, 0.8];
        let mut a = start.clone();
        a[0] += 0.3;
        a[3] -= 0.2;
        let mut b = start.clone();
        b[5] -= 0.4;
        ProbePlan {
            waypoints: vec![start.clone(), a, b, start],
            boundary_v: vec![0.0; 7],
            boundary_a: vec![0.0; 7],
            segment_s: 1.25,
            worst_effort_ratio: 0.5,
            checked: 0,
        }
    }

    fn limits() -> ReferenceLimits {
        let joint = JointLimits {
            position_lower: -3.0,
            position_upper: 3.0,
            velocity: 2.0,
            effort: 87.0,
        };
        ReferenceLimits::new(&[joint; 7], &[87.0; 7], &PlausibilityParams::default())
    }

    #[test]
    fn the_offer_is_the_plan_once_the_node_follows_it_as_a_reference() {
        let plan = plan();
        let joints: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
        let msg = offer_message(&plan, &joints);
        assert_eq!(msg.points.len(), 4);
        assert_eq!(msg.points[3].time_from_start.sec, 3);
        assert_eq!(msg.points[3].time_from_start.nanosec, 750_000_000);

        let trajectory = Trajectory::from_msg(&msg, &joints, &limits()).expect("accepted");
        let mut reference = Reference::new(7);
        reference.sample(10.0, &plan.waypoints[0]);
        assert!(reference.switch(Box::new(trajectory)).is_none());
        let (mut q, mut v, mut a) = (vec![0.0; 7], vec![0.0; 7], vec![0.0; 7]);
        let mut worst = 0.0_f64;
        for k in 0..=400 {
            let t = k as f64 * 0.01;
            plan.sample(t, &mut q, &mut v, &mut a);
            let (rq, rv, ra) = reference.sample(10.0 + t, &plan.waypoints[0]);
            for j in 0..7 {
                worst = worst
                    .max((rq[j] - q[j]).abs())
                    .max((rv[j] - v[j]).abs() / 10.0)
                    .max((ra[j] - a[j]).abs() / 100.0);
            }
        }
        assert!(worst < 1e-9, "reference vs plan differ by {worst:e}");
    }

    #[test]
    fn joint_order_is_the_models_and_refusals_are_described() {
        let joints: Vec<String> = ["b", "a", "c", "d", "e", "f", "g"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let msg = offer_message(&plan(), &joints);
        assert_eq!(msg.joint_names, joints);
        let refused = ProbeOffer {
            t_secs: 15.0,
            onset_secs: 14.9,
            plan: Err(ProbeRefusal::JointLimit {
                joint: 3,
                t_secs: 1.2,
            }),
            plan_ms: 4.0,
        };
        let line = describe_offer(&refused);
        assert!(
            line.contains("no probe offered") && line.contains("joint 3"),
            "{line}"
        );
        let offered = ProbeOffer {
            plan: Ok(plan()),
            ..refused
        };
        let line = describe_offer(&offered);
        assert!(
            line.contains("2 waypoints") && line.contains("3.8 s"),
            "{line}"
        );
    }
}
