//! ROS-node issue: the reference trajectory — spline segments meet their end conditions, a
//! densely sampled sine is reproduced, switching is continuous, bad trajectories are refused.

use gp_node::control::PlausibilityParams;
use gp_node::control_loop::ReferenceLimits;
use gp_node::robot::JointLimits;
use gp_node::ros::{Reference, Trajectory, TrajectoryError};
use gpn_msgs::builtin_interfaces::{Duration, Time};
use gpn_msgs::std_msgs::Header;
use gpn_msgs::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("j{i}")).collect()
}

fn free_limits(n: usize) -> ReferenceLimits {
    let joint = JointLimits {
        position_lower: -3.0,
        position_upper: 3.0,
        velocity: 10.0,
        effort: 100.0,
    };
    ReferenceLimits::new(
        &vec![joint; n],
        &vec![100.0; n],
        &PlausibilityParams::default(),
    )
}

fn point(t: f64, q: &[f64], qd: &[f64], qdd: &[f64]) -> JointTrajectoryPoint {
    JointTrajectoryPoint {
        positions: q.to_vec(),
        velocities: qd.to_vec(),
        accelerations: qdd.to_vec(),
        effort: vec![],
        time_from_start: Duration::from_secs_f64(t),
    }
}

fn trajectory(
    start_secs: f64,
    joint_names: Vec<String>,
    points: Vec<JointTrajectoryPoint>,
) -> JointTrajectory {
    JointTrajectory {
        header: Header {
            stamp: Time::from_secs_f64(start_secs),
            frame_id: String::new(),
        },
        joint_names,
        points,
    }
}

/// Samples `r` at `t` into owned vectors.
fn at(r: &mut Reference, t: f64, q_now: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (q, qd, qdd) = r.sample(t, q_now);
    (q.to_vec(), qd.to_vec(), qdd.to_vec())
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn quintic_segment_meets_position_velocity_and_acceleration_at_both_ends() {
    let msg = trajectory(
        10.0,
        names(1),
        vec![
            point(0.0, &[0.2], &[0.5], &[-1.0]),
            point(0.8, &[-0.4], &[1.5], &[2.0]),
        ],
    );
    let t = Trajectory::from_msg(&msg, &names(1), &free_limits(1)).expect("valid");
    let mut r = Reference::new(1);
    r.sample(9.0, &[0.0]);
    r.switch(Box::new(t));
    let (q, qd, qdd) = at(&mut r, 10.0, &[0.0]);
    assert!(close(q[0], 0.2, 1e-12) && close(qd[0], 0.5, 1e-12) && close(qdd[0], -1.0, 1e-9));
    let (q, qd, qdd) = at(&mut r, 10.8 - 1e-9, &[0.0]);
    assert!(close(q[0], -0.4, 1e-8), "q {q:?}");
    assert!(close(qd[0], 1.5, 1e-6), "qd {qd:?}");
    assert!(close(qdd[0], 2.0, 1e-5), "qdd {qdd:?}");
    // Velocity is the derivative of position inside the segment.
    let h = 1e-6;
    let (q1, _, _) = at(&mut r, 10.3 - h, &[0.0]);
    let (q2, qd_mid, _) = at(&mut r, 10.3 + h, &[0.0]);
    let (_, qd_mid2, qdd_mid) = at(&mut r, 10.3, &[0.0]);
    assert!(close((q2[0] - q1[0]) / (2.0 * h), qd_mid2[0], 1e-6));
    let (_, qd_a, _) = at(&mut r, 10.3 - h, &[0.0]);
    assert!(close((qd_mid[0] - qd_a[0]) / (2.0 * h), qdd_mid[0], 1e-4));
    // After the last point: held at rest.
    let (q, qd, qdd) = at(&mut r, 12.0, &[0.0]);
    assert_eq!((q[0], qd[0], qdd[0]), (-0.4, 0.0, 0.0));
}

#[test]
fn cubic_and_linear_segments_use_what_the_points_give() {
    let cubic = trajectory(
        1.0,
        names(1),
        vec![
            point(0.0, &[0.0], &[1.0], &[]),
            point(1.0, &[1.0], &[-1.0], &[]),
        ],
    );
    let mut r = Reference::new(1);
    r.sample(0.5, &[0.0]);
    r.switch(Box::new(
        Trajectory::from_msg(&cubic, &names(1), &free_limits(1)).expect("valid"),
    ));
    let (q, qd, _) = at(&mut r, 1.0, &[0.0]);
    assert!(close(q[0], 0.0, 1e-12) && close(qd[0], 1.0, 1e-12));
    let (q, qd, _) = at(&mut r, 2.0 - 1e-9, &[0.0]);
    assert!(close(q[0], 1.0, 1e-8) && close(qd[0], -1.0, 1e-6));

    let linear = trajectory(
        1.0,
        names(2),
        vec![
            point(0.0, &[0.0, 1.0], &[], &[]),
            point(2.0, &[1.0, -1.0], &[], &[]),
        ],
    );
    let mut r = Reference::new(2);
    r.sample(0.0, &[0.0, 1.0]);
    r.switch(Box::new(
        Trajectory::from_msg(&linear, &names(2), &free_limits(2)).expect("valid"),
    ));
    let (q, qd, qdd) = at(&mut r, 2.0, &[0.0, 0.0]);
    assert!(close(q[0], 0.5, 1e-12) && close(q[1], 0.0, 1e-12));
    assert!(close(qd[0], 0.5, 1e-12) && close(qd[1], -1.0, 1e-12));
    assert_eq!(qdd, vec![0.0, 0.0]);
}

/// A sine sampled every 10 ms with positions, velocities and accelerations (what the MuJoCo
/// driver publishes) is reproduced between the points to well under a microradian.
#[test]
fn a_densely_sampled_sine_is_reproduced() {
    let (a, w) = (0.3, 2.0 * std::f64::consts::PI * 0.67);
    let points = (0..=300)
        .map(|k| {
            let t = k as f64 * 0.01;
            point(
                t,
                &[a * (w * t).sin()],
                &[a * w * (w * t).cos()],
                &[-a * w * w * (w * t).sin()],
            )
        })
        .collect();
    let msg = trajectory(5.0, names(1), points);
    let mut r = Reference::new(1);
    r.sample(4.99, &[0.0]);
    r.switch(Box::new(
        Trajectory::from_msg(&msg, &names(1), &free_limits(1)).expect("valid"),
    ));
    let mut worst: f64 = 0.0;
    for k in 0..3000 {
        let tau = k as f64 * 0.001 + 0.0003;
        let (q, qd, qdd) = at(&mut r, 5.0 + tau, &[0.0]);
        worst = worst.max((q[0] - a * (w * tau).sin()).abs());
        assert!(close(qd[0], a * w * (w * tau).cos(), 1e-5));
        assert!(close(qdd[0], -a * w * w * (w * tau).sin(), 1e-3));
    }
    assert!(worst < 1e-7, "worst position error {worst}");
}

#[test]
fn holds_the_start_pose_until_a_trajectory_and_joins_it_continuously() {
    let mut r = Reference::new(2);
    let (q, qd, _) = at(&mut r, 1.0, &[0.4, -0.2]);
    assert_eq!((q, qd), (vec![0.4, -0.2], vec![0.0, 0.0]));
    // Later measurements do not move the held pose.
    let (q, _, _) = at(&mut r, 1.5, &[0.0, 0.0]);
    assert_eq!(q, vec![0.4, -0.2]);
    // A trajectory stamped zero starts at the next sample, from the held pose.
    let msg = trajectory(
        0.0,
        names(2),
        vec![point(1.0, &[0.0, 0.0], &[0.0, 0.0], &[0.0, 0.0])],
    );
    r.switch(Box::new(
        Trajectory::from_msg(&msg, &names(2), &free_limits(2)).expect("valid"),
    ));
    let (q, qd, _) = at(&mut r, 1.5, &[0.0, 0.0]);
    assert!(close(q[0], 0.4, 1e-12) && close(q[1], -0.2, 1e-12) && qd == vec![0.0, 0.0]);
    let (q, _, _) = at(&mut r, 2.0, &[0.0, 0.0]);
    assert!(
        close(q[0], 0.2, 1e-12),
        "half way along a symmetric quintic: {q:?}"
    );
    let (q, _, _) = at(&mut r, 2.5, &[0.0, 0.0]);
    assert_eq!(q, vec![0.0, 0.0]);
}

/// A trajectory stamped in the future whose first point is at its start (MoveIt's first
/// point is the current state, at 0 s): the reference waits at the held pose, at rest, until
/// the stamp, then follows the points. It was NaN while waiting (found by fuzzing).
#[test]
fn a_future_trajectory_starting_with_a_point_at_zero_waits_at_rest() {
    let mut r = Reference::new(2);
    at(&mut r, 1.0, &[0.4, -0.2]);
    let msg = trajectory(
        3.0,
        names(2),
        vec![
            point(0.0, &[0.4, -0.2], &[0.0, 0.0], &[]),
            point(1.0, &[0.0, 0.0], &[0.0, 0.0], &[]),
        ],
    );
    r.switch(Box::new(
        Trajectory::from_msg(&msg, &names(2), &free_limits(2)).expect("valid"),
    ));
    for t in [1.0, 2.0, 2.999] {
        let (q, qd, qdd) = at(&mut r, t, &[0.0, 0.0]);
        assert_eq!(
            (q, qd, qdd),
            (vec![0.4, -0.2], vec![0.0; 2], vec![0.0; 2]),
            "t {t}"
        );
    }
    let (q, _, _) = at(&mut r, 3.5, &[0.0, 0.0]);
    assert!(
        close(q[0], 0.2, 1e-12),
        "half way to the second point: {q:?}"
    );
    let (q, _, _) = at(&mut r, 4.0, &[0.0, 0.0]);
    assert_eq!(q, vec![0.0, 0.0]);
}

#[test]
fn joints_are_matched_by_name_and_extra_names_are_ignored() {
    let msg = trajectory(
        1.0,
        vec!["j1".into(), "gripper".into(), "j0".into()],
        vec![point(0.0, &[1.0, 9.0, 2.0], &[], &[])],
    );
    let mut r = Reference::new(2);
    r.sample(0.0, &[0.0, 0.0]);
    r.switch(Box::new(
        Trajectory::from_msg(&msg, &names(2), &free_limits(2)).expect("valid"),
    ));
    let (q, _, _) = at(&mut r, 1.0, &[0.0, 0.0]);
    assert_eq!(q, vec![2.0, 1.0]);
}

#[test]
fn bad_trajectories_are_refused_with_the_reason() {
    let j = names(2);
    let lim = free_limits(2);
    let ok_point = || point(0.5, &[0.0, 0.0], &[], &[]);
    let check = |msg: JointTrajectory| {
        Trajectory::from_msg(&msg, &j, &lim)
            .map(|_| ())
            .unwrap_err()
    };
    // Points for the two joints, in order.
    let check_points = |points| check(trajectory(1.0, j.clone(), points));

    assert_eq!(check_points(vec![]), TrajectoryError::Empty);
    assert!(matches!(
        check(trajectory(1.0, vec!["j0".into()], vec![point(0.5, &[0.0], &[], &[])])),
        TrajectoryError::MissingJoint(n) if n == "j1"
    ));
    assert!(matches!(
        check(trajectory(1.0, vec!["j0".into(), "j1".into(), "j0".into()], vec![point(0.5, &[0.0, 0.0, 0.0], &[], &[])])),
        TrajectoryError::DuplicateJoint(n) if n == "j0"
    ));
    // A point with too few positions, or velocities for only one of two joints.
    for (field, bad) in [
        ("positions", point(0.5, &[0.0], &[], &[])),
        ("velocities", point(0.5, &[0.0, 0.0], &[1.0], &[])),
    ] {
        let err = check_points(vec![bad]);
        assert!(
            matches!(err, TrajectoryError::Length { field: f, .. } if f == field),
            "{field}: {err:?}"
        );
    }
    assert!(matches!(
        check_points(vec![point(0.5, &[0.0, f64::NAN], &[], &[])]),
        TrajectoryError::NonFinite {
            field: "positions",
            ..
        }
    ));
    assert!(matches!(
        check_points(vec![ok_point(), point(0.5, &[0.0, 0.0], &[], &[])]),
        TrajectoryError::Time { point: 1, .. }
    ));
    assert!(matches!(
        check_points(vec![point(0.5, &[0.0, 3.5], &[], &[])]),
        TrajectoryError::Limit { point: 0, .. }
    ));
    // A stamp that is not a time (nanosec ≥ 10⁹) would start the trajectory at NaN and the
    // reference with it (found by fuzz/fuzz_targets/trajectory.rs).
    let mut bad_stamp = trajectory(1.0, j.clone(), vec![ok_point()]);
    bad_stamp.header.stamp = Time {
        sec: 0,
        nanosec: 1_560_281_588,
    };
    assert!(matches!(
        check(bad_stamp),
        TrajectoryError::Stamp {
            nanosec: 1_560_281_588
        }
    ));
}
