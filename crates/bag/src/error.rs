//! Why a recording cannot be read.

use std::path::PathBuf;

/// An error reading a recording. Each names the file and what to do where there is something.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    /// The file or folder cannot be read.
    #[error("{}: {error}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause (in the message: not a separate source, so that it is said once).
        error: std::io::Error,
    },
    /// Neither a rosbag2 folder nor a storage file this reader knows.
    #[error(
        "{}: not a rosbag2 recording (give a folder with metadata.yaml, or one .mcap or .db3 file, optionally .zstd-compressed)",
        .0.display()
    )]
    NotARecording(PathBuf),
    /// `metadata.yaml` is not rosbag2's format.
    #[error("{}: {message}", path.display())]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A storage plugin other than `mcap` and `sqlite3`.
    #[error("storage {0:?} is not supported (mcap and sqlite3 are)")]
    Storage(String),
    /// A compression other than zstd (rosbag2) or zstd/lz4 (MCAP chunks).
    #[error("compression {0:?} is not supported (zstd is; MCAP chunks may also be lz4)")]
    Compression(String),
    /// The MCAP file is damaged or ends early.
    #[error("{}: {message}", file.display())]
    Mcap {
        /// The file.
        file: PathBuf,
        /// What the reader found.
        message: String,
    },
    /// The SQLite file is damaged or not rosbag2's schema.
    #[error("{}: {message}", file.display())]
    Sqlite {
        /// The file.
        file: PathBuf,
        /// What SQLite said.
        message: String,
    },
    /// A chosen topic was recorded with another message type.
    #[error("topic {topic}: recorded as {found}, expected {}", expected.join(" or "))]
    TopicType {
        /// The topic.
        topic: String,
        /// Its recorded type.
        found: String,
        /// The types accepted.
        expected: Vec<String>,
    },
    /// A chosen topic was not recorded as CDR.
    #[error("topic {topic}: serialised as {found:?}, only cdr is read")]
    Serialization {
        /// The topic.
        topic: String,
        /// Its serialisation format.
        found: String,
    },
    /// A compressed message does not decompress.
    #[error("{}: a message of {topic} does not decompress: {message}", file.display())]
    Decompress {
        /// The file.
        file: PathBuf,
        /// The topic.
        topic: String,
        /// The cause.
        message: String,
    },
}

impl BagError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            error,
        }
    }
}
