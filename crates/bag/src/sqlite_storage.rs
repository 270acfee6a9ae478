//! A rosbag2 SQLite 3 file (`.db3`): the `topics` table gives the topics, `messages` is read
//! in pages by row id (the order the recorder wrote them, as an MCAP file's), so memory
//! stays at one page whatever the file's size.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::BagError;
use crate::recording::RawMessage;
use crate::selection::Selection;

/// Rows read per query.
const PAGE: i64 = 512;

pub(crate) struct SqliteStream {
    file: PathBuf,
    connection: Connection,
    /// Topic id → the wanted topic's index.
    topics: HashMap<i64, usize>,
    /// `topic_id IN (…)` of the wanted topics.
    filter: String,
    last_id: i64,
    page: VecDeque<RawMessage>,
    done: bool,
}

impl SqliteStream {
    /// Opens `file` read-only and announces its topics to `selection`.
    pub(crate) fn open(file: &Path, selection: &mut Selection) -> Result<Self, BagError> {
        let error = |e: rusqlite::Error| sqlite_error(file, &e);
        let connection = Connection::open_with_flags(
            file,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(error)?;
        let mut topics = HashMap::new();
        {
            let mut rows = connection
                .prepare("SELECT id, name, type, serialization_format FROM topics ORDER BY id")
                .map_err(error)?;
            let rows = rows
                .query_map([], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                })
                .map_err(error)?;
            for row in rows {
                let (id, name, type_name, serialization) = row.map_err(error)?;
                if let Some(index) = selection.announce(&name, &type_name, &serialization)? {
                    topics.insert(id, index);
                }
            }
        }
        let ids: Vec<String> = topics.keys().map(i64::to_string).collect();
        Ok(Self {
            file: file.to_path_buf(),
            connection,
            filter: ids.join(","),
            done: topics.is_empty(),
            topics,
            last_id: i64::MIN,
            page: VecDeque::new(),
        })
    }

    /// The next message of a wanted topic (None at the end).
    pub(crate) fn next(&mut self) -> Option<Result<RawMessage, BagError>> {
        if self.page.is_empty()
            && !self.done
            && let Err(e) = self.read_page()
        {
            self.done = true;
            return Some(Err(e));
        }
        self.page.pop_front().map(Ok)
    }

    fn read_page(&mut self) -> Result<(), BagError> {
        let error = |e: rusqlite::Error| sqlite_error(&self.file, &e);
        let sql = format!(
            "SELECT id, topic_id, timestamp, data FROM messages \
             WHERE id > ?1 AND topic_id IN ({}) ORDER BY id LIMIT {PAGE}",
            self.filter
        );
        let mut statement = self.connection.prepare_cached(&sql).map_err(error)?;
        let rows = statement
            .query_map([self.last_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Vec<u8>>(3)?,
                ))
            })
            .map_err(error)?;
        let mut read = 0;
        for row in rows {
            let (id, topic_id, timestamp, data) = row.map_err(error)?;
            read += 1;
            self.last_id = id;
            if let Some(&topic) = self.topics.get(&topic_id) {
                self.page.push_back(RawMessage {
                    topic,
                    log_time_ns: u64::try_from(timestamp).unwrap_or(0),
                    data,
                });
            }
        }
        self.done = read < PAGE;
        Ok(())
    }
}

fn sqlite_error(file: &Path, e: &rusqlite::Error) -> BagError {
    BagError::Sqlite {
        file: file.to_path_buf(),
        message: format!("{e} (is it a complete rosbag2 SQLite file?)"),
    }
}
