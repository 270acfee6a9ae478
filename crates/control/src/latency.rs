//! A fixed-bucket latency histogram (1 µs buckets up to 50 ms, then one overflow bucket that
//! keeps the maximum): recording allocates nothing, quantiles are exact to the microsecond.

/// Latency histogram in microseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    buckets: Vec<u64>,
    overflow: u64,
    count: u64,
    max_micros: f64,
    sum_micros: f64,
}

const BUCKETS: usize = 50_000;

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram (allocates its buckets once).
    pub fn new() -> Self {
        Self {
            buckets: vec![0; BUCKETS],
            overflow: 0,
            count: 0,
            max_micros: 0.0,
            sum_micros: 0.0,
        }
    }

    /// Records one value (non-finite or negative values are ignored).
    pub fn record(&mut self, micros: f64) {
        if !(micros.is_finite() && micros >= 0.0) {
            return;
        }
        let b = micros as usize;
        match self.buckets.get_mut(b) {
            Some(n) => *n += 1,
            None => self.overflow += 1,
        }
        self.count += 1;
        self.sum_micros += micros;
        self.max_micros = self.max_micros.max(micros);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean, µs (NaN when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum_micros / self.count as f64
        }
    }

    /// Largest value, µs (NaN when empty).
    pub fn max(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.max_micros
        }
    }

    /// The `q`-quantile (0 ≤ q ≤ 1) as the upper edge of its bucket, µs (NaN when empty; the
    /// maximum when it falls in the overflow bucket).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return ((b + 1) as f64).min(self.max_micros.max(b as f64));
            }
        }
        self.max_micros
    }
}
