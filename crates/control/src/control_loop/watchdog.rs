//! The joint-state watchdog: after `timeout` without a valid joint state the node publishes
//! the configured safe output ([`super::WatchdogAction`]) and repeats it every
//! `timeout` while the silence lasts; the first valid state clears it. Before the first valid
//! state it never trips: a node that has not commanded yet has nothing to make safe (and
//! does not know the pose to hold). Pure state machine over instants the caller passes in, so
//! tests drive it without sleeping.

use std::time::{Duration, Instant};

/// What the caller should do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchdogVerdict {
    /// Data is fresh.
    Healthy,
    /// The silence just passed the timeout (or another timeout of silence passed): publish
    /// the safe output.
    Trip,
    /// Still silent, and the safe output was published less than a timeout ago.
    Stale,
}

/// Watchdog state.
#[derive(Debug, Clone)]
pub struct Watchdog {
    timeout: Duration,
    armed: bool,
    last_valid: Instant,
    last_trip: Option<Instant>,
    trips: u64,
    episodes: u64,
}

impl Watchdog {
    /// A watchdog created at `now`, armed by the first valid state.
    pub fn new(timeout: Duration, now: Instant) -> Self {
        Self {
            timeout,
            armed: false,
            last_valid: now,
            last_trip: None,
            trips: 0,
            episodes: 0,
        }
    }

    /// Changes the timeout (from the next check).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A valid joint state arrived at `now`; returns true if it ended a stale episode.
    pub fn feed(&mut self, now: Instant) -> bool {
        self.armed = true;
        self.last_valid = now;
        self.last_trip.take().is_some()
    }

    /// Checks at `now` (call it when a wait for data times out, and before publishing).
    pub fn check(&mut self, now: Instant) -> WatchdogVerdict {
        if !self.armed || now.saturating_duration_since(self.last_valid) < self.timeout {
            return WatchdogVerdict::Healthy;
        }
        match self.last_trip {
            Some(t) if now.saturating_duration_since(t) < self.timeout => WatchdogVerdict::Stale,
            previous => {
                if previous.is_none() {
                    self.episodes += 1;
                }
                self.last_trip = Some(now);
                self.trips += 1;
                WatchdogVerdict::Trip
            }
        }
    }

    /// Whether the data is stale now (without changing state).
    pub fn is_stale(&self) -> bool {
        self.last_trip.is_some()
    }

    /// How long until the next check could trip, from `now`.
    pub fn next_deadline(&self, now: Instant) -> Duration {
        let since = match self.last_trip {
            Some(t) => now.saturating_duration_since(t),
            None => now.saturating_duration_since(self.last_valid),
        };
        self.timeout
            .saturating_sub(since)
            .max(Duration::from_micros(100))
    }

    /// Safe outputs published so far.
    pub fn trips(&self) -> u64 {
        self.trips
    }

    /// Silences that reached the timeout so far.
    pub fn episodes(&self) -> u64 {
        self.episodes
    }
}
