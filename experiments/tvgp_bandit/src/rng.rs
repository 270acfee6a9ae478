//! A small seeded pseudo-random generator, so the harness is reproducible without `rand`
//! in the library: SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014; constants from that paper), uniforms from the top 53 bits,
//! normals by Box–Muller. Statistical quality is ample for a benchmark; not for
//! cryptography.

/// SplitMix64 state plus a cached second Box–Muller normal.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitMix64 {
    state: u64,
    spare_normal: Option<f64>,
}

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            state: seed,
            spare_normal: None,
        }
    }

    /// An independent stream for purpose `tag` (e.g. observation noise vs. expert noise),
    /// so that methods drawing different numbers of values in one stream do not shift
    /// another stream: common random numbers across methods.
    pub fn stream(seed: u64, tag: u64) -> Self {
        let mut mixer = Self::new(seed ^ tag.wrapping_mul(0xD1B5_4A32_D192_ED03));
        Self::new(mixer.next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform on [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on [lo, hi).
    pub fn uniform_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in 0..n (n > 0; returns 0 for n = 0), by the multiply-high map.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Standard normal (Box–Muller, both values used).
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        // 1 − u ∈ (0, 1] keeps the logarithm finite.
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        let r = (-2.0 * u1.ln()).sqrt();
        let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
        self.spare_normal = Some(r * s);
        r * c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_are_right_and_streams_differ() {
        let mut g = SplitMix64::new(1);
        let n = 200_000;
        let (mut s, mut s2, mut u) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let z = g.normal();
            s += z;
            s2 += z * z;
            u += g.uniform();
        }
        let n = n as f64;
        assert!((s / n).abs() < 0.01);
        assert!((s2 / n - 1.0).abs() < 0.01);
        assert!((u / n - 0.5).abs() < 0.005);
        let a = SplitMix64::stream(5, 1).next_u64();
        let b = SplitMix64::stream(5, 2).next_u64();
        assert_ne!(a, b);
        assert_eq!(a, SplitMix64::stream(5, 1).next_u64());
        let mut counts = [0usize; 3];
        for _ in 0..30_000 {
            counts[g.below(3)] += 1;
        }
        assert!(counts.iter().all(|&c| (c as f64 - 10_000.0).abs() < 400.0));
    }
}
