//! What `gp-node learn` reports (printed, or as JSON with `--json`).

use serde::Serialize;

use crate::align::ClockOffset;
use crate::holdout::HeldOutScores;

/// A refusal count: what was refused (a message, a sample), why, how often.
#[derive(Debug, Clone, Serialize)]
pub struct Refusal {
    /// `message` (the node's reader) or `sample` (the learner's gate).
    pub of: &'static str,
    /// The reason, as the node's diagnostics name it.
    pub reason: &'static str,
    /// How many.
    pub count: u64,
}

impl Refusal {
    pub(crate) fn new(of: &'static str, reason: &'static str, count: u64) -> Self {
        Self { of, reason, count }
    }
}

/// The clock offset in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct OffsetMs {
    /// Median of log time − stamp, ms.
    pub median_ms: f64,
    /// 5th percentile, ms.
    pub p05_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
}

impl From<ClockOffset> for OffsetMs {
    fn from(o: ClockOffset) -> Self {
        Self {
            median_ms: o.median_ns as f64 * 1e-6,
            p05_ms: o.p05_ns as f64 * 1e-6,
            p95_ms: o.p95_ns as f64 * 1e-6,
        }
    }
}

/// The report of one replay.
#[derive(Debug, Clone, Serialize)]
pub struct LearnReport {
    /// The recording.
    pub recording: String,
    /// Its storage (`mcap`, `sqlite3`).
    pub storage: &'static str,
    /// Where the robot came from.
    pub robot: String,
    /// Joints of the model.
    pub joints: usize,
    /// Plugin of the model saved.
    pub plugin: String,
    /// Its version.
    pub plugin_version: String,
    /// Log time from the first joint state to the last, s.
    pub duration_s: f64,
    /// Joint-state messages.
    pub joint_states: u64,
    /// Of those, with measured efforts.
    pub with_effort: u64,
    /// Effort-command messages.
    pub commands: u64,
    /// Commands replaced before they acted over any state's interval.
    pub commands_superseded: u64,
    /// Messages that did not decode as their type (skipped).
    pub undecodable: u64,
    /// Times the stamps jumped and the stamp clock re-synchronised.
    pub stamp_resyncs: u64,
    /// log time − stamp of the joint states.
    pub clock_offset: Option<OffsetMs>,
    /// States the loop ticked.
    pub ticks: u64,
    /// Samples that passed the learner's gate.
    pub samples_passed_gate: u64,
    /// Samples the model learned.
    pub samples_learned: u64,
    /// Refusals by reason.
    pub refused: Vec<Refusal>,
    /// Fraction of the joint states held out.
    pub hold_out: f64,
    /// Scores on the held-out tail.
    pub held_out: Option<HeldOutScores>,
    /// The model file written.
    pub model_file: String,
    /// Bytes of model state in it.
    pub model_state_bytes: u64,
    /// Samples the saved model has seen.
    pub samples_in_model: u64,
    /// Wall time, s.
    pub wall_s: f64,
    /// Joint states replayed per second of wall time.
    pub states_per_s: f64,
    /// The recording ended early (damaged or truncated): why; what came before was used.
    pub ended_early: Option<String>,
}
