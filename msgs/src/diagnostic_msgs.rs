//! `diagnostic_msgs`: the `/diagnostics` aggregate that `rqt_robot_monitor` and the
//! diagnostic aggregator read.

use serde::{Deserialize, Serialize};

use crate::ros_message;
use crate::std_msgs::Header;

/// `diagnostic_msgs/msg/KeyValue`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyValue {
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
}
ros_message!(
    KeyValue,
    "diagnostic_msgs/msg/KeyValue",
    [("key", "string"), ("value", "string")]
);

/// `diagnostic_msgs/msg/DiagnosticStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticStatus {
    /// One of [`DiagnosticStatus::OK`], `WARN`, `ERROR`, `STALE`.
    pub level: u8,
    /// Name of the component.
    pub name: String,
    /// Human-readable summary.
    pub message: String,
    /// Hardware identifier.
    pub hardware_id: String,
    /// Values.
    pub values: Vec<KeyValue>,
}
ros_message!(
    DiagnosticStatus,
    "diagnostic_msgs/msg/DiagnosticStatus",
    [
        ("level", "byte"),
        ("name", "string"),
        ("message", "string"),
        ("hardware_id", "string"),
        ("values", "diagnostic_msgs/KeyValue[]"),
    ]
);

impl DiagnosticStatus {
    /// Level: all good.
    pub const OK: u8 = 0;
    /// Level: warning.
    pub const WARN: u8 = 1;
    /// Level: error.
    pub const ERROR: u8 = 2;
    /// Level: no recent data.
    pub const STALE: u8 = 3;
}

/// `diagnostic_msgs/msg/DiagnosticArray`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticArray {
    /// Stamp.
    pub header: Header,
    /// One status per component.
    pub status: Vec<DiagnosticStatus>,
}
ros_message!(
    DiagnosticArray,
    "diagnostic_msgs/msg/DiagnosticArray",
    [
        ("header", "std_msgs/Header"),
        ("status", "diagnostic_msgs/DiagnosticStatus[]")
    ]
);
