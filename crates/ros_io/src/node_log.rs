//! The node's log lines: through rcutils (r2r's logging) to the console (stderr) and the
//! log file rcl keeps under `$ROS_HOME/log`, under the node's logger name, and to `/rosout`
//! (where `ros2 topic echo /rosout` and rqt_console look). Since Jazzy, rcl leaves creating a
//! node's `/rosout` publisher to the client library, and r2r 0.9.7 does not: this module
//! publishes `rcl_interfaces/msg/Log` there itself, with rcl's `/rosout` QoS (reliable,
//! transient local, 1000 deep, 10 s lifespan). Never called on the control thread (rcutils
//! and the publisher take locks; rcutils may write a file).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use r2r::rcl_interfaces::msg::Log;

use super::transport::{NodeClock, RosError, Transport, ros_now};

/// The node's logger.
#[derive(Clone)]
pub(crate) struct NodeLog {
    logger: Arc<str>,
    rosout: Arc<Mutex<r2r::Publisher<Log>>>,
    clock: NodeClock,
}

/// rcl_interfaces/msg/Log levels.
const INFO: u8 = 20;
const WARN: u8 = 30;
const ERROR: u8 = 40;

impl NodeLog {
    /// The node's logger (`r2r::Node::logger`) and its `/rosout` publisher.
    pub(crate) fn open(transport: &mut Transport) -> Result<Self, RosError> {
        let qos = r2r::QosProfile::default()
            .reliable()
            .transient_local()
            .keep_last(1000)
            .lifespan(Duration::from_secs(10));
        Ok(Self {
            logger: transport.logger().into(),
            rosout: Arc::new(Mutex::new(transport.rcl_publisher::<Log>("/rosout", qos)?)),
            clock: transport.clock(),
        })
    }

    /// An informational line.
    pub(crate) fn info(&self, message: &str) {
        let message = printable(message);
        r2r::log_info!(&self.logger, "{}", message);
        self.to_rosout(INFO, &message);
    }

    /// A warning.
    pub(crate) fn warn(&self, message: &str) {
        let message = printable(message);
        r2r::log_warn!(&self.logger, "{}", message);
        self.to_rosout(WARN, &message);
    }

    /// An error the node survives.
    pub(crate) fn error(&self, message: &str) {
        let message = printable(message);
        r2r::log_error!(&self.logger, "{}", message);
        self.to_rosout(ERROR, &message);
    }

    fn to_rosout(&self, level: u8, message: &str) {
        let line = Log {
            stamp: ros_now(&self.clock),
            level,
            name: self.logger.to_string(),
            msg: message.to_owned(),
            ..Default::default()
        };
        if let Ok(rosout) = self.rosout.lock() {
            let _ = rosout.publish(&line);
        }
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
