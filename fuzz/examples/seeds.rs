//! Writes the seed corpus of the message and model-file targets (`corpus/<target>/seed_*`):
//! well-formed CDR of the messages the node takes and a well-formed model file, so that the
//! fuzzer starts from inputs that reach past the decoders; and the inputs that once failed
//! (`regression_*`, the shapes the fuzzer found; `cargo fuzz cmin` must not drop them). The URDF and parameter targets
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
    std::fs::write(dir.join(name), bytes).expect("seed");
}

fn main() {
    // The built-in Panda's joints, at the middle of their limits (the targets use it).
    let robot = gpn_dynamics::Model::from_urdf_str(gpn_app::DEFAULT_URDF, "panda.urdf")
        .expect("the built-in robot");
    let names = robot.joint_names().to_vec();
    let nv = names.len();
    let mid: Vec<f64> = robot
        .limits()
        .iter()
        .map(|l| 0.5 * (l.position_lower + l.position_upper))
        .collect();
    let shifted = |dq: f64| mid.iter().map(|q| q + dq).collect::<Vec<_>>();
    let header = |sec| Header {
        stamp: Time { sec, nanosec: 500 },
        frame_id: String::new(),
    };
    let state = |sec, effort: bool| JointState {
        header: header(sec),
        name: names.clone(),
        position: mid.clone(),
        velocity: vec![0.0; nv],
        effort: if effort { vec![1.5; nv] } else { Vec::new() },
    };
    // Two messages in a row (the target reads a stream).
    let mut two = cdr_encoding::to_vec::<_, LittleEndian>(&state(1, true)).expect("cdr");
    two.extend(cdr_encoding::to_vec::<_, LittleEndian>(&state(2, true)).expect("cdr"));
    write("joint_state", "seed_two_states", &two);
    let one = cdr_encoding::to_vec::<_, LittleEndian>(&state(1, false)).expect("cdr");
    write("joint_state", "seed_no_effort", &one);

    let point = |sec, dq| JointTrajectoryPoint {
        positions: shifted(dq),
        velocities: vec![0.0; nv],
        accelerations: Vec::new(),
        effort: Vec::new(),
        time_from_start: Duration { sec, nanosec: 0 },
    };
    let trajectory = JointTrajectory {
        header: header(0),
        joint_names: names.clone(),
        points: vec![point(1, 0.05), point(2, -0.05)],
    };
    let cdr = |t: &JointTrajectory| cdr_encoding::to_vec::<_, LittleEndian>(t).expect("cdr");
    write("trajectory", "seed_two_points", &cdr(&trajectory));
    // header.stamp with nanosec ≥ 10⁹: not a time (was accepted and started at NaN).
    let mut bad_stamp = trajectory.clone();
    bad_stamp.header.stamp = Time {
        sec: 0,
        nanosec: 1_560_281_588,
    };
    write("trajectory", "regression_stamp_nanosec", &cdr(&bad_stamp));
    // Stamped in the future, first point at 0 s (was NaN while waiting for the start).
    let mut future = trajectory.clone();
    future.header.stamp = Time {
        sec: 201_261_056,
        nanosec: 500,
    };
    future.points[0].time_from_start = Duration { sec: 0, nanosec: 0 };
    write(
        "trajectory",
        "regression_future_start_point_at_zero",
        &cdr(&future),
    );

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
            accel_range: Vec::new(),
        },
        state: vec![1, 2, 3, 4],
    };
    write("model_file", "seed_small", &file.to_bytes());
}
