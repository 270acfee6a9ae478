//! Where a full leaf is cut (spec §2 step 3 and §4 items 2–4): the dimension of largest
//! range (in lengthscale units by default), the value (mean, median or mid-range) and the
//! overlap width range/w_o. No allocation: the median uses a caller's scratch.

use crate::config::{SplitDimension, SplitValue};
use crate::leaf::Leaf;

/// A cut: dimension, value, overlap width, and the mid-range (the fallback value when a
/// side would be empty).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cut {
    /// Dimension j.
    pub dim: usize,
    /// Value s.
    pub value: f64,
    /// Overlap width o.
    pub overlap: f64,
    /// (min + max)/2 in j.
    pub midrange: f64,
}

/// The cut of `leaf`'s points, or `None` when they have no spread in any dimension (such a
/// leaf cannot be split). `inv_scale[j]` multiplies dimension j's range for
/// [`SplitDimension::Scaled`]; `scratch` holds N̄ values.
pub fn choose(
    leaf: &Leaf,
    d: usize,
    (dimension, value_rule, overlap_ratio): (SplitDimension, SplitValue, f64),
    inv_scale: &[f64],
    scratch: &mut [f64],
) -> Option<Cut> {
    let n = leaf.n;
    let mut best: Option<(usize, f64, f64, f64)> = None;
    for (j, &inv) in inv_scale.iter().enumerate().take(d) {
        let (lo, hi) = (0..n).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), i| {
            let v = leaf.input(i)[j];
            (lo.min(v), hi.max(v))
        });
        let range = hi - lo;
        let score = match dimension {
            SplitDimension::Scaled => range * inv,
            SplitDimension::Range => range,
        };
        if range > 0.0 && best.is_none_or(|(_, s, _, _)| score > s) {
            best = Some((j, score, lo, hi));
        }
    }
    let (dim, _, lo, hi) = best?;
    let midrange = 0.5 * (lo + hi);
    let value = match value_rule {
        SplitValue::Midrange => midrange,
        SplitValue::Mean => (0..n).map(|i| leaf.input(i)[dim]).sum::<f64>() / n as f64,
        SplitValue::Median => {
            let v = &mut scratch[..n];
            v.iter_mut()
                .enumerate()
                .for_each(|(i, s)| *s = leaf.input(i)[dim]);
            let (below, upper, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
            let upper = *upper;
            if n % 2 == 1 {
                upper
            } else {
                let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                0.5 * (lower + upper)
            }
        }
    };
    Some(Cut {
        dim,
        value,
        overlap: (hi - lo) / overlap_ratio,
        midrange,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leaf::Point;

    fn leaf_of(points: &[[f64; 2]]) -> Leaf {
        let mut leaf = Leaf::new(points.len(), 2, 1);
        for (i, x) in points.iter().enumerate() {
            leaf.push_raw(Point {
                x,
                y: &[0.0],
                noise: &[0.1],
                stamp: i as u64,
            });
        }
        leaf
    }

    #[test]
    fn picks_the_widest_dimension_in_the_chosen_units() {
        let leaf = leaf_of(&[[0.0, 0.0], [1.0, 3.0], [2.0, 0.5], [7.0, 1.0]]);
        let mut s = [0.0; 4];
        let rule = |dim, value| (dim, value, 10.0);
        let raw = choose(
            &leaf,
            2,
            rule(SplitDimension::Range, SplitValue::Mean),
            &[1.0, 1.0],
            &mut s,
        )
        .unwrap();
        assert_eq!(
            (raw.dim, raw.value, raw.overlap, raw.midrange),
            (0, 2.5, 0.7, 3.5)
        );
        // Dimension 1 has lengthscale 0.1 against 1: 30 lengthscales of range against 7.
        let scaled = choose(
            &leaf,
            2,
            rule(SplitDimension::Scaled, SplitValue::Median),
            &[1.0, 10.0],
            &mut s,
        )
        .unwrap();
        assert_eq!((scaled.dim, scaled.value), (1, 0.75));
        let mid = choose(
            &leaf,
            2,
            rule(SplitDimension::Range, SplitValue::Midrange),
            &[1.0, 1.0],
            &mut s,
        )
        .unwrap();
        assert_eq!(mid.value, 3.5);
        let same = leaf_of(&[[1.0, 2.0], [1.0, 2.0]]);
        assert_eq!(
            choose(
                &same,
                2,
                rule(SplitDimension::Scaled, SplitValue::Mean),
                &[1.0, 1.0],
                &mut s
            ),
            None
        );
    }
}
