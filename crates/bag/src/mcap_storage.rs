//! An MCAP file, streamed with the crate's sans-io reader: records are read in file order
//! through a fixed read buffer (chunks are decompressed one at a time), so memory does not
//! grow with the file. Schemas give the message types, channels the topics.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use mcap::records::Record;
use mcap::sans_io::linear_reader::{LinearReadEvent, LinearReader};

use crate::BagError;
use crate::recording::RawMessage;
use crate::selection::Selection;

/// Bytes asked of the source per read at most (the reader asks for what a record needs).
const READ_LIMIT: usize = 1 << 20;

pub(crate) struct McapStream {
    file: PathBuf,
    source: Box<dyn Read>,
    reader: LinearReader,
    /// Schema id → message type.
    schemas: HashMap<u16, String>,
    /// Channel id → the wanted topic's index (None: not wanted).
    channels: HashMap<u16, Option<usize>>,
}

impl McapStream {
    /// Streams `source`, the contents of the MCAP file `file`.
    pub(crate) fn new(file: &Path, source: Box<dyn Read>) -> Self {
        Self {
            file: file.to_path_buf(),
            source,
            reader: LinearReader::new(),
            schemas: HashMap::new(),
            channels: HashMap::new(),
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> BagError {
        BagError::Mcap {
            file: self.file.clone(),
            message: message.to_string(),
        }
    }

    /// The next message of a wanted topic (None at the end of the file).
    pub(crate) fn next(
        &mut self,
        selection: &mut Selection,
    ) -> Option<Result<RawMessage, BagError>> {
        loop {
            let event = match self.reader.next_event()? {
                Ok(event) => event,
                Err(e) => return Some(Err(mcap_error(&self.file, &e))),
            };
            match event {
                LinearReadEvent::ReadRequest(need) => {
                    let buffer = self.reader.insert(need.min(READ_LIMIT));
                    match self.source.read(buffer) {
                        Ok(read) => self.reader.notify_read(read),
                        Err(e) => return Some(Err(self.error(e))),
                    }
                }
                LinearReadEvent::Record { opcode, data } => {
                    let record = match mcap::parse_record(opcode, data) {
                        Ok(record) => record,
                        Err(e) => {
                            return Some(Err(BagError::Mcap {
                                file: self.file.clone(),
                                message: e.to_string(),
                            }));
                        }
                    };
                    match record {
                        Record::Schema { header, .. } => {
                            self.schemas.insert(header.id, header.name);
                        }
                        Record::Channel(channel) => {
                            let type_name = self
                                .schemas
                                .get(&channel.schema_id)
                                .map_or("", String::as_str);
                            match selection.announce(
                                &channel.topic,
                                type_name,
                                &channel.message_encoding,
                            ) {
                                Ok(index) => {
                                    self.channels.insert(channel.id, index);
                                }
                                Err(e) => return Some(Err(e)),
                            }
                        }
                        Record::Message { header, data } => {
                            if let Some(Some(topic)) = self.channels.get(&header.channel_id) {
                                return Some(Ok(RawMessage {
                                    topic: *topic,
                                    log_time_ns: header.log_time,
                                    data: data.into_owned(),
                                }));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// The reader's error, in words a user can act on (a file cut short says so).
fn mcap_error(file: &Path, e: &mcap::McapError) -> BagError {
    let message = match e {
        mcap::McapError::UnexpectedEof | mcap::McapError::UnexpectedEoc => {
            "the file ends early (truncated: the recorder did not finish it)".to_owned()
        }
        mcap::McapError::UnsupportedCompression(c) => {
            return BagError::Compression(c.clone());
        }
        other => other.to_string(),
    };
    BagError::Mcap {
        file: file.to_path_buf(),
        message,
    }
}
