//! A fixed-capacity ring buffer of learning samples (x, y, t, noise variance, and the
//! innovation y − μ the model in use saw when it learned the sample; NaN without one).
//!
//! Feeds the hyperparameter fit (the first admitted samples) and warms a new model on what
//! the old one saw. Storage is allocated once; pushing never allocates and overwrites the
//! oldest sample when full.

/// Ring buffer of samples with input dimension `d` and output dimension `p`.
#[derive(Debug, Clone)]
pub struct ReplayBuffer {
    d: usize,
    p: usize,
    capacity: usize,
    /// Index of the oldest sample.
    start: usize,
    len: usize,
    x: Vec<f64>,
    y: Vec<f64>,
    noise_var: Vec<f64>,
    innovation: Vec<f64>,
    t_secs: Vec<f64>,
}

/// One stored sample, borrowed from the buffer.
#[derive(Debug, Clone, Copy)]
pub struct SampleRef<'a> {
    /// Input, length d.
    pub x: &'a [f64],
    /// Targets, length p.
    pub y: &'a [f64],
    /// Noise variance per output, length p.
    pub noise_var: &'a [f64],
    /// y − μ of the model that learned it, per output (NaN when there was no prediction).
    pub innovation: &'a [f64],
    /// Time stamp, s.
    pub t_secs: f64,
}

impl ReplayBuffer {
    /// An empty buffer holding up to `capacity` samples.
    pub fn new(d: usize, p: usize, capacity: usize) -> Self {
        Self {
            d,
            p,
            capacity,
            start: 0,
            len: 0,
            x: vec![0.0; capacity * d],
            y: vec![0.0; capacity * p],
            noise_var: vec![0.0; capacity * p],
            innovation: vec![f64::NAN; capacity * p],
            t_secs: vec![0.0; capacity],
        }
    }

    /// Samples stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Maximum number of samples.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Appends a sample, overwriting the oldest when full. Real-time: no allocation.
    pub fn push(&mut self, x: &[f64], y: &[f64], noise_var: &[f64], t_secs: f64) {
        if self.capacity == 0 {
            return;
        }
        let slot = if self.len < self.capacity {
            self.len += 1;
            (self.start + self.len - 1) % self.capacity
        } else {
            let slot = self.start;
            self.start = (self.start + 1) % self.capacity;
            slot
        };
        self.x[slot * self.d..(slot + 1) * self.d].copy_from_slice(x);
        self.y[slot * self.p..(slot + 1) * self.p].copy_from_slice(y);
        self.noise_var[slot * self.p..(slot + 1) * self.p].copy_from_slice(noise_var);
        self.innovation[slot * self.p..(slot + 1) * self.p].fill(f64::NAN);
        self.t_secs[slot] = t_secs;
    }

    /// Records the innovation of the newest sample. Real-time.
    pub fn set_last_innovation(&mut self, innovation: &[f64]) {
        if self.len == 0 {
            return;
        }
        let slot = (self.start + self.len - 1) % self.capacity;
        self.innovation[slot * self.p..(slot + 1) * self.p].copy_from_slice(innovation);
    }

    /// The i-th oldest sample (0 = oldest).
    pub fn get(&self, i: usize) -> Option<SampleRef<'_>> {
        if i >= self.len {
            return None;
        }
        let slot = (self.start + i) % self.capacity;
        Some(SampleRef {
            x: &self.x[slot * self.d..(slot + 1) * self.d],
            y: &self.y[slot * self.p..(slot + 1) * self.p],
            noise_var: &self.noise_var[slot * self.p..(slot + 1) * self.p],
            innovation: &self.innovation[slot * self.p..(slot + 1) * self.p],
            t_secs: self.t_secs[slot],
        })
    }

    /// Samples from oldest to newest.
    pub fn iter(&self) -> impl Iterator<Item = SampleRef<'_>> {
        (0..self.len).filter_map(|i| self.get(i))
    }

    /// Forgets every sample (keeps the storage).
    pub fn clear(&mut self) {
        self.start = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_samples_in_order() {
        let mut buf = ReplayBuffer::new(1, 1, 3);
        for i in 0..5 {
            let v = f64::from(i);
            buf.push(&[v], &[10.0 * v], &[0.1], v);
        }
        let xs: Vec<f64> = buf.iter().map(|s| s.x[0]).collect();
        assert_eq!(xs, vec![2.0, 3.0, 4.0]);
        assert_eq!(buf.get(2).map(|s| s.y[0]), Some(40.0));
        assert!(buf.get(3).is_none());
        buf.clear();
        assert!(buf.is_empty());
    }
}
