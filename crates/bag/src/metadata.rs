//! rosbag2's `metadata.yaml` (format versions 1–9; Jazzy writes 9): the storage, the files,
//! the topics with their types and counts, the compression. Unknown keys are ignored and
//! missing optional ones take rosbag2's defaults, so older and newer recorders' files read.

use std::path::Path;

use serde::Deserialize;

use crate::BagError;

/// The file's one top-level key.
#[derive(Debug, Deserialize)]
struct File {
    rosbag2_bagfile_information: Metadata,
}

/// What `metadata.yaml` says of a recording.
#[derive(Debug, Clone, Deserialize)]
pub struct Metadata {
    /// Format version.
    pub version: u32,
    /// `mcap` or `sqlite3`.
    pub storage_identifier: String,
    /// The storage files, relative to the folder, in recorded order.
    #[serde(default)]
    pub relative_file_paths: Vec<String>,
    /// Duration of the recording.
    #[serde(default)]
    pub duration: Nanoseconds,
    /// When it started (log time).
    #[serde(default)]
    pub starting_time: SinceEpoch,
    /// Messages in all.
    #[serde(default)]
    pub message_count: u64,
    /// The topics recorded.
    #[serde(default)]
    pub topics_with_message_count: Vec<TopicWithCount>,
    /// `""` or `zstd`.
    #[serde(default)]
    pub compression_format: String,
    /// `""`/`NONE`, `FILE` or `MESSAGE`.
    #[serde(default)]
    pub compression_mode: String,
    /// The ROS distribution that recorded it (version ≥ 6).
    #[serde(default)]
    pub ros_distro: String,
}

/// A duration in nanoseconds.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Nanoseconds {
    /// Nanoseconds.
    pub nanoseconds: u64,
}

/// A time in nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct SinceEpoch {
    /// Nanoseconds since the Unix epoch.
    pub nanoseconds_since_epoch: u64,
}

/// A topic and how many messages it has.
#[derive(Debug, Clone, Deserialize)]
pub struct TopicWithCount {
    /// The topic.
    pub topic_metadata: TopicMetadata,
    /// Its messages.
    #[serde(default)]
    pub message_count: u64,
}

/// A topic's name, type and serialisation.
#[derive(Debug, Clone, Deserialize)]
pub struct TopicMetadata {
    /// Topic name.
    pub name: String,
    /// Message type, `pkg/msg/Type`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// `cdr` for ROS 2.
    #[serde(default)]
    pub serialization_format: String,
}

impl Metadata {
    /// Reads `path` (a `metadata.yaml`).
    pub fn read(path: &Path) -> Result<Self, BagError> {
        let text = std::fs::read_to_string(path).map_err(|e| BagError::io(path, e))?;
        Self::parse(&text).map_err(|message| BagError::Metadata {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses the text of a `metadata.yaml`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: File =
            serde_norway::from_str(text).map_err(|e| format!("not rosbag2 metadata: {e}"))?;
        Ok(file.rosbag2_bagfile_information)
    }

    /// Messages recorded on `topic` (0 if it is not listed).
    pub fn count_of(&self, topic: &str) -> u64 {
        self.topics_with_message_count
            .iter()
            .filter(|t| t.topic_metadata.name == topic)
            .map(|t| t.message_count)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape `ros2 bag record` writes on Jazzy (version 9), abridged.
    const JAZZY: &str = "
rosbag2_bagfile_information:
  version: 9
  storage_identifier: mcap
  duration:
    nanoseconds: 2000000000
  starting_time:
    nanoseconds_since_epoch: 1700000000000000000
  message_count: 3
  topics_with_message_count:
    - topic_metadata:
        name: /joint_states
        type: sensor_msgs/msg/JointState
        serialization_format: cdr
        offered_qos_profiles: \"\"
        type_description_hash: RIHS01_abc
      message_count: 3
  compression_format: \"\"
  compression_mode: \"\"
  relative_file_paths:
    - rec_0.mcap
  files:
    - path: rec_0.mcap
      starting_time:
        nanoseconds_since_epoch: 1700000000000000000
      duration:
        nanoseconds: 2000000000
      message_count: 3
  custom_data: ~
  ros_distro: jazzy
";

    #[test]
    fn jazzy_metadata_reads_and_other_yaml_is_refused() {
        let m = Metadata::parse(JAZZY).expect("parses");
        assert_eq!(m.version, 9);
        assert_eq!(m.storage_identifier, "mcap");
        assert_eq!(m.relative_file_paths, ["rec_0.mcap"]);
        assert_eq!(m.duration.nanoseconds, 2_000_000_000);
        assert_eq!(m.count_of("/joint_states"), 3);
        assert_eq!(m.count_of("/other"), 0);
        assert_eq!(
            m.topics_with_message_count[0].topic_metadata.type_name,
            "sensor_msgs/msg/JointState"
        );
        let err = Metadata::parse("robot: panda\n").expect_err("refused");
        assert!(err.contains("not rosbag2 metadata"), "{err}");
    }
}
