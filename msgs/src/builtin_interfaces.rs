//! `builtin_interfaces`: time stamps and durations.

use serde::{Deserialize, Serialize};

use crate::ros_message;

/// `builtin_interfaces/msg/Time`: seconds and nanoseconds since the epoch of the clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Time {
    /// Whole seconds.
    pub sec: i32,
    /// Nanoseconds, 0 ≤ nanosec < 10⁹.
    pub nanosec: u32,
}
ros_message!(
    Time,
    "builtin_interfaces/msg/Time",
    [("sec", "int32"), ("nanosec", "uint32")]
);

impl Time {
    /// The time `secs` seconds after the epoch (rounded to the nanosecond; negative and
    /// non-finite values clamp to zero, beyond i32 seconds to the largest time).
    pub fn from_secs_f64(secs: f64) -> Self {
        if !(secs.is_finite() && secs > 0.0) {
            return Self::default();
        }
        let total_ns = (secs * 1e9).round();
        if total_ns >= (i32::MAX as f64 + 1.0) * 1e9 {
            return Self {
                sec: i32::MAX,
                nanosec: 999_999_999,
            };
        }
        let total_ns = total_ns as u64;
        Self {
            sec: (total_ns / 1_000_000_000) as i32,
            nanosec: (total_ns % 1_000_000_000) as u32,
        }
    }

    /// Seconds as a float (NaN when `nanosec` is out of range, as no valid stamp has it).
    pub fn as_secs_f64(&self) -> f64 {
        if self.nanosec >= 1_000_000_000 {
            return f64::NAN;
        }
        self.sec as f64 + self.nanosec as f64 * 1e-9
    }

    /// Whether this is the zero time (ROS: "unset" for stamps, "now" for trajectories).
    pub fn is_zero(&self) -> bool {
        self.sec == 0 && self.nanosec == 0
    }
}

/// `builtin_interfaces/msg/Duration`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Duration {
    /// Whole seconds (may be negative).
    pub sec: i32,
    /// Nanoseconds added to `sec`, 0 ≤ nanosec < 10⁹.
    pub nanosec: u32,
}
ros_message!(
    Duration,
    "builtin_interfaces/msg/Duration",
    [("sec", "int32"), ("nanosec", "uint32")]
);

impl Duration {
    /// A duration of `secs` seconds (rounded to the nanosecond; non-finite gives zero).
    pub fn from_secs_f64(secs: f64) -> Self {
        if !secs.is_finite() {
            return Self::default();
        }
        let whole = secs.floor();
        let mut nanosec = ((secs - whole) * 1e9).round() as u32;
        let mut sec = whole.clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        if nanosec >= 1_000_000_000 {
            nanosec -= 1_000_000_000;
            sec = sec.saturating_add(1);
        }
        Self { sec, nanosec }
    }

    /// Seconds as a float (NaN when `nanosec` is out of range).
    pub fn as_secs_f64(&self) -> f64 {
        if self.nanosec >= 1_000_000_000 {
            return f64::NAN;
        }
        self.sec as f64 + self.nanosec as f64 * 1e-9
    }
}
