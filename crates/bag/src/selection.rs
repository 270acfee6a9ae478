//! Which topics a reader wants and what it found: each storage announces its topics
//! (channels, rows of `topics`) here as it meets them.

use crate::BagError;

/// A topic to read: its name and the message types accepted on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Topic name, as recorded (`/joint_states`).
    pub topic: String,
    /// Accepted types, `pkg/msg/Type`.
    pub types: Vec<String>,
}

impl Wanted {
    /// `topic` with messages of type `type_name`.
    pub fn new(topic: impl Into<String>, type_name: &str) -> Self {
        Self {
            topic: topic.into(),
            types: vec![type_name.to_owned()],
        }
    }
}

/// A topic found in the recording and the messages read of it so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSeen {
    /// Topic name.
    pub topic: String,
    /// Message type.
    pub type_name: String,
    /// Messages read (0 for a topic that was not chosen: it is skipped unread).
    pub messages: u64,
}

/// The wanted topics and the topics met.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    pub(crate) wanted: Vec<Wanted>,
    pub(crate) seen: Vec<TopicSeen>,
}

impl Selection {
    pub(crate) fn new(wanted: &[Wanted]) -> Self {
        Self {
            wanted: wanted.to_vec(),
            seen: Vec::new(),
        }
    }

    /// A topic the storage announces (a channel, a row of `topics`): the index of the wanted
    /// topic it is, if any, or the error of a wanted topic of the wrong type or serialisation.
    pub(crate) fn announce(
        &mut self,
        topic: &str,
        type_name: &str,
        serialization: &str,
    ) -> Result<Option<usize>, BagError> {
        if !self.seen.iter().any(|s| s.topic == topic) {
            self.seen.push(TopicSeen {
                topic: topic.to_owned(),
                type_name: type_name.to_owned(),
                messages: 0,
            });
        }
        let Some(index) = self.wanted.iter().position(|w| w.topic == topic) else {
            return Ok(None);
        };
        let wanted = &self.wanted[index];
        if !wanted.types.iter().any(|t| t == type_name) {
            return Err(BagError::TopicType {
                topic: topic.to_owned(),
                found: type_name.to_owned(),
                expected: wanted.types.clone(),
            });
        }
        if serialization != "cdr" {
            return Err(BagError::Serialization {
                topic: topic.to_owned(),
                found: serialization.to_owned(),
            });
        }
        Ok(Some(index))
    }

    /// One message of wanted topic `index` was read.
    pub(crate) fn count(&mut self, index: usize) {
        let topic = &self.wanted[index].topic;
        if let Some(seen) = self.seen.iter_mut().find(|s| &s.topic == topic) {
            seen.messages += 1;
        }
    }
}
