//! Writing a rosbag2 recording as Jazzy's `ros2 bag record -s mcap` does: a folder with one
//! MCAP file (profile `ros2`, schemas in `ros2msg`, CDR messages, zstd chunks) and a
//! `metadata.yaml` of format version 9, written when the recording is finished.
//!
//! Synchronous and single-threaded: the caller decides which thread writes (the node's
//! recorder thread, which nothing real-time waits on).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use gpn_msgs::RosMessage;
use serde::Serialize;

use crate::BagError;

/// The `metadata.yaml` format version Jazzy writes.
pub const METADATA_VERSION: u32 = 9;

/// A topic's offered QoS, as the metadata records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qos {
    /// Reliable (else best effort).
    pub reliable: bool,
    /// Transient local (else volatile).
    pub transient_local: bool,
    /// History depth (keep last).
    pub depth: u32,
}

impl Qos {
    /// Reliable, volatile, keep last 10: the ROS 2 default.
    pub const DEFAULT: Self = Self {
        reliable: true,
        transient_local: false,
        depth: 10,
    };
    /// Best effort, volatile, keep last 5: ROS 2's sensor-data profile.
    pub const SENSOR_DATA: Self = Self {
        reliable: false,
        transient_local: false,
        depth: 5,
    };
    /// Reliable, transient local, keep last 1: a latched topic (`/robot_description`).
    pub const LATCHED: Self = Self {
        reliable: true,
        transient_local: true,
        depth: 1,
    };
}

/// A topic added to a [`BagWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicId(usize);

struct Topic {
    name: String,
    type_name: &'static str,
    qos: Qos,
    channel: u16,
    count: u64,
}

/// What a finished recording holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BagSummary {
    /// The folder.
    pub path: PathBuf,
    /// Messages written, per topic (in the order topics were added).
    pub counts: Vec<(String, u64)>,
    /// Log time of the first and the last message, ns (None: no message).
    pub log_range_ns: Option<(u64, u64)>,
}

/// A rosbag2 recording being written.
pub struct BagWriter {
    dir: PathBuf,
    file_name: String,
    mcap: mcap::Writer<BufWriter<File>>,
    topics: Vec<Topic>,
    sequence: u32,
    range: Option<(u64, u64)>,
}

fn mcap_error(file: &Path, e: mcap::McapError) -> BagError {
    BagError::Mcap {
        file: file.to_path_buf(),
        message: e.to_string(),
    }
}

/// The CDR of `msg` as ROS 2 publishes it: little-endian, with its encapsulation header.
pub fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0x00, 0x01, 0x00, 0x00];
    let body =
        cdr_encoding::to_vec::<T, byteorder::LittleEndian>(msg).map_err(|e| e.to_string())?;
    bytes.extend(body);
    Ok(bytes)
}

impl BagWriter {
    /// Starts a recording in the folder `dir`, which must not exist (as `ros2 bag record -o`);
    /// its MCAP file is `<folder name>_0.mcap`.
    pub fn create(dir: &Path) -> Result<Self, BagError> {
        if dir.exists() {
            return Err(BagError::io(
                dir,
                std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "already exists: a recording is written to a new folder",
                ),
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| BagError::io(dir, e))?;
        let stem = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("recording");
        let file_name = format!("{stem}_0.mcap");
        let path = dir.join(&file_name);
        let file = File::create(&path).map_err(|e| BagError::io(&path, e))?;
        let options = mcap::WriteOptions::new()
            .profile("ros2")
            .library(concat!("gp-learning-node ", env!("CARGO_PKG_VERSION")))
            .compression(Some(mcap::Compression::Zstd));
        let mcap = mcap::Writer::with_options(BufWriter::new(file), options)
            .map_err(|e| mcap_error(&path, e))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            file_name,
            mcap,
            topics: Vec::new(),
            sequence: 0,
            range: None,
        })
    }

    /// The MCAP file's path.
    pub fn file(&self) -> PathBuf {
        self.dir.join(&self.file_name)
    }

    /// Adds a topic of message type `T`, offered with `qos`.
    pub fn add_topic<T: RosMessage>(&mut self, name: &str, qos: Qos) -> Result<TopicId, BagError> {
        let file = self.file();
        let definition = gpn_msgs::definition::message_definition::<T>();
        let schema = self
            .mcap
            .add_schema(T::TYPE_NAME, "ros2msg", definition.as_bytes())
            .map_err(|e| mcap_error(&file, e))?;
        let qos_yaml =
            serde_norway::to_string(&[QosYaml::of(qos)]).map_err(|e| BagError::Metadata {
                path: file.clone(),
                message: e.to_string(),
            })?;
        let metadata = BTreeMap::from([("offered_qos_profiles".to_string(), qos_yaml)]);
        let channel = self
            .mcap
            .add_channel(schema, name, "cdr", &metadata)
            .map_err(|e| mcap_error(&file, e))?;
        self.topics.push(Topic {
            name: name.to_string(),
            type_name: T::TYPE_NAME,
            qos,
            channel,
            count: 0,
        });
        Ok(TopicId(self.topics.len() - 1))
    }

    /// Writes one message's CDR (as [`encode`] gives it) at `log_ns` (ns since the epoch).
    pub fn write(&mut self, topic: TopicId, log_ns: u64, cdr: &[u8]) -> Result<(), BagError> {
        let file = self.file();
        let entry = &mut self.topics[topic.0];
        let header = mcap::records::MessageHeader {
            channel_id: entry.channel,
            sequence: self.sequence,
            log_time: log_ns,
            publish_time: log_ns,
        };
        self.mcap
            .write_to_known_channel(&header, cdr)
            .map_err(|e| mcap_error(&file, e))?;
        entry.count += 1;
        self.sequence = self.sequence.wrapping_add(1);
        self.range = Some(match self.range {
            None => (log_ns, log_ns),
            Some((a, b)) => (a.min(log_ns), b.max(log_ns)),
        });
        Ok(())
    }

    /// Encodes and writes `msg` on `topic` at `log_ns`.
    pub fn write_message<T: Serialize>(
        &mut self,
        topic: TopicId,
        log_ns: u64,
        msg: &T,
    ) -> Result<(), BagError> {
        let cdr = encode(msg).map_err(|message| BagError::Mcap {
            file: self.file(),
            message: format!(
                "encoding a message of {}: {message}",
                self.topics[topic.0].name
            ),
        })?;
        self.write(topic, log_ns, &cdr)
    }

    /// Ends the MCAP file (summary, indexes) and writes `metadata.yaml` beside it.
    pub fn finish(mut self) -> Result<BagSummary, BagError> {
        let file = self.file();
        let metadata = self.metadata();
        let text = serde_norway::to_string(&metadata).map_err(|e| BagError::Metadata {
            path: self.dir.join("metadata.yaml"),
            message: e.to_string(),
        })?;
        // rosbag2's MCAP storage keeps the metadata inside the file too.
        let inner =
            serde_norway::to_string(&metadata.rosbag2_bagfile_information).unwrap_or_default();
        self.mcap
            .write_metadata(&mcap::records::Metadata {
                name: "rosbag2".into(),
                metadata: BTreeMap::from([("serialized_metadata".into(), inner)]),
            })
            .map_err(|e| mcap_error(&file, e))?;
        self.mcap.finish().map_err(|e| mcap_error(&file, e))?;
        let target = self.dir.join("metadata.yaml");
        let temporary = self.dir.join("metadata.yaml.tmp");
        std::fs::write(&temporary, text).map_err(|e| BagError::io(&temporary, e))?;
        std::fs::rename(&temporary, &target).map_err(|e| BagError::io(&target, e))?;
        Ok(BagSummary {
            path: self.dir.clone(),
            counts: self
                .topics
                .iter()
                .map(|t| (t.name.clone(), t.count))
                .collect(),
            log_range_ns: self.range,
        })
    }

    fn metadata(&self) -> MetadataYaml {
        let (start, end) = self.range.unwrap_or((0, 0));
        let duration = Nanoseconds {
            nanoseconds: end - start,
        };
        let starting_time = SinceEpoch {
            nanoseconds_since_epoch: start,
        };
        let count = self.topics.iter().map(|t| t.count).sum();
        MetadataYaml {
            rosbag2_bagfile_information: Information {
                version: METADATA_VERSION,
                storage_identifier: "mcap",
                duration,
                starting_time,
                message_count: count,
                topics_with_message_count: self
                    .topics
                    .iter()
                    .map(|t| TopicCount {
                        topic_metadata: TopicYaml {
                            name: t.name.clone(),
                            type_name: t.type_name,
                            serialization_format: "cdr",
                            offered_qos_profiles: vec![QosYaml::of(t.qos)],
                            type_description_hash: String::new(),
                        },
                        message_count: t.count,
                    })
                    .collect(),
                compression_format: "",
                compression_mode: "",
                relative_file_paths: vec![self.file_name.clone()],
                files: vec![FileYaml {
                    path: self.file_name.clone(),
                    starting_time,
                    duration,
                    message_count: count,
                }],
                custom_data: BTreeMap::new(),
                ros_distro: "jazzy",
            },
        }
    }
}

#[derive(Serialize)]
struct MetadataYaml {
    rosbag2_bagfile_information: Information,
}

#[derive(Serialize)]
struct Information {
    version: u32,
    storage_identifier: &'static str,
    duration: Nanoseconds,
    starting_time: SinceEpoch,
    message_count: u64,
    topics_with_message_count: Vec<TopicCount>,
    compression_format: &'static str,
    compression_mode: &'static str,
    relative_file_paths: Vec<String>,
    files: Vec<FileYaml>,
    custom_data: BTreeMap<String, String>,
    ros_distro: &'static str,
}

#[derive(Serialize, Clone, Copy)]
struct Nanoseconds {
    nanoseconds: u64,
}

#[derive(Serialize, Clone, Copy)]
struct SinceEpoch {
    nanoseconds_since_epoch: u64,
}

#[derive(Serialize)]
struct TopicCount {
    topic_metadata: TopicYaml,
    message_count: u64,
}

#[derive(Serialize)]
struct TopicYaml {
    name: String,
    #[serde(rename = "type")]
    type_name: &'static str,
    serialization_format: &'static str,
    offered_qos_profiles: Vec<QosYaml>,
    type_description_hash: String,
}

#[derive(Serialize)]
struct FileYaml {
    path: String,
    starting_time: SinceEpoch,
    duration: Nanoseconds,
    message_count: u64,
}

/// A QoS profile as Jazzy's metadata (v9) writes it.
#[derive(Serialize)]
struct QosYaml {
    history: &'static str,
    depth: u32,
    reliability: &'static str,
    durability: &'static str,
    deadline: SecNsec,
    lifespan: SecNsec,
    liveliness: &'static str,
    liveliness_lease_duration: SecNsec,
    avoid_ros_namespace_conventions: bool,
}

/// rmw's "infinite" duration as rosbag2 writes it.
#[derive(Serialize)]
struct SecNsec {
    sec: u64,
    nsec: u64,
}

const INFINITE: SecNsec = SecNsec {
    sec: 9_223_372_036,
    nsec: 854_775_807,
};

impl QosYaml {
    fn of(qos: Qos) -> Self {
        Self {
            history: "keep_last",
            depth: qos.depth,
            reliability: if qos.reliable {
                "reliable"
            } else {
                "best_effort"
            },
            durability: if qos.transient_local {
                "transient_local"
            } else {
                "volatile"
            },
            deadline: INFINITE,
            lifespan: INFINITE,
            liveliness: "automatic",
            liveliness_lease_duration: INFINITE,
            avoid_ros_namespace_conventions: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Recording, Wanted};
    use gpn_msgs::sensor_msgs::JointState;
    use gpn_msgs::std_msgs::{Float64MultiArray, Header};

    #[test]
    fn what_is_written_reads_back_with_its_metadata() {
        let dir = std::env::temp_dir().join(format!("gpn_bag_writer_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let bag = dir.join("run");
        let mut writer = BagWriter::create(&bag).expect("create");
        let states = writer
            .add_topic::<JointState>("/joint_states", Qos::SENSOR_DATA)
            .expect("topic");
        let commands = writer
            .add_topic::<Float64MultiArray>("/cmd", Qos::DEFAULT)
            .expect("topic");
        for k in 0..100u64 {
            let t = 1_700_000_000_000_000_000 + k * 1_000_000;
            let state = JointState {
                header: Header::default(),
                name: vec!["a".into()],
                position: vec![k as f64],
                velocity: vec![0.0],
                effort: vec![],
            };
            writer.write_message(states, t, &state).expect("write");
            let command = Float64MultiArray {
                data: vec![-(k as f64)],
                ..Default::default()
            };
            writer.write_message(commands, t, &command).expect("write");
        }
        let summary = writer.finish().expect("finish");
        assert_eq!(
            summary.counts,
            [("/joint_states".into(), 100), ("/cmd".into(), 100)]
        );
        let again = BagWriter::create(&bag).err().expect("refused");
        assert!(again.to_string().contains("already exists"), "{again}");

        let recording = Recording::open(&bag).expect("open");
        assert_eq!(recording.metadata().map(|m| m.version), Some(9));
        let wanted = [Wanted::new("/joint_states", "sensor_msgs/msg/JointState")];
        let mut positions = Vec::new();
        for message in recording.messages(&wanted) {
            let message = message.expect("message");
            let state: JointState = crate::decode(&message.data).expect("decode");
            positions.push(state.position[0]);
        }
        assert_eq!(positions, (0..100).map(f64::from).collect::<Vec<_>>());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
