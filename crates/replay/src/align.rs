//! Time alignment of a recording's two streams. A joint state carries its sampling time in
//! its header stamp (the robot's clock); the effort command has no header, only the time
//! the recorder received it (log time, the recorder's clock). The two clocks differ by an
//! offset (clock skew plus transport delay), estimated as the median of log time − stamp
//! over the joint states. A state sampled at stamp s is paired with the last command logged
//! at or before s + offset — the command that acted over the interval it ends — held
//! constant until the next one. An unstamped state (zero stamp) is placed at its log time.

use std::collections::VecDeque;

use gpn_msgs::sensor_msgs::JointState;

/// Offsets kept at most for the median (decimated evenly beyond).
const OFFSETS_KEPT: usize = 4096;

/// States waiting for the commands up to their time at most (a bound on memory should the
/// offset be far larger than the interval between messages).
const PENDING_MAX: usize = 4096;

/// The estimated offset between the recorder's clock and the stamps, ns.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ClockOffset {
    /// Median of log time − stamp, ns.
    pub median_ns: i64,
    /// 5th percentile, ns.
    pub p05_ns: i64,
    /// 95th percentile, ns.
    pub p95_ns: i64,
    /// Stamped joint states it was estimated from.
    pub states: u64,
}

/// Collects log time − stamp of the stamped joint states, evenly decimated to a fixed
/// memory: every `every`-th value is kept, and when the store fills, every other one is
/// dropped and `every` doubles.
#[derive(Debug, Clone)]
pub struct OffsetEstimator {
    kept: Vec<i64>,
    every: u64,
    seen: u64,
}

impl Default for OffsetEstimator {
    fn default() -> Self {
        Self {
            kept: Vec::with_capacity(OFFSETS_KEPT),
            every: 1,
            seen: 0,
        }
    }
}

impl OffsetEstimator {
    /// One stamped state: logged at `log_ns`, stamped `stamp_ns`.
    pub fn push(&mut self, log_ns: u64, stamp_ns: u64) {
        if self.seen.is_multiple_of(self.every) {
            if self.kept.len() == OFFSETS_KEPT {
                let mut i = 0;
                self.kept.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.every *= 2;
            }
            if self.seen.is_multiple_of(self.every) {
                self.kept.push(signed_difference(log_ns, stamp_ns));
            }
        }
        self.seen += 1;
    }

    /// The offset, if any stamped state was seen.
    pub fn estimate(&self) -> Option<ClockOffset> {
        let mut sorted = self.kept.clone();
        sorted.sort_unstable();
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        (!sorted.is_empty()).then(|| ClockOffset {
            median_ns: at(0.5),
            p05_ns: at(0.05),
            p95_ns: at(0.95),
            states: self.seen,
        })
    }
}

/// `a − b` as a signed number of ns (saturating).
fn signed_difference(a: u64, b: u64) -> i64 {
    let d = i128::from(a) - i128::from(b);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// A joint state waiting for its command.
#[derive(Debug, Clone)]
pub struct Pending {
    /// When it was logged, ns.
    pub log_ns: u64,
    /// Its time on the recorder's clock (stamp + offset, or the log time), ns.
    pub at_ns: u64,
    /// The message.
    pub state: JointState,
}

/// Pairs joint states with the command in force at their time (see the module doc). Feed it
/// messages in recorded order; take the states out with [`Aligner::pop`].
#[derive(Debug, Clone)]
pub struct Aligner {
    offset_ns: i64,
    pending: VecDeque<Pending>,
    /// Commands logged but not yet in force for any state released, in log order.
    commands: VecDeque<(u64, Vec<f64>)>,
    /// The command in force.
    current: Option<Vec<f64>>,
    /// Commands superseded before any state used them (the stream is faster than the states).
    superseded: u64,
}

impl Aligner {
    /// An aligner with the estimated clock offset (0 without one).
    pub fn new(offset_ns: i64) -> Self {
        Self {
            offset_ns,
            pending: VecDeque::new(),
            commands: VecDeque::new(),
            current: None,
            superseded: 0,
        }
    }

    /// A joint state logged at `log_ns`.
    pub fn push_state(&mut self, log_ns: u64, state: JointState) {
        let stamp = &state.header.stamp;
        let at_ns = if stamp.is_zero() {
            log_ns
        } else {
            let stamp_ns = i128::from(stamp.sec) * 1_000_000_000 + i128::from(stamp.nanosec);
            u64::try_from(stamp_ns + i128::from(self.offset_ns)).unwrap_or(0)
        };
        self.pending.push_back(Pending {
            log_ns,
            at_ns,
            state,
        });
    }

    /// A command logged at `log_ns`.
    pub fn push_command(&mut self, log_ns: u64, command: Vec<f64>) {
        self.commands.push_back((log_ns, command));
    }

    /// The oldest state whose command is known once the recording has reached `horizon_ns`
    /// (None: the recording ended, every state is released), with the command in force at
    /// its time (None before the first).
    pub fn pop(&mut self, horizon_ns: Option<u64>) -> Option<(Pending, Option<&[f64]>)> {
        let front = self.pending.front()?;
        let ready = match horizon_ns {
            None => true,
            Some(h) => front.at_ns < h || self.pending.len() > PENDING_MAX,
        };
        if !ready {
            return None;
        }
        let state = self.pending.pop_front()?;
        let mut newly = 0;
        while self
            .commands
            .front()
            .is_some_and(|(t, _)| *t <= state.at_ns)
        {
            self.current = self.commands.pop_front().map(|(_, c)| c);
            newly += 1;
        }
        self.superseded += newly.max(1) - 1;
        Some((state, self.current.as_deref()))
    }

    /// Commands that were replaced before any state's interval ended under them.
    pub fn superseded(&self) -> u64 {
        self.superseded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_msgs::builtin_interfaces::Time;

    fn state(stamp_ns: u64) -> JointState {
        let mut s = JointState::default();
        s.header.stamp = Time {
            sec: (stamp_ns / 1_000_000_000) as i32,
            nanosec: (stamp_ns % 1_000_000_000) as u32,
        };
        s
    }

    #[test]
    fn the_offset_is_the_median_and_stays_in_fixed_memory() {
        let mut e = OffsetEstimator::default();
        for k in 0..100_000u64 {
            // Logged 2 ms after the stamp, every 100th 50 ms late.
            let late = if k % 100 == 0 { 50_000_000 } else { 2_000_000 };
            e.push(
                1_000_000_000 + k * 1_000_000 + late,
                1_000_000_000 + k * 1_000_000,
            );
        }
        let o = e.estimate().expect("estimated");
        assert_eq!(o.median_ns, 2_000_000);
        assert_eq!(o.states, 100_000);
        assert!(e.kept.len() <= OFFSETS_KEPT);
        assert!(OffsetEstimator::default().estimate().is_none());
    }

    #[test]
    fn a_state_gets_the_last_command_logged_before_its_stamp_plus_the_offset() {
        // Stamps are 1 s behind the recorder's clock.
        let mut a = Aligner::new(1_000_000_000);
        a.push_command(1_000_000_000, vec![1.0]);
        // Stamped 0.010 s → at 1.010 s: command 1 (logged at 1.000) is in force.
        a.push_state(1_011_000_000, state(10_000_000));
        a.push_command(1_012_000_000, vec![2.0]);
        // Stamped 0.015 s → at 1.015 s; logged early, at 1.013 s, before the command of
        // 1.014 s that is in force at its time arrived.
        a.push_state(1_013_000_000, state(15_000_000));
        assert!(
            a.pop(Some(1_013_000_000))
                .is_some_and(|(s, c)| s.at_ns == 1_010_000_000 && c == Some(&[1.0][..]))
        );
        assert!(
            a.pop(Some(1_013_000_000)).is_none(),
            "its command may still come"
        );
        a.push_command(1_014_000_000, vec![3.0]);
        let (s, c) = a.pop(Some(1_016_000_000)).expect("released");
        assert_eq!(s.at_ns, 1_015_000_000);
        assert_eq!(c, Some(&[3.0][..]));
        assert_eq!(
            a.superseded(),
            1,
            "command 2 acted over no state's interval"
        );
        assert!(a.pop(None).is_none());
    }

    #[test]
    fn an_unstamped_state_is_placed_at_its_log_time_and_the_end_releases_all() {
        let mut a = Aligner::new(123);
        a.push_state(5_000, JointState::default());
        assert!(a.pop(Some(5_000)).is_none());
        let (s, c) = a.pop(None).expect("released at the end");
        assert_eq!(s.at_ns, 5_000);
        assert!(c.is_none(), "no command yet");
    }
}
