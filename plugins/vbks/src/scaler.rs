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
    /// false the inputs are left as they are.
    pub fn fit(x: &[f64], y: &[f64], d: usize, p: usize, standardize_x: bool) -> Scaler {
        let mut s = Scaler::identity(d, p);
        if standardize_x {
            for j in 0..d {
                let (m, sc) = mean_and_scale(x.iter().skip(j).step_by(d).copied(), true);
                s.x_mean[j] = m;
                s.x_scale[j] = sc;
            }
        }
        for o in 0..p {
            let (m, sc) = mean_and_scale(y.iter().skip(o).step_by(p).copied(), true);
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
