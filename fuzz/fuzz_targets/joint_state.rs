//! CDR bytes of a sensor_msgs/JointState, as a peer could send them → the node's reader of
//! the built-in Panda: any message is read into the frame or refused, never a panic.
#![no_main]

use std::sync::OnceLock;
use std::time::Instant;

use gpn_app::ros_params::TorqueSource;
use gpn_control::control_loop::StateFrame;
use gpn_msgs::sensor_msgs::JointState;
use gpn_ros_io::joint_state::JointStateReader;
use libfuzzer_sys::fuzz_target;

fn joints() -> &'static [String] {
    static JOINTS: OnceLock<Vec<String>> = OnceLock::new();
    JOINTS.get_or_init(|| {
        gpn_dynamics::Model::from_urdf_str(gpn_app::DEFAULT_URDF, "panda.urdf")
            .expect("the built-in robot")
            .joint_names()
            .to_vec()
    })
}

fuzz_target!(|data: &[u8]| {
    // A stream of messages: each starts where the previous one's bytes end.
    let joints = joints();
    let mut reader = JointStateReader::new(joints, TorqueSource::Measured, false);
    let mut frame = StateFrame::new(joints.len());
    let mut rest = data;
    while !rest.is_empty() {
        let Ok((msg, used)) = cdr_encoding::from_bytes::<JointState, byteorder::LittleEndian>(rest)
        else {
            return;
        };
        let _ = reader.read(&msg, None, Instant::now(), &mut frame);
        rest = &rest[used.max(1).min(rest.len())..];
    }
});
