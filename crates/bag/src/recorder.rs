//! A recording written on a thread of its own: senders encode a message and hand it over
//! without waiting (a full queue drops the message and counts it), so that the threads
//! that feed a robot never wait for the disk.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

use serde::Serialize;

use crate::BagError;
use crate::writer::{BagSummary, BagWriter, TopicId, encode};

/// Messages queued for the writer at most: a few seconds of a 1 kHz robot's topics.
pub const RECORD_QUEUE: usize = 8192;

enum Entry {
    Message {
        topic: TopicId,
        log_ns: u64,
        cdr: Vec<u8>,
    },
    Finish,
}

/// Counters shared by the senders and the writer.
#[derive(Debug, Default)]
struct Counts {
    queued: AtomicU64,
    dropped: AtomicU64,
    unencodable: AtomicU64,
}

/// Hands messages to the recorder thread; cheap to clone, never blocks.
#[derive(Clone)]
pub struct RecordHandle {
    sender: SyncSender<Entry>,
    counts: Arc<Counts>,
}

impl RecordHandle {
    /// Records `msg` on `topic` at `log_ns` (ns since the epoch). Returns at once: a full
    /// queue (the disk is behind) or a stopped recorder drops the message, counted.
    pub fn record<T: Serialize>(&self, topic: TopicId, log_ns: u64, msg: &T) {
        let Ok(cdr) = encode(msg) else {
            self.counts.unencodable.fetch_add(1, Ordering::Relaxed);
            return;
        };
        match self.sender.try_send(Entry::Message { topic, log_ns, cdr }) {
            Ok(()) => {
                self.counts.queued.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Messages dropped so far (queue full or recorder stopped).
    pub fn dropped(&self) -> u64 {
        self.counts.dropped.load(Ordering::Relaxed)
    }
}

/// What a finished recording holds and lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSummary {
    /// The recording.
    pub bag: BagSummary,
    /// Messages handed to the writer.
    pub queued: u64,
    /// Messages dropped: the queue was full (the disk was behind) or the writer had stopped.
    pub dropped: u64,
    /// Messages that could not be encoded (a defect; counted, not written).
    pub unencodable: u64,
}

/// The recorder thread and its queue.
pub struct Recorder {
    handle: RecordHandle,
    thread: JoinHandle<Result<BagSummary, BagError>>,
}

impl Recorder {
    /// Starts writing `writer` (its topics added) on a thread named `gpn-recorder`.
    pub fn start(writer: BagWriter) -> Result<Self, BagError> {
        let (sender, receiver) = sync_channel(RECORD_QUEUE);
        let path = writer.file();
        let thread = std::thread::Builder::new()
            .name("gpn-recorder".into())
            .spawn(move || write_all(writer, &receiver))
            .map_err(|e| BagError::io(path, e))?;
        Ok(Self {
            handle: RecordHandle {
                sender,
                counts: Arc::new(Counts::default()),
            },
            thread,
        })
    }

    /// A handle to record with.
    pub fn handle(&self) -> RecordHandle {
        self.handle.clone()
    }

    /// Writes what is queued, ends the file and its metadata, and says what was recorded.
    /// Messages recorded after this are dropped (counted in the handles).
    pub fn finish(self) -> Result<RecordSummary, BagError> {
        // Blocking: the writer drains the queue in order, then sees the end.
        let _ = self.handle.sender.send(Entry::Finish);
        let bag = self.thread.join().map_err(|_| BagError::Mcap {
            file: std::path::PathBuf::new(),
            message: "the recorder thread panicked".into(),
        })??;
        let counts = &self.handle.counts;
        Ok(RecordSummary {
            bag,
            queued: counts.queued.load(Ordering::Relaxed),
            dropped: counts.dropped.load(Ordering::Relaxed),
            unencodable: counts.unencodable.load(Ordering::Relaxed),
        })
    }
}

/// The thread: writes until told to finish (or every sender is gone). The first write error
/// stops the writing; the queue is still drained so that senders never block, and the
/// error is returned.
fn write_all(mut writer: BagWriter, receiver: &Receiver<Entry>) -> Result<BagSummary, BagError> {
    let mut failed: Option<BagError> = None;
    while let Ok(entry) = receiver.recv() {
        match entry {
            Entry::Message { topic, log_ns, cdr } => {
                if failed.is_none()
                    && let Err(e) = writer.write(topic, log_ns, &cdr)
                {
                    failed = Some(e);
                }
            }
            Entry::Finish => break,
        }
    }
    match failed {
        Some(e) => Err(e),
        None => writer.finish(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::Qos;
    use gpn_msgs::std_msgs::StringMessage;

    #[test]
    fn recorded_messages_are_written_in_order_and_a_closed_recorder_counts_drops() {
        let dir = std::env::temp_dir().join(format!("gpn_bag_recorder_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut writer = BagWriter::create(&dir.join("rec")).expect("create");
        let topic = writer
            .add_topic::<StringMessage>("/text", Qos::DEFAULT)
            .expect("topic");
        let recorder = Recorder::start(writer).expect("start");
        let handle = recorder.handle();
        let senders: Vec<_> = (0..2u64)
            .map(|s| {
                let handle = handle.clone();
                std::thread::spawn(move || {
                    for k in 0..500u64 {
                        let msg = StringMessage {
                            data: format!("{s}-{k}"),
                        };
                        handle.record(topic, 1_000 + k, &msg);
                    }
                })
            })
            .collect();
        for s in senders {
            s.join().expect("sender");
        }
        let summary = recorder.finish().expect("finish");
        assert_eq!(summary.queued + summary.dropped, 1000);
        assert_eq!(summary.bag.counts, [("/text".into(), summary.queued)]);
        handle.record(topic, 5_000, &StringMessage::default());
        assert_eq!(handle.dropped(), summary.dropped + 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
