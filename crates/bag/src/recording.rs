//! A recording: what `metadata.yaml` (or a single file's name) says, and the messages of the
//! wanted topics, file after file, in recorded order.

use std::path::{Path, PathBuf};

use crate::BagError;
use crate::mcap_storage::McapStream;
use crate::metadata::Metadata;
use crate::selection::{Selection, TopicSeen, Wanted};
use crate::sqlite_storage::SqliteStream;

/// The storage format of a recording's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// MCAP (`mcap`, Jazzy's default).
    Mcap,
    /// SQLite 3 (`sqlite3`, `.db3`).
    Sqlite,
}

impl Storage {
    /// rosbag2's storage identifier.
    pub fn identifier(self) -> &'static str {
        match self {
            Storage::Mcap => "mcap",
            Storage::Sqlite => "sqlite3",
        }
    }
}

/// rosbag2's compression of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    /// Each file compressed whole (`name.mcap.zstd`).
    File,
    /// Each message's bytes compressed.
    Message,
}

/// A rosbag2 recording, opened (nothing is read until [`Recording::messages`]).
#[derive(Debug, Clone)]
pub struct Recording {
    path: PathBuf,
    storage: Storage,
    files: Vec<PathBuf>,
    compression: Compression,
    metadata: Option<Metadata>,
}

/// One message of a wanted topic.
#[derive(Debug, Clone)]
pub struct Message {
    /// Index of its topic in the wanted list.
    pub topic: usize,
    /// When the recorder received it, ns since the epoch.
    pub log_time_ns: u64,
    /// Its CDR bytes (decompressed), for [`crate::decode`].
    pub data: Vec<u8>,
}

pub(crate) type RawMessage = Message;

impl Recording {
    /// Opens `path`: a rosbag2 folder (with `metadata.yaml`), or one `.mcap` / `.db3` file,
    /// optionally zstd-compressed whole (`.mcap.zstd`, `.db3.zstd`).
    pub fn open(path: &Path) -> Result<Self, BagError> {
        let meta = std::fs::metadata(path).map_err(|e| BagError::io(path, e))?;
        if meta.is_dir() {
            return Self::open_folder(path);
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let (stem, compression) = match name.strip_suffix(".zstd") {
            Some(stem) => (stem, Compression::File),
            None => (name, Compression::None),
        };
        let storage = if stem.ends_with(".mcap") {
            Storage::Mcap
        } else if stem.ends_with(".db3") {
            Storage::Sqlite
        } else {
            return Err(BagError::NotARecording(path.to_path_buf()));
        };
        Ok(Self {
            path: path.to_path_buf(),
            storage,
            files: vec![path.to_path_buf()],
            compression,
            metadata: None,
        })
    }

    fn open_folder(dir: &Path) -> Result<Self, BagError> {
        let meta_path = dir.join("metadata.yaml");
        if !meta_path.is_file() {
            return Err(BagError::NotARecording(dir.to_path_buf()));
        }
        let metadata = Metadata::read(&meta_path)?;
        let storage = match metadata.storage_identifier.as_str() {
            "mcap" => Storage::Mcap,
            "sqlite3" => Storage::Sqlite,
            other => return Err(BagError::Storage(other.to_owned())),
        };
        let compression = match (
            metadata.compression_format.as_str(),
            metadata.compression_mode.to_ascii_uppercase().as_str(),
        ) {
            (_, "" | "NONE") => Compression::None,
            ("zstd", "FILE") => Compression::File,
            ("zstd", "MESSAGE") => Compression::Message,
            (format, _) if format != "zstd" => {
                return Err(BagError::Compression(format.to_owned()));
            }
            (_, mode) => {
                return Err(BagError::Metadata {
                    path: meta_path,
                    message: format!("compression_mode {mode:?} is not FILE, MESSAGE or NONE"),
                });
            }
        };
        if metadata.relative_file_paths.is_empty() {
            return Err(BagError::Metadata {
                path: meta_path,
                message: "relative_file_paths lists no file".into(),
            });
        }
        let files = metadata
            .relative_file_paths
            .iter()
            .map(|f| dir.join(f))
            .collect();
        Ok(Self {
            path: dir.to_path_buf(),
            storage,
            files,
            compression,
            metadata: Some(metadata),
        })
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The storage format.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// `metadata.yaml`, for a folder.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_ref()
    }

    /// The storage files, in recorded order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The messages of the `wanted` topics, in recorded order (file by file; within a file,
    /// in the order written).
    pub fn messages(&self, wanted: &[Wanted]) -> Messages<'_> {
        Messages {
            recording: self,
            selection: Selection::new(wanted),
            next_file: 0,
            stream: None,
            failed: false,
        }
    }
}

/// The open file of a [`Messages`] iteration.
enum Stream {
    Mcap(McapStream),
    /// The stream and, for a compressed file, its decompressed copy (removed with it).
    Sqlite {
        stream: SqliteStream,
        _copy: Option<TempFile>,
    },
}

/// The messages of the wanted topics (an iterator; it ends after the first error).
pub struct Messages<'a> {
    recording: &'a Recording,
    selection: Selection,
    next_file: usize,
    stream: Option<Stream>,
    failed: bool,
}

impl Messages<'_> {
    /// The topics met so far (every topic of the files opened, with the messages read of
    /// the wanted ones).
    pub fn topics_seen(&self) -> &[TopicSeen] {
        &self.selection.seen
    }

    fn open_next(&mut self) -> Result<bool, BagError> {
        let Some(file) = self.recording.files.get(self.next_file) else {
            return Ok(false);
        };
        self.next_file += 1;
        let compressed = self.recording.compression == Compression::File;
        self.stream = Some(match self.recording.storage {
            Storage::Mcap => {
                let f = std::fs::File::open(file).map_err(|e| BagError::io(file, e))?;
                let source: Box<dyn std::io::Read> = if compressed {
                    Box::new(zstd::Decoder::new(f).map_err(|e| BagError::io(file, e))?)
                } else {
                    Box::new(std::io::BufReader::new(f))
                };
                Stream::Mcap(McapStream::new(file, source))
            }
            Storage::Sqlite => {
                // SQLite reads a file: a compressed one is decompressed beside the temp dir's.
                let temp = compressed
                    .then(|| TempFile::decompressed(file))
                    .transpose()?;
                let path = temp.as_ref().map_or(file.as_path(), |t| t.path.as_path());
                let stream = SqliteStream::open(path, &mut self.selection)?;
                Stream::Sqlite {
                    stream,
                    _copy: temp,
                }
            }
        });
        Ok(true)
    }

    fn decompress(&self, mut message: Message) -> Result<Message, BagError> {
        if self.recording.compression == Compression::Message {
            message.data =
                zstd::decode_all(message.data.as_slice()).map_err(|e| BagError::Decompress {
                    file: self.recording.files[self.next_file.saturating_sub(1)].clone(),
                    topic: self.selection.wanted[message.topic].topic.clone(),
                    message: e.to_string(),
                })?;
        }
        Ok(message)
    }
}

impl Iterator for Messages<'_> {
    type Item = Result<Message, BagError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let next = match &mut self.stream {
                Some(Stream::Mcap(s)) => s.next(&mut self.selection),
                Some(Stream::Sqlite { stream, .. }) => stream.next(),
                None => match self.open_next() {
                    Ok(true) => continue,
                    Ok(false) => return None,
                    Err(e) => Some(Err(e)),
                },
            };
            let item = match next {
                None => {
                    self.stream = None;
                    continue;
                }
                Some(Ok(message)) => self.decompress(message),
                Some(Err(e)) => Err(e),
            };
            match &item {
                Ok(m) => self.selection.count(m.topic),
                Err(_) => self.failed = true,
            }
            return Some(item);
        }
    }
}

/// A decompressed copy of a file-compressed SQLite file, removed when dropped.
struct TempFile {
    path: PathBuf,
}

impl TempFile {
    fn decompressed(file: &Path) -> Result<Self, BagError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "gpn-bag-{}-{}.db3",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let temp = Self { path };
        let mut input = std::fs::File::open(file).map_err(|e| BagError::io(file, e))?;
        let mut output =
            std::fs::File::create(&temp.path).map_err(|e| BagError::io(&temp.path, e))?;
        zstd::stream::copy_decode(&mut input, &mut output).map_err(|e| BagError::Decompress {
            file: file.to_path_buf(),
            topic: "(the whole file)".into(),
            message: e.to_string(),
        })?;
        Ok(temp)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
