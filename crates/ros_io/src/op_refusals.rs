//! Refused model operations (swap, load, save through the node's services), counted by
//! operation and reason: a hostile or mistaken caller shows up in `/diagnostics` and in the
//! run summary, not only in the reply it got.

use std::collections::BTreeMap;
use std::sync::Mutex;

use gpn_plugin_host::{HostError, ModelFileError};

/// Why an operation was refused: a short stable key (counted) and the message for the
/// caller.
#[derive(Debug)]
pub struct Refused {
    /// The key counted in `/diagnostics` (`abi_mismatch`, `not_a_model_file`, `busy`…).
    pub reason: &'static str,
    /// What the caller is told.
    pub message: String,
}

impl Refused {
    /// A refusal for `reason` with `message`.
    pub fn new(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

impl From<HostError> for Refused {
    fn from(e: HostError) -> Self {
        Self::new(e.reason(), e.to_string())
    }
}

impl From<ModelFileError> for Refused {
    fn from(e: ModelFileError) -> Self {
        Self::new(e.reason(), e.to_string())
    }
}

impl From<Refused> for String {
    fn from(r: Refused) -> Self {
        r.message
    }
}

/// The counts, shared by the operations (which count) and the publish thread (which reports).
/// Never touched by the control thread.
#[derive(Debug, Default)]
pub struct OpRefusals {
    counts: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
}

impl OpRefusals {
    /// Counts one refusal of operation `op` (`swap`, `load`, `save`) for `reason`.
    pub fn count(&self, op: &'static str, reason: &'static str) {
        if let Ok(mut counts) = self.counts.lock() {
            *counts.entry((op, reason)).or_default() += 1;
        }
    }

    /// `("<op> refused: <reason>", n)` for every pair counted, sorted.
    pub fn snapshot(&self) -> Vec<(String, u64)> {
        self.counts
            .lock()
            .map(|counts| {
                counts
                    .iter()
                    .map(|((op, reason), n)| (format!("{op} refused: {reason}"), *n))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_operation_and_reason() {
        let r = OpRefusals::default();
        r.count("swap", "not_found");
        r.count("load", "not_a_model_file");
        r.count("swap", "not_found");
        assert_eq!(
            r.snapshot(),
            [
                ("load refused: not_a_model_file".to_owned(), 1),
                ("swap refused: not_found".to_owned(), 2)
            ]
        );
    }
}
