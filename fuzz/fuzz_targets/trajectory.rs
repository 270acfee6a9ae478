//! CDR bytes of a trajectory_msgs/JointTrajectory (`~/reference`) → the node's trajectory of
//! the built-in Panda, then sampled over its duration: any message is accepted or refused,
//! and an accepted one samples finite values within the limits, never a panic.
#![no_main]

use std::sync::OnceLock;

use gpn_control::control::PlausibilityParams;
use gpn_control::control_loop::ReferenceLimits;
use gpn_dynamics::Model;
use gpn_msgs::trajectory_msgs::JointTrajectory;
use gpn_ros_io::trajectory::{Reference, Trajectory};
use libfuzzer_sys::fuzz_target;

fn robot() -> &'static (Model, ReferenceLimits) {
    static ROBOT: OnceLock<(Model, ReferenceLimits)> = OnceLock::new();
    ROBOT.get_or_init(|| {
        let model =
            Model::from_urdf_str(gpn_app::DEFAULT_URDF, "panda.urdf").expect("the built-in robot");
        let effort: Vec<f64> = model.limits().iter().map(|l| l.effort).collect();
        let limits = ReferenceLimits::new(model.limits(), &effort, &PlausibilityParams::default());
        (model, limits)
    })
}

fuzz_target!(|data: &[u8]| {
    let (model, limits) = robot();
    let Ok((msg, _)) = cdr_encoding::from_bytes::<JointTrajectory, byteorder::LittleEndian>(data)
    else {
        return;
    };
    let Ok(trajectory) = Trajectory::from_msg(&msg, model.joint_names(), limits) else {
        return;
    };
    let duration = trajectory.duration_secs();
    let nv = model.nv();
    let mut reference = Reference::new(nv);
    let _ = reference.switch(Box::new(trajectory));
    let q_now = vec![0.0; nv];
    for k in 0..=16 {
        let t = if duration.is_finite() {
            duration * k as f64 / 16.0
        } else {
            k as f64
        };
        let (q, v, a) = reference.sample(t, &q_now);
        assert!(
            q.iter().chain(v).chain(a).all(|x| x.is_finite()),
            "an accepted trajectory sampled a non-finite reference at t = {t}"
        );
    }
});
