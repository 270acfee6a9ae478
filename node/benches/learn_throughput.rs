//! Criterion bench of `gp-node learn`'s throughput: joint states replayed per second through
//! the node's reader and learner (SkyGP, the built-in parameters) from an MCAP recording of
//! the built-in Panda, written here once: 20 s at 1 kHz of a sinusoidal motion inside the
//! joint limits, with measured efforts τ = RNEA(q, q̇, q̈) + a smooth residual (a payload-like
//! term and viscous friction). Criterion reports elements (joint states) per second; each
//! iteration is a whole replay (scan, learn, hold-out scoring, model file). Two cases: with
//! the first hyperparameter fit (a one-off of a few seconds that the replay waits for, as
//! the simulator does) and with fixed hyperparameters (`model.config.hyper`: the steady
//! rate of reading, gating and learning).
//!
//! Run: `cargo bench -p gp_node --bench learn_throughput -- --warm-up-time 1 --measurement-time 20`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use byteorder::LittleEndian;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gp_node::app::{DEFAULT_PARAMS_YAML, DEFAULT_URDF, NodeParams};
use gp_node::bag::Recording;
use gp_node::replay::{LearnOptions, Progress, ReplayTopics};
use gp_node::robot::{Data, Model, rnea};
use gpn_msgs::builtin_interfaces::Time;
use gpn_msgs::sensor_msgs::JointState;

const SECONDS: f64 = 20.0;
const RATE_HZ: f64 = 1000.0;

/// Writes the recording (one MCAP file) and the URDF into `dir`; returns the states written.
fn write_recording(dir: &Path) -> u64 {
    std::fs::create_dir_all(dir).expect("bench dir");
    std::fs::write(dir.join("panda.urdf"), DEFAULT_URDF).expect("urdf");
    let robot = Model::from_urdf_str(DEFAULT_URDF, "panda").expect("built-in robot");
    let mut data = Data::new(&robot);
    let nv = robot.nv();
    let names = robot.joint_names().to_vec();
    let file = std::fs::File::create(dir.join("recording.mcap")).expect("mcap file");
    let mut writer = mcap::Writer::new(std::io::BufWriter::new(file)).expect("mcap writer");
    let schema = writer
        .add_schema("sensor_msgs/msg/JointState", "ros2msg", b"")
        .expect("schema");
    let channel = writer
        .add_channel(schema, "/joint_states", "cdr", &BTreeMap::new())
        .expect("channel");
    let n = (SECONDS * RATE_HZ) as u64;
    let (mut q, mut v, mut a) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
    for k in 0..n {
        let t = k as f64 / RATE_HZ;
        for j in 0..nv {
            let lim = &robot.limits()[j];
            let (mid, half) = (
                0.5 * (lim.position_lower + lim.position_upper),
                0.25 * (lim.position_upper - lim.position_lower).min(2.0),
            );
            let w = 0.6 + 0.17 * j as f64;
            q[j] = mid + half * (w * t).sin();
            v[j] = half * w * (w * t).cos();
            a[j] = -half * w * w * (w * t).sin();
        }
        let tau = rnea(&robot, &mut data, &q, &v, &a).expect("rnea").to_vec();
        let effort: Vec<f64> = (0..nv)
            .map(|j| tau[j] + 0.4 * q[j].sin() * (1.0 + 0.1 * a[j]) + 0.3 * v[j])
            .collect();
        let stamp_ns = 1_700_000_000_000_000_000 + k * 1_000_000;
        let msg = JointState {
            header: gpn_msgs::std_msgs::Header {
                stamp: Time {
                    sec: (stamp_ns / 1_000_000_000) as i32,
                    nanosec: (stamp_ns % 1_000_000_000) as u32,
                },
                frame_id: String::new(),
            },
            name: names.clone(),
            position: q.clone(),
            velocity: v.clone(),
            effort,
        };
        let mut bytes = vec![0, 1, 0, 0];
        bytes.extend(cdr_encoding::to_vec::<_, LittleEndian>(&msg).expect("cdr"));
        writer
            .write_to_known_channel(
                &mcap::records::MessageHeader {
                    channel_id: channel,
                    sequence: k as u32,
                    log_time: stamp_ns + 500_000,
                    publish_time: stamp_ns,
                },
                &bytes,
            )
            .expect("message");
    }
    writer.finish().expect("finish");
    n
}

fn throughput(c: &mut Criterion) {
    let dir: PathBuf = std::env::temp_dir().join(format!("gpn-learn-bench-{}", std::process::id()));
    let states = write_recording(&dir);
    let mut params = NodeParams::from_yaml(DEFAULT_PARAMS_YAML).expect("built-in parameters");
    params.robot.urdf = dir.join("panda.urdf");
    let d = params.learn.input_layout(7).dim();
    let mut fixed = params.clone();
    fixed.model.config["hyper"] = serde_json::json!({
        "sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": vec![1.0; d]
    });
    let recording = Recording::open(&dir.join("recording.mcap")).expect("recording");
    let mut group = c.benchmark_group("learn");
    group.sample_size(10);
    group.throughput(Throughput::Elements(states));
    for (name, params) in [
        ("skygp_20s_first_fit", params),
        ("skygp_20s_fixed_hyper", fixed),
    ] {
        let options = LearnOptions {
            topics: ReplayTopics::of(&params.ros.topics),
            params,
            hold_out: 0.1,
            out: dir.join("model.gpn"),
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                let report =
                    gp_node::replay::learn(&recording, &options, &Arc::new(Progress::default()))
                        .expect("learn");
                assert_eq!(report.joint_states, states);
            });
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, throughput);
criterion_main!(benches);
