//! rosbag2 recordings: a recording folder (`metadata.yaml` and its files) or a single
//! `.mcap` / `.db3` file, read as the messages of chosen topics in recorded order, with the
//! CDR of the messages the node reads.
//!
//! - Storage: MCAP (streamed: memory does not grow with the file) and SQLite 3 (paged by
//!   row id, the order rosbag2 wrote them in).
//! - Compression: MCAP chunks (zstd, lz4), rosbag2's file and message compression (zstd);
//!   anything else is an error naming it.
//! - Topics are matched by name; a chosen topic recorded with another type than expected, or
//!   not in CDR, is an error. What else the recording holds is listed
//!   ([`Messages::topics_seen`]) so that a missing topic's error can say what is there.
//!
//! - Writing: [`BagWriter`] writes what Jazzy's `ros2 bag record -s mcap` writes (a folder,
//!   one zstd-chunked MCAP file, `metadata.yaml` version 9); [`Recorder`] writes one on a
//!   thread of its own that senders never wait for.
//!
//! Boundary: formats only — no robot, no learning.

mod cdr;
mod error;
mod mcap_storage;
mod metadata;
mod recorder;
mod recording;
mod selection;
mod sqlite_storage;
mod writer;

pub use cdr::decode;
pub use error::BagError;
pub use metadata::{Metadata, TopicMetadata, TopicWithCount};
pub use recorder::{RECORD_QUEUE, RecordHandle, RecordSummary, Recorder};
pub use recording::{Message, Messages, Recording, Storage};
pub use selection::{TopicSeen, Wanted};
pub use writer::{BagSummary, BagWriter, METADATA_VERSION, Qos, TopicId, encode};
