//! The sender's stamp clock related to the receipt clock: which joint-state stamps are
//! plausible, and the node's own continuous timeline built from them.
//!
//! A stamp is predicted from the last accepted one and the receipt time since:
//! `predicted = s_last + (r − r_last)`, i.e. the offset `s − r` of the last accepted
//! message, re-estimated at every accepted message. A stamp is plausible when it advances and
//! lies at most `tolerance_s + max_rate · (r − r_last)` beyond the last one: the sender's
//! clock may run at any rate up to `max_rate` times the receipt clock (a simulator faster
//! than real time, or paused) and jitter by `tolerance_s`. Anything else is refused and
//! counted, and never becomes the reference:
//! - a stamp that does not advance (an older message, reordered by the transport) is
//!   refused as out of order; the same stamp again is a *repeat* (a lock-step driver
//!   re-sending a state it got no answer to);
//! - a stamp far beyond the prediction (a far-future stamp, another clock's) is refused as
//!   implausible;
//! - a zero stamp means "unstamped" for that message only: it gets the predicted time and
//!   leaves the reference alone.
//!
//! Recovery: when `resync_after` refused messages in a row agree with each other (each
//! advances from the previous one, or repeats it, within the same bounds) while no message
//! was accepted, the sender's clock itself jumped (a simulation reset, a driver restarted,
//! or the first message the node saw was the odd one): the clock re-synchronises on them.
//! A stream that keeps flowing is never displaced by stray messages of another clock.
//!
//! The node's timeline `t = stamp − shift` equals the stamps (shift 0) until the first
//! re-synchronisation, which sets the shift so that `t` continues where the prediction was:
//! the learner, the acceleration estimate and the reference never see time jump. Stamps on
//! the sender's clock (a trajectory's start) convert by `stamp_secs − t_secs`.
//! Real-time: plain arithmetic, no allocation.

pub use gpn_control::control_loop::Timing;

/// Bounds of a plausible stamp (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StampParams {
    /// Jitter allowed beyond the prediction, s.
    pub tolerance_s: f64,
    /// Fastest rate of the sender's clock relative to the receipt clock.
    pub max_rate: f64,
    /// Refused messages in a row, agreeing with each other, that re-synchronise the clock.
    pub resync_after: u32,
}

impl Default for StampParams {
    fn default() -> Self {
        Self {
            tolerance_s: 0.5,
            max_rate: 10.0,
            resync_after: 3,
        }
    }
}

/// An accepted message's time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamped {
    /// On the node's timeline, s.
    pub t_secs: f64,
    /// On the sender's clock, s (the prediction for an unstamped message).
    pub stamp_secs: f64,
    /// New or repeated.
    pub timing: Timing,
}

/// Why a stamp was refused.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum StampRefusal {
    /// Older than the last accepted stamp.
    #[error(
        "joint_states: stamp {stamp:.6} s is older than the last one, {last:.6} s (out of order)"
    )]
    OutOfOrder {
        /// The message's stamp, s.
        stamp: f64,
        /// The last accepted stamp, s.
        last: f64,
    },
    /// Too far beyond the predicted stamp.
    #[error(
        "joint_states: stamp {stamp:.6} s is {:.3} s beyond the predicted {predicted:.6} s (allowed {allowed:.3} s): a stray clock; refused",
        stamp - predicted
    )]
    Implausible {
        /// The message's stamp, s.
        stamp: f64,
        /// The predicted stamp, s.
        predicted: f64,
        /// How far beyond the prediction a stamp may be, s.
        allowed: f64,
    },
}

/// A stamp and its receipt time, s.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mark {
    stamp: f64,
    receipt: f64,
}

/// Refused messages that agree with each other so far.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    last: Mark,
    count: u32,
}

/// The clock (one per joint-state stream).
#[derive(Debug, Clone)]
pub struct StampClock {
    params: StampParams,
    /// The last accepted stamped message.
    anchor: Option<Mark>,
    /// The last output: node time and receipt time.
    last: Option<Mark>,
    shift: f64,
    candidate: Option<Candidate>,
    resyncs: u64,
}

impl StampClock {
    /// A clock with these bounds.
    pub fn new(params: StampParams) -> Self {
        Self {
            params,
            anchor: None,
            last: None,
            shift: 0.0,
            candidate: None,
            resyncs: 0,
        }
    }

    /// Re-synchronisations so far.
    pub fn resyncs(&self) -> u64 {
        self.resyncs
    }

    /// How far beyond a reference stamp a stamp may lie, s, `elapsed` seconds of receipt
    /// time after the reference.
    fn allowed(&self, elapsed: f64) -> f64 {
        self.params.tolerance_s + self.params.max_rate * elapsed.max(0.0)
    }

    /// Node time predicted at receipt time `receipt` (the receipt time itself before any
    /// message).
    fn predict_t(&self, receipt: f64) -> f64 {
        match self.last {
            Some(m) => m.stamp + (receipt - m.receipt).max(0.0),
            None => receipt,
        }
    }

    fn output(&mut self, stamp: f64, receipt: f64, timing: Timing) -> Stamped {
        let t_secs = stamp - self.shift;
        if timing == Timing::New {
            self.last = Some(Mark {
                stamp: t_secs,
                receipt,
            });
        }
        Stamped {
            t_secs,
            stamp_secs: stamp,
            timing,
        }
    }

    /// Times a message stamped `stamp` s (`None`: unstamped) received `receipt` s after the
    /// reader started.
    pub fn observe(&mut self, stamp: Option<f64>, receipt: f64) -> Result<Stamped, StampRefusal> {
        let Some(stamp) = stamp else {
            let t = self.predict_t(receipt);
            let timing = match self.last {
                Some(m) if t <= m.stamp => Timing::Repeat,
                _ => Timing::New,
            };
            return Ok(self.output(t + self.shift, receipt, timing));
        };
        let Some(anchor) = self.anchor else {
            // The first stamped message: continue the unstamped timeline, if there was one.
            self.shift = match self.last {
                Some(_) => stamp - self.predict_t(receipt),
                None => 0.0,
            };
            self.anchor = Some(Mark { stamp, receipt });
            return Ok(self.output(stamp, receipt, Timing::New));
        };
        if stamp == anchor.stamp {
            return Ok(self.output(stamp, receipt, Timing::Repeat));
        }
        let elapsed = receipt - anchor.receipt;
        let allowed = self.allowed(elapsed);
        if stamp > anchor.stamp && stamp <= anchor.stamp + allowed {
            self.anchor = Some(Mark { stamp, receipt });
            self.candidate = None;
            return Ok(self.output(stamp, receipt, Timing::New));
        }
        let agrees = self.candidate.is_some_and(|c| {
            stamp >= c.last.stamp && stamp <= c.last.stamp + self.allowed(receipt - c.last.receipt)
        });
        let count = if agrees {
            self.candidate.map_or(1, |c| c.count + 1)
        } else {
            1
        };
        let mark = Mark { stamp, receipt };
        if count >= self.params.resync_after.max(1) {
            self.shift = stamp - self.predict_t(receipt);
            self.anchor = Some(mark);
            self.candidate = None;
            self.resyncs += 1;
            return Ok(self.output(stamp, receipt, Timing::New));
        }
        self.candidate = Some(Candidate { last: mark, count });
        Err(if stamp < anchor.stamp {
            StampRefusal::OutOfOrder {
                stamp,
                last: anchor.stamp,
            }
        } else {
            StampRefusal::Implausible {
                stamp,
                predicted: anchor.stamp + elapsed.max(0.0),
                allowed,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> StampClock {
        StampClock::new(StampParams::default())
    }

    /// Feeds `n` messages at 1 kHz on both clocks from `k0`, stamps offset by `offset`.
    fn stream(c: &mut StampClock, k0: usize, n: usize, offset: f64) -> Vec<Stamped> {
        (k0..k0 + n)
            .map(|k| {
                let r = k as f64 * 1e-3;
                c.observe(Some(offset + r), r).expect("plausible")
            })
            .collect()
    }

    #[test]
    fn a_plain_stream_keeps_its_stamps() {
        let mut c = clock();
        let out = stream(&mut c, 0, 100, 1.7e9);
        assert!(
            out.iter()
                .all(|s| s.timing == Timing::New && s.t_secs == s.stamp_secs)
        );
        assert_eq!(out[42].t_secs, 1.7e9 + 0.042);
    }

    #[test]
    fn a_far_future_stamp_is_refused_and_never_becomes_the_reference() {
        let mut c = clock();
        stream(&mut c, 0, 10, 5.0);
        let far = c.observe(Some(2_147_483_647.0), 0.0105);
        assert!(
            matches!(far, Err(StampRefusal::Implausible { .. })),
            "{far:?}"
        );
        let next = stream(&mut c, 11, 100, 5.0);
        assert_eq!(next[0].t_secs, 5.011);
        assert_eq!(c.resyncs(), 0);
    }

    #[test]
    fn a_zero_stamp_is_unstamped_for_that_message_only() {
        let mut c = clock();
        stream(&mut c, 0, 10, 1.7e9);
        let z = c.observe(None, 0.0105).expect("unstamped");
        assert_eq!(z.timing, Timing::New);
        assert!((z.t_secs - (1.7e9 + 0.0105)).abs() < 1e-6);
        let next = stream(&mut c, 11, 5, 1.7e9);
        assert_eq!(next[0].t_secs, 1.7e9 + 0.011);
        assert_eq!(c.resyncs(), 0);
    }

    #[test]
    fn a_stream_that_starts_unstamped_continues_its_timeline_on_stamps() {
        let mut c = clock();
        let first = c.observe(None, 0.5).expect("unstamped");
        assert_eq!(first.t_secs, 0.5);
        // Then simulated time from 0.001 s: not refused, not older than the first.
        let out = stream(&mut c, 501, 100, -0.5);
        assert!(out.windows(2).all(|w| w[1].t_secs > w[0].t_secs));
        assert!(
            out[0].t_secs > 0.5 && out[0].t_secs < 0.5 + 2e-3,
            "{:?}",
            out[0]
        );
        assert!((out[0].stamp_secs - 0.001).abs() < 1e-12);
    }

    #[test]
    fn a_bad_first_message_is_left_behind_after_a_few_plausible_ones() {
        let mut c = clock();
        c.observe(Some(2_147_483_647.0), 0.0)
            .expect("first is taken");
        let mut refused = 0;
        let mut accepted = Vec::new();
        for k in 1..20 {
            let r = k as f64 * 1e-3;
            match c.observe(Some(100.0 + r), r) {
                Ok(s) => accepted.push(s),
                Err(StampRefusal::OutOfOrder { .. }) => refused += 1,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(refused, 2);
        assert_eq!(c.resyncs(), 1);
        // The timeline continues from the bad message's time, without a jump back.
        assert!(
            accepted
                .windows(2)
                .all(|w| (w[1].t_secs - w[0].t_secs - 1e-3).abs() < 1e-6)
        );
        assert!((accepted[0].t_secs - (2_147_483_647.0 + 0.003)).abs() < 1e-3);
        assert_eq!(accepted[0].stamp_secs, 100.003);
    }

    #[test]
    fn stray_messages_of_another_clock_never_displace_a_flowing_stream() {
        let mut c = clock();
        for k in 0..200 {
            let r = k as f64 * 1e-3;
            c.observe(Some(10.0 + r), r).expect("honest");
            assert!(
                c.observe(Some(1e6 + r), r).is_err(),
                "stray accepted at {k}"
            );
        }
        assert_eq!(c.resyncs(), 0);
    }

    #[test]
    fn repeats_and_reordered_messages() {
        let mut c = clock();
        stream(&mut c, 0, 10, 1.0);
        let again = c.observe(Some(1.009), 0.0101).expect("repeat");
        assert_eq!(again.timing, Timing::Repeat);
        assert!(matches!(
            c.observe(Some(1.005), 0.0102),
            Err(StampRefusal::OutOfOrder { .. })
        ));
        assert_eq!(
            c.observe(Some(1.010), 0.0103).expect("next").timing,
            Timing::New
        );
    }

    #[test]
    fn a_paused_or_fast_sender_clock_is_plausible() {
        let mut c = clock();
        stream(&mut c, 0, 10, 0.0);
        // The sender paused 30 s of receipt time: its next stamp is only 1 ms later.
        assert!(c.observe(Some(0.010), 30.0).is_ok());
        // A simulator 5× faster than the receipt clock, after a 1 s gap.
        assert!(c.observe(Some(5.010), 31.0).is_ok());
    }
}
