//! Byte-for-byte: every message type, serialised by a CDR encoder (`cdr-encoding`)
//! (`cdr-encoding`, little endian, behind the 4-byte encapsulation header), equals what PyPI
//! `rosbags` writes for the same values, its field list equals rosbags' definition (the ROS 2
//! Jazzy store for standard types; our own `msg/` and `srv/` files registered for ours), and
//! rosbags' bytes decode back to the same value.
//!
//! Runs `tests/rosbags_cdr.py` with `$GPN_PYTHON`. Without it the test says so and passes,
//! except in CI (`CI=true`), where it fails: `.ci/run` creates the venv and exports it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use byteorder::LittleEndian;
use gpn_msgs::builtin_interfaces::{Duration, Time};
use gpn_msgs::diagnostic_msgs::{DiagnosticArray, DiagnosticStatus, KeyValue};
use gpn_msgs::gp_learning_node_msgs::*;
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::{
    Empty, Float64MultiArray, Header, MultiArrayDimension, MultiArrayLayout, StringMessage,
};
use gpn_msgs::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};
use gpn_msgs::{Field, RosMessage};
use serde_json::{Value, json};

fn python() -> Option<PathBuf> {
    match std::env::var_os("GPN_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("GPN_PYTHON is not set in CI: .ci/run creates it from ci/requirements.txt")
        }
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED cdr_rosbags: set GPN_PYTHON to a python with the packages of \
                 ci/requirements.txt"
            );
            None
        }
    }
}

/// Decodes rosbags' bytes and says whether they give back the sample.
type DecodesBack = Box<dyn Fn(&[u8]) -> bool>;

/// One type's sample: its name, fields, our CDR bytes, and a decoder of rosbags' bytes.
struct Case {
    type_name: &'static str,
    fields: &'static [Field],
    value: Value,
    ours: Vec<u8>,
    decodes_back: DecodesBack,
}

fn case<M: RosMessage + PartialEq + 'static>(msg: M) -> Case {
    let mut ours = vec![0x00, 0x01, 0x00, 0x00]; // CDR_LE encapsulation
    ours.extend(cdr_encoding::to_vec::<M, LittleEndian>(&msg).expect("serialise"));
    let value = serde_json::to_value(&msg).expect("json");
    Case {
        type_name: M::TYPE_NAME,
        fields: M::FIELDS,
        value,
        ours,
        decodes_back: Box::new(move |bytes: &[u8]| {
            assert_eq!(&bytes[..4], &[0x00, 0x01, 0x00, 0x00], "encapsulation");
            let (back, _) = cdr_encoding::from_bytes::<M, LittleEndian>(&bytes[4..])
                .expect("decode rosbags' bytes");
            back == msg
        }),
    }
}

fn header(sec: i32, nanosec: u32, frame: &str) -> Header {
    Header {
        stamp: Time { sec, nanosec },
        frame_id: frame.into(),
    }
}

fn panda_names(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("panda_joint{i}")).collect()
}

fn cases() -> Vec<Case> {
    vec![
        case(Time {
            sec: 1_700_000_000,
            nanosec: 123_456_789,
        }),
        case(Duration {
            sec: -3,
            nanosec: 500_000_000,
        }),
        case(header(12, 5, "base_link")),
        case(Float64MultiArray {
            layout: MultiArrayLayout {
                dim: vec![MultiArrayDimension {
                    label: "joints".into(),
                    size: 7,
                    stride: 7,
                }],
                data_offset: 0,
            },
            data: vec![1.5, -2.25, 0.0, 87.0, -12.0, 1e-300, 3.0],
        }),
        case(Float64MultiArray::default()),
        case(JointState {
            header: header(3, 999_999_999, ""),
            name: panda_names(7),
            position: vec![0.1, -0.7, 0.0, -2.3, 0.0, 1.5, 0.7],
            velocity: vec![0.01; 7],
            effort: vec![],
        }),
        case(JointTrajectory {
            header: header(1, 0, "world"),
            joint_names: panda_names(2),
            points: vec![
                JointTrajectoryPoint {
                    positions: vec![0.0, 1.0],
                    velocities: vec![0.5, -0.5],
                    accelerations: vec![],
                    effort: vec![],
                    time_from_start: Duration {
                        sec: 0,
                        nanosec: 10_000_000,
                    },
                },
                JointTrajectoryPoint {
                    positions: vec![0.1, 0.9],
                    velocities: vec![],
                    accelerations: vec![0.0, 0.0],
                    effort: vec![1.0, 2.0],
                    time_from_start: Duration { sec: 2, nanosec: 0 },
                },
            ],
        }),
        case(DiagnosticArray {
            header: header(100, 1, ""),
            status: vec![
                DiagnosticStatus {
                    level: DiagnosticStatus::WARN,
                    name: "gp_learning_node: model".into(),
                    message: "quarantined after 5 faults — nominal law".into(),
                    hardware_id: "panda".into(),
                    values: vec![
                        KeyValue {
                            key: "overruns".into(),
                            value: "3".into(),
                        },
                        KeyValue {
                            key: "σ max".into(),
                            value: "0.25".into(),
                        },
                    ],
                },
                DiagnosticStatus::default(),
            ],
        }),
        case(ResidualEstimate {
            header: header(7, 250_000_000, ""),
            model: "skygp".into(),
            joint_names: panda_names(3),
            mu: vec![0.5, -1.25, 2.0],
            sigma: vec![0.01, 0.02, 0.03],
            eta: vec![0.05, 0.1, 0.15],
            eta_thm: vec![10.0, 20.0, 30.0],
            fallback: vec![false, true, false],
            samples_seen: 123_456,
            samples_stored: 4096,
            experts: 86,
            model_us: 23.5,
            tick_us: 41.25,
            tracking_bound: 0.012,
        }),
        case(SwapModelRequest {
            plugin: "skygp".into(),
            config_json: r#"{"variant":"fast"}"#.into(),
        }),
        case(SwapModelResponse {
            success: false,
            message: "no plugin named 'nope'".into(),
        }),
        case(SaveModelRequest {
            path: "/tmp/model.gpn".into(),
        }),
        case(SaveModelResponse {
            success: true,
            message: String::new(),
        }),
        case(LoadModelRequest {
            path: "model.gpn".into(),
        }),
        case(LoadModelResponse::default()),
        case(ResetLearningRequest {
            keep_hyperparameters: true,
        }),
        case(ResetLearningResponse {
            success: true,
            message: "reset".into(),
        }),
        case(Empty::default()),
        case(StringMessage {
            data: "<robot name=\"r\"/>".into(),
        }),
        case(ChangeEvent {
            header: header(15, 2_000_000, ""),
            onset: Time {
                sec: 14,
                nanosec: 998_000_000,
            },
            source: "detected".into(),
            joint: "panda_joint2".into(),
            action: "reidentify".into(),
            description: "dynamics changed at t = 15.002 s".into(),
        }),
        case(AnnounceChangeRequest {
            description: "gripper closed on a 2 kg part".into(),
        }),
        case(AnnounceChangeResponse {
            success: true,
            message: String::new(),
        }),
    ]
}

#[test]
fn every_type_is_byte_identical_with_rosbags() {
    let Some(python) = python() else { return };
    let cases = cases();
    let package_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let request = json!({
        "package_dir": package_dir,
        "messages": cases.iter().map(|c| json!({"type": c.type_name, "value": c.value})).collect::<Vec<_>>(),
    });
    let mut child = Command::new(python)
        .arg(package_dir.join("tests/rosbags_cdr.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rosbags_cdr.py");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(request.to_string().as_bytes())
        .expect("write request");
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "rosbags_cdr.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: Value = serde_json::from_slice(&out.stdout).expect("reply JSON");
    let messages = reply["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), cases.len());
    for (case, theirs) in cases.iter().zip(messages) {
        let name = case.type_name;
        let their_fields: Vec<(String, String)> = theirs["fields"]
            .as_array()
            .expect("fields")
            .iter()
            .map(|f| {
                (
                    f[0].as_str().expect("name").into(),
                    f[1].as_str().expect("type").into(),
                )
            })
            .collect();
        let our_fields: Vec<(String, String)> = case
            .fields
            .iter()
            .map(|f| (f.name.into(), f.ros_type.into()))
            .collect();
        assert_eq!(our_fields, their_fields, "{name}: fields");
        let hex = theirs["cdr_hex"].as_str().expect("hex");
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
            .collect();
        assert_eq!(case.ours, bytes, "{name}: CDR bytes differ");
        assert!((case.decodes_back)(&bytes), "{name}: decoded value differs");
    }
}
