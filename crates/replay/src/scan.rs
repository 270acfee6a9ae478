//! The first pass over a recording: what it holds on the replay's topics (counts, time
//! range, whether states carry efforts), the clock offset between stamps and log times, and
//! the robot description if recorded. Checked before anything is learned, so that a
//! recording without joint states is an error at once.

use gpn_bag::{BagError, Recording, TopicSeen};
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::StringMessage;

use crate::align::{ClockOffset, OffsetEstimator};
use crate::topics::{COMMAND, JOINT_STATES, ROBOT_DESCRIPTION, ReplayTopics};

/// What the first pass found.
#[derive(Debug, Clone)]
pub struct Scan {
    /// Joint-state messages (decodable ones).
    pub joint_states: u64,
    /// Of those, with an `effort` array.
    pub with_effort: u64,
    /// Command messages.
    pub commands: u64,
    /// Messages of the replay's topics that do not decode as their type.
    pub undecodable: u64,
    /// First and last log time of a joint state, ns.
    pub log_range_ns: Option<(u64, u64)>,
    /// The clock offset (None: no stamped state).
    pub offset: Option<ClockOffset>,
    /// The first robot description recorded.
    pub robot_description: Option<String>,
    /// Every topic met.
    pub topics: Vec<TopicSeen>,
    /// The recording could not be read to its end: why (what was read before counts).
    pub ended_early: Option<String>,
}

/// Reads `recording`'s replay topics once. `progress` is called with the messages read.
pub fn scan(
    recording: &Recording,
    topics: &ReplayTopics,
    progress: &mut dyn FnMut(u64),
) -> Result<Scan, BagError> {
    let wanted = topics.wanted();
    let mut messages = recording.messages(&wanted);
    let mut offsets = OffsetEstimator::default();
    let mut scan = Scan {
        joint_states: 0,
        with_effort: 0,
        commands: 0,
        undecodable: 0,
        log_range_ns: None,
        offset: None,
        robot_description: None,
        topics: Vec::new(),
        ended_early: None,
    };
    let mut read = 0;
    for message in messages.by_ref() {
        let message = match message {
            Ok(m) => m,
            // A type or storage error of the first file is fatal; later, what was read stands.
            Err(e) if read == 0 => return Err(e),
            Err(e) => {
                scan.ended_early = Some(e.to_string());
                break;
            }
        };
        read += 1;
        if read % 4096 == 0 {
            progress(read);
        }
        match message.topic {
            JOINT_STATES => match gpn_bag::decode::<JointState>(&message.data) {
                Ok(state) => {
                    scan.joint_states += 1;
                    scan.with_effort += u64::from(!state.effort.is_empty());
                    let t = message.log_time_ns;
                    scan.log_range_ns = Some(match scan.log_range_ns {
                        None => (t, t),
                        Some((a, b)) => (a.min(t), b.max(t)),
                    });
                    let stamp = &state.header.stamp;
                    if !stamp.is_zero() && stamp.sec >= 0 && stamp.nanosec < 1_000_000_000 {
                        let stamp_ns = stamp.sec as u64 * 1_000_000_000 + u64::from(stamp.nanosec);
                        offsets.push(t, stamp_ns);
                    }
                }
                Err(_) => scan.undecodable += 1,
            },
            COMMAND => scan.commands += 1,
            ROBOT_DESCRIPTION if scan.robot_description.is_none() => {
                match gpn_bag::decode::<StringMessage>(&message.data) {
                    Ok(text) => scan.robot_description = Some(text.data),
                    Err(_) => scan.undecodable += 1,
                }
            }
            _ => {}
        }
    }
    progress(read);
    scan.offset = offsets.estimate();
    scan.topics = messages.topics_seen().to_vec();
    Ok(scan)
}

impl Scan {
    /// The recording's topics, for an error about a missing one.
    pub fn topic_list(&self) -> String {
        if self.topics.is_empty() {
            return "no topic at all".into();
        }
        self.topics
            .iter()
            .map(|t| format!("{} ({})", t.topic, t.type_name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
