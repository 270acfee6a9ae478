//! Writes the seed corpus of the message and model-file targets (`corpus/<target>/seed_*`):
//! well-formed CDR of the messages the node takes and a well-formed model file, so that the
//! fuzzer starts from inputs that reach past the decoders. The URDF and parameter targets
//! start from the repository's own files (`ci/fuzz.sh` passes `urdf/` and `config/`).
//!
//!     cargo run --manifest-path fuzz/Cargo.toml --example seeds

use std::path::Path;

use byteorder::LittleEndian;
use gpn_msgs::builtin_interfaces::{Duration, Time};
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::Header;
use gpn_msgs::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};
use gpn_plugin_host::file::{ModelFile, ModelFileHeader};

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    std::fs::create_dir_all(&dir).expect("corpus folder");
    std::fs::write(dir.join(format!("seed_{name}")), bytes).expect("seed");
}

fn main() {
    let names: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
    let header = |sec| Header {
        stamp: Time { sec, nanosec: 500 },
        frame_id: String::new(),
    };
    let state = |sec, effort: bool| JointState {
        header: header(sec),
        name: names.clone(),
        position: vec![0.1; 7],
        velocity: vec![0.0; 7],
        effort: if effort { vec![1.5; 7] } else { Vec::new() },
    };
    // Two messages in a row (the target reads a stream).
    let mut two = cdr_encoding::to_vec::<_, LittleEndian>(&state(1, true)).expect("cdr");
    two.extend(cdr_encoding::to_vec::<_, LittleEndian>(&state(2, true)).expect("cdr"));
    write("joint_state", "two_states", &two);
    let one = cdr_encoding::to_vec::<_, LittleEndian>(&state(1, false)).expect("cdr");
    write("joint_state", "no_effort", &one);

    let point = |sec, q| JointTrajectoryPoint {
        positions: vec![q; 7],
        velocities: vec![0.0; 7],
        accelerations: Vec::new(),
        effort: Vec::new(),
        time_from_start: Duration { sec, nanosec: 0 },
    };
    let trajectory = JointTrajectory {
        header: header(0),
        joint_names: names.clone(),
        points: vec![point(1, 0.2), point(2, -0.1)],
    };
    let bytes = cdr_encoding::to_vec::<_, LittleEndian>(&trajectory).expect("cdr");
    write("trajectory", "two_points", &bytes);

    let file = ModelFile {
        header: ModelFileHeader {
            plugin: "skygp".into(),
            plugin_version: "0.1.0".into(),
            config: serde_json::json!({"variant": "dense"}),
            hyper: serde_json::Value::Null,
            output_mean: vec![0.0; 7],
            output_std: vec![1.0; 7],
            input_dim: 21,
            friction_feature_velocity: 0.0,
            output_dim: 7,
            samples_seen: 10,
        },
        state: vec![1, 2, 3, 4],
    };
    write("model_file", "small", &file.to_bytes());
}
