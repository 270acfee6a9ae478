//! Time-spaced admission of stream samples (RCaGP spec §6.2, §6.7; the LoG-GP spec §4
//! item 8): at 1 kHz consecutive samples are nearly the same point, so a window or a leaf
//! admits one only `interval` seconds after the last admitted one.

/// Whether a sample `since` seconds after the last admitted one is admitted at least
/// `interval` seconds apart. Stamps that do not advance (`since ≤ 0`: a caller without a
/// clock, a clock reset) say nothing about spacing and are admitted; a relative slack of
/// 10⁻⁹ admits stamps that are multiples of a tick period in floating point.
pub fn spaced(since: f64, interval: f64) -> bool {
    since <= 0.0 || since >= interval * (1.0 - 1e-9)
}

#[cfg(test)]
mod tests {
    use super::spaced;

    #[test]
    fn admits_spaced_and_non_advancing_stamps() {
        assert!(spaced(0.005, 0.005) && spaced(5.0 * 0.001 - 1e-15, 0.005));
        assert!(!spaced(0.004, 0.005) && !spaced(f64::NAN, 0.005));
        assert!(spaced(0.0, 0.005) && spaced(-3.0, 0.005) && spaced(1e-9, 0.0));
    }
}
