//! Prints what the `trajectory` target makes of one input: the decoded message, whether the
//! node accepts it (and why not) and the reference sampled over its duration.
//!
//!     cargo run --manifest-path fuzz/Cargo.toml --example show_trajectory -- FILE

use byteorder::LittleEndian;
use gpn_control::control::PlausibilityParams;
use gpn_control::control_loop::ReferenceLimits;
use gpn_msgs::trajectory_msgs::JointTrajectory;
use gpn_ros_io::trajectory::{Reference, Trajectory};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: show_trajectory FILE");
    let bytes = std::fs::read(&path).expect("read the input");
    let (msg, _) = match cdr_encoding::from_bytes::<JointTrajectory, LittleEndian>(&bytes) {
        Ok(decoded) => decoded,
        Err(e) => return println!("not a JointTrajectory: {e}"),
    };
    println!("{msg:?}");
    let model = gpn_dynamics::Model::from_urdf_str(gpn_app::DEFAULT_URDF, "panda.urdf")
        .expect("the built-in robot");
    let effort: Vec<f64> = model.limits().iter().map(|l| l.effort).collect();
    let limits = ReferenceLimits::new(model.limits(), &effort, &PlausibilityParams::default());
    let trajectory = match Trajectory::from_msg(&msg, model.joint_names(), &limits) {
        Ok(t) => t,
        Err(e) => return println!("refused: {e}"),
    };
    println!("{trajectory:?}");
    let duration = trajectory.duration_secs();
    let mut reference = Reference::new(model.nv());
    let _ = reference.switch(Box::new(trajectory));
    for k in 0..=16 {
        let t = duration * k as f64 / 16.0;
        let (q, v, a) = reference.sample(t, &vec![0.0; model.nv()]);
        println!("t {t}: q {q:?} v {v:?} a {a:?}");
    }
}
