//! A recording as an observe-only plant of the one control loop: joint states, in recorded
//! order and time-aligned with the command (`align`), go through the node's own joint-state
//! reader — the same name matching, validation and stamp clock as `gp-node run` — and the
//! loop estimates and learns as in the node's learn mode. Nothing is commanded. Refusals are
//! counted by reason with the node's counters.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gpn_bag::Messages;
use gpn_control::control_loop::{Command, Plant, Read, StateFrame};
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::Float64MultiArray;
use gpn_ros_io::JointStateReader;
use gpn_ros_io::ingest::IngestCounters;

use crate::align::Aligner;
use crate::topics::{COMMAND, JOINT_STATES};

/// Where the held-out tail starts and who is told.
#[derive(Debug, Clone)]
pub struct HoldOutStart {
    /// Joint states before the tail.
    pub after_states: u64,
    /// Raised when the tail's first state is read.
    pub reached: Arc<AtomicBool>,
}

/// The recording's messages as an observe-only plant.
pub struct BagPlant<'r> {
    messages: Messages<'r>,
    aligner: Aligner,
    reader: JointStateReader,
    nv: usize,
    /// The synthetic receipt time of log time `first_log_ns`.
    base: Instant,
    first_log_ns: Option<u64>,
    horizon_ns: Option<u64>,
    exhausted: bool,
    states: u64,
    hold_out: HoldOutStart,
    /// Counters of the replay (the node's, read at the end).
    pub ingest: Arc<IngestCounters>,
    /// Messages that did not decode as their type.
    pub undecodable: u64,
    /// Why the recording ended before its end, if it did.
    pub ended_early: Option<String>,
    /// The last joint state refused, why (for an error when nothing could be learned).
    pub last_refusal: Option<String>,
    /// Messages read, for a progress display.
    pub progress: Arc<Progress>,
}

/// Progress of a replay, for a display on another thread.
#[derive(Debug, Default)]
pub struct Progress {
    /// Messages read by the first pass.
    pub scanned: AtomicU64,
    /// Messages read by the replay.
    pub replayed: AtomicU64,
    /// Messages the replay will read (0 until the first pass has counted them).
    pub total: AtomicU64,
}

impl<'r> BagPlant<'r> {
    /// A plant over `messages` (the replay topics' messages) for the model's `joints`, with
    /// the clock offset `offset_ns` (see `align`).
    pub fn new(
        messages: Messages<'r>,
        reader: JointStateReader,
        nv: usize,
        offset_ns: i64,
        hold_out: HoldOutStart,
    ) -> Self {
        Self {
            messages,
            aligner: Aligner::new(offset_ns),
            reader,
            nv,
            base: Instant::now(),
            first_log_ns: None,
            horizon_ns: None,
            exhausted: false,
            states: 0,
            hold_out,
            ingest: Arc::new(IngestCounters::default()),
            undecodable: 0,
            ended_early: None,
            last_refusal: None,
            progress: Arc::new(Progress::default()),
        }
    }

    /// Commands replaced before they acted over any state's interval.
    pub fn commands_superseded(&self) -> u64 {
        self.aligner.superseded()
    }

    /// Joint states whose stamps jumped (the stamp clock re-synchronised).
    pub fn stamp_resyncs(&self) -> u64 {
        self.reader.stamp_resyncs()
    }

    /// Reads the next message into the aligner (false: the recording is exhausted).
    fn pull(&mut self) -> bool {
        let message = match self.messages.next() {
            None => return false,
            Some(Err(e)) => {
                self.ended_early = Some(e.to_string());
                return false;
            }
            Some(Ok(m)) => m,
        };
        self.progress.replayed.fetch_add(1, Ordering::Relaxed);
        let t = message.log_time_ns;
        self.horizon_ns = Some(self.horizon_ns.map_or(t, |h| h.max(t)));
        match message.topic {
            JOINT_STATES => match gpn_bag::decode::<JointState>(&message.data) {
                Ok(state) => self.aligner.push_state(t, state),
                Err(_) => self.undecodable += 1,
            },
            COMMAND => match gpn_bag::decode::<Float64MultiArray>(&message.data) {
                Ok(command) => self.command(t, command.data),
                Err(_) => self.undecodable += 1,
            },
            _ => {}
        }
        true
    }

    /// A command, refused as the node refuses one (wrong length, not finite).
    fn command(&mut self, log_ns: u64, data: Vec<f64>) {
        let ingest = &self.ingest;
        if data.len() != self.nv {
            ingest.count(&ingest.commands_refused_length);
        } else if data.iter().any(|x| !x.is_finite()) {
            ingest.count(&ingest.commands_refused_non_finite);
        } else {
            ingest.count(&ingest.commands_accepted);
            self.aligner.push_command(log_ns, data);
        }
    }
}

impl Plant for BagPlant<'_> {
    type Error = Infallible;

    fn nv(&self) -> usize {
        self.nv
    }

    fn accepts_commands(&self) -> bool {
        false
    }

    fn read(&mut self, frame: &mut StateFrame, _: Duration) -> Result<Read, Infallible> {
        loop {
            let horizon = if self.exhausted {
                None
            } else {
                Some(self.horizon_ns.unwrap_or(0))
            };
            if let Some((pending, command)) = self.aligner.pop(horizon) {
                self.ingest.count(&self.ingest.joint_states);
                self.states += 1;
                if self.states > self.hold_out.after_states {
                    self.hold_out.reached.store(true, Ordering::Relaxed);
                }
                let first = *self.first_log_ns.get_or_insert(pending.log_ns);
                let received =
                    self.base + Duration::from_nanos(pending.log_ns.saturating_sub(first));
                match self.reader.read(&pending.state, command, received, frame) {
                    Ok(()) => return Ok(Read::State { more_queued: false }),
                    Err(why) => {
                        self.ingest.reject(&why);
                        self.last_refusal = Some(why.to_string());
                        continue;
                    }
                }
            }
            if self.exhausted {
                return Ok(Read::Closed);
            }
            self.exhausted = !self.pull();
        }
    }

    fn write(&mut self, _: Command<'_>) -> Result<(), Infallible> {
        Ok(())
    }
}
