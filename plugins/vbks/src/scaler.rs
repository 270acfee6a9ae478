//! Standardisation of inputs and targets, fitted on the offline samples and frozen
//! (spec §2.5: zero mean, unit variance; §7.2: scalers frozen after the offline phase).
//!
//! A coordinate with (near) zero spread keeps scale 1, so a constant input cannot blow up.

/// Affine maps x ↦ (x − mean)/scale per input and y ↦ (y − mean)/scale per output.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaler {
    /// Input means (d).
    pub x_mean: Vec<f64>,
    /// Input scales (d).
    pub x_scale: Vec<f64>,
    /// Target means (p).
    pub y_mean: Vec<f64>,
    /// Target scales (p).
    pub y_scale: Vec<f64>,
}

/// Spread below which a coordinate keeps scale 1.
const MIN_SCALE: f64 = 1e-12;

fn mean_and_scale(values: impl Iterator<Item = f64> + Clone, center: bool) -> (f64, f64) {
    let (mut n, mut s) = (0.0, 0.0);
    for v in values.clone() {
        n += 1.0;
        s += v;
    }
    if n == 0.0 {
        return (0.0, 1.0);
    }
    let mean = if center { s / n } else { 0.0 };
    let var = values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let sd = var.sqrt();
    (mean, if sd > MIN_SCALE { sd } else { 1.0 })
}

impl Scaler {
    /// The identity map for d inputs and p outputs.
    pub fn identity(d: usize, p: usize) -> Scaler {
        Scaler {
            x_mean: vec![0.0; d],
            x_scale: vec![1.0; d],
            y_mean: vec![0.0; p],
            y_scale: vec![1.0; p],
        }
    }

    /// Fit on n samples: `x` row-major n×d, `y` row-major n×p. With `standardize_x`
    /// false the inputs are left as they are; with `center_y` false the targets are only
    /// scaled (by their root mean square), so zero stays zero.
    pub fn fit(
        x: &[f64],
        y: &[f64],
        d: usize,
        p: usize,
        standardize_x: bool,
        center_y: bool,
    ) -> Scaler {
        let mut s = Scaler::identity(d, p);
        if standardize_x {
            for j in 0..d {
                let (m, sc) = mean_and_scale(x.iter().skip(j).step_by(d).copied(), true);
                s.x_mean[j] = m;
                s.x_scale[j] = sc;
            }
        }
        for o in 0..p {
            let (m, sc) = mean_and_scale(y.iter().skip(o).step_by(p).copied(), center_y);
            s.y_mean[o] = m;
            s.y_scale[o] = sc;
        }
        s
    }

    /// Standardised input into `out` (len d). No allocation.
    #[inline]
    pub fn x_into(&self, x: &[f64], out: &mut [f64]) {
        for ((o, &v), (&m, &s)) in out
            .iter_mut()
            .zip(x)
            .zip(self.x_mean.iter().zip(&self.x_scale))
        {
            *o = (v - m) / s;
        }
    }

    /// Standardised targets into `out` (len p). No allocation.
    #[inline]
    pub fn y_into(&self, y: &[f64], out: &mut [f64]) {
        for ((o, &v), (&m, &s)) in out
            .iter_mut()
            .zip(y)
            .zip(self.y_mean.iter().zip(&self.y_scale))
        {
            *o = (v - m) / s;
        }
    }

    /// Map a standardised mean and variance of output `o` back to original units.
    #[inline]
    pub fn y_back(&self, o: usize, mean: f64, var: f64) -> (f64, f64) {
        let s = self.y_scale[o];
        (self.y_mean[o] + s * mean, s * s * var)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_centred_unless_asked_not_to() {
        // Inputs (d = 1) 1, 2, 3, 4; targets (p = 1) 1, 1, 1, 5.
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [1.0, 1.0, 1.0, 5.0];
        let centred = Scaler::fit(&x, &y, 1, 1, true, true);
        assert_eq!(centred.y_mean, [2.0]);
        assert!((centred.y_scale[0] - 3.0_f64.sqrt()).abs() < 1e-15);
        assert_eq!(centred.x_mean, [2.5]);

        let scaled = Scaler::fit(&x, &y, 1, 1, true, false);
        assert_eq!(scaled.y_mean, [0.0]);
        // Root mean square: sqrt((1 + 1 + 1 + 25) / 4) = sqrt(7).
        assert!((scaled.y_scale[0] - 7.0_f64.sqrt()).abs() < 1e-15);
        // Zero stays zero both ways; the inputs are unaffected.
        let mut out = [f64::NAN];
        scaled.y_into(&[0.0], &mut out);
        assert_eq!(out, [0.0]);
        let (mean, var) = scaled.y_back(0, 0.0, 1.0);
        assert_eq!(mean, 0.0);
        assert!((var - 7.0).abs() < 1e-12);
        assert_eq!(scaled.x_mean, centred.x_mean);
    }
}
