//! The node's log lines through rcutils (r2r's logging): each goes, under the node's logger
//! name, to the console (stderr), to the log file rcl keeps under `$ROS_HOME/log`, and to
//! `/rosout` — where ROS 2 tools (`ros2 topic echo /rosout`, rqt_console) look. Never called
//! on the control thread (rcutils takes a lock and may write a file).

use std::sync::Arc;

/// The node's logger.
#[derive(Debug, Clone)]
pub(crate) struct NodeLog {
    logger: Arc<str>,
}

impl NodeLog {
    /// The logger named `logger` (the node's: `r2r::Node::logger`).
    pub(crate) fn new(logger: &str) -> Self {
        Self {
            logger: logger.into(),
        }
    }

    /// An informational line.
    pub(crate) fn info(&self, message: &str) {
        r2r::log_info!(&self.logger, "{}", printable(message));
    }

    /// A warning.
    pub(crate) fn warn(&self, message: &str) {
        r2r::log_warn!(&self.logger, "{}", printable(message));
    }

    /// An error the node survives.
    pub(crate) fn error(&self, message: &str) {
        r2r::log_error!(&self.logger, "{}", printable(message));
    }
}

/// rcutils takes C strings: a NUL (from a peer's text, e.g. a change description) would
/// make r2r panic, so it becomes U+FFFD.
fn printable(message: &str) -> std::borrow::Cow<'_, str> {
    if message.contains('\0') {
        message.replace('\0', "\u{FFFD}").into()
    } else {
        message.into()
    }
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn a_nul_never_reaches_rcutils() {
        assert_eq!(printable("a\0b"), "a\u{FFFD}b");
        assert_eq!(printable("plain"), "plain");
    }
}
