//! Small seeded pseudo-random generators, ours so that a seed gives the same numbers on every
//! platform and crate version, without `rand` in the libraries. Statistical quality is ample
//! for sampling and benchmarks; not for cryptography.
//!
//! Two bit sources share one set of draws ([`Generator`]): uniforms from the top 53 bits,
//! integers by the multiply-high map, normals by Box–Muller (both values used).
//!
//! * [`SplitMix64`]: SplitMix64 itself (Steele, Lea and Flood, "Fast splittable
//!   pseudorandom number generators", OOPSLA 2014; constants from that paper), with
//!   independent tagged streams.
//! * [`Xoshiro256StarStar`]: xoshiro256** (Blackman and Vigna 2018), its state seeded by
//!   four SplitMix64 outputs, with its state exposed for persistence.

/// A source of uniformly distributed 64-bit words. (The implementations are `#[inline]`:
/// they are called per draw from other crates, as when each crate had its own copy.)
pub trait BitSource {
    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64;
}

/// SplitMix64's state: a Weyl sequence, output through a 64-bit mixer.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitMix64Bits(u64);

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl BitSource for SplitMix64Bits {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// xoshiro256**'s 256-bit state.
#[derive(Debug, Clone, PartialEq)]
pub struct Xoshiro256Bits([u64; 4]);

impl BitSource for Xoshiro256Bits {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

/// Uniform, integer and normal draws from a bit source, with the second Box–Muller normal
/// cached.
#[derive(Debug, Clone, PartialEq)]
pub struct Generator<B> {
    bits: B,
    spare_normal: Option<f64>,
}

/// SplitMix64 with the draws of [`Generator`].
pub type SplitMix64 = Generator<SplitMix64Bits>;

/// xoshiro256** (seeded by SplitMix64) with the draws of [`Generator`].
pub type Xoshiro256StarStar = Generator<Xoshiro256Bits>;

impl<B: BitSource> Generator<B> {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.bits.next_u64()
    }

    /// Uniform on [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on [lo, hi).
    pub fn uniform_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in 0..n (returns 0 for n = 0), by Lemire's multiply-high map
    /// (bias < 2⁻⁶⁴·n).
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

    /// Fills `out` with standard normal draws.
    pub fn fill_normal(&mut self, out: &mut [f64]) {
        for v in out {
            *v = self.normal();
        }
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            bits: SplitMix64Bits(seed),
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
}

impl Xoshiro256StarStar {
    /// A generator from a 64-bit seed: the state is the seed's first four SplitMix64 words.
    pub fn new(seed: u64) -> Self {
        let mut seeder = SplitMix64Bits(seed);
        let state = [(); 4].map(|()| seeder.next_u64());
        Self::from_state(state, None)
    }

    /// The state (for persistence).
    pub fn state(&self) -> ([u64; 4], Option<f64>) {
        (self.bits.0, self.spare_normal)
    }

    /// A generator continuing from a saved state.
    pub fn from_state(s: [u64; 4], spare_normal: Option<f64>) -> Self {
        Self {
            bits: Xoshiro256Bits(s),
            spare_normal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean and second moment of the normals, mean of the uniforms, spread of `below`.
    fn check_moments<B: BitSource>(g: &mut Generator<B>) {
        let n = 200_000;
        let (mut s, mut s2, mut u) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let z = g.normal();
            s += z;
            s2 += z * z;
            u += g.uniform();
        }
        let n = n as f64;
        assert!((s / n).abs() < 0.01, "{}", s / n);
        assert!((s2 / n - 1.0).abs() < 0.01, "{}", s2 / n);
        assert!((u / n - 0.5).abs() < 0.005, "{}", u / n);
        let mut counts = [0usize; 3];
        for _ in 0..30_000 {
            counts[g.below(3)] += 1;
        }
        assert!(counts.iter().all(|&c| (c as f64 - 10_000.0).abs() < 400.0));
    }

    #[test]
    fn moments_are_right_for_both_sources() {
        check_moments(&mut SplitMix64::new(1));
        check_moments(&mut Xoshiro256StarStar::new(7));
    }

    #[test]
    fn streams_differ_and_seeds_repeat() {
        let a = SplitMix64::stream(5, 1).next_u64();
        let b = SplitMix64::stream(5, 2).next_u64();
        assert_ne!(a, b);
        assert_eq!(a, SplitMix64::stream(5, 1).next_u64());
        let (mut x, mut y) = (Xoshiro256StarStar::new(3), Xoshiro256StarStar::new(3));
        assert_eq!(x.next_u64(), y.next_u64());
        assert!((0..1000).all(|_| x.below(5) < 5));
    }

    #[test]
    fn a_saved_state_continues_the_sequence() {
        let mut g = Xoshiro256StarStar::new(11);
        g.normal(); // leaves a spare normal
        let (s, spare) = g.state();
        let mut h = Xoshiro256StarStar::from_state(s, spare);
        assert_eq!(g, h);
        assert_eq!(g.normal().to_bits(), h.normal().to_bits());
        assert_eq!(g.next_u64(), h.next_u64());
    }
}
