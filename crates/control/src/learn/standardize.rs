//! Output standardisation: the model learns (y − m)/s per output, with m and s frozen from
//! the samples the hyperparameters were fitted on, and answers are mapped back.

/// Per-output affine map between raw targets (N·m) and the model's standardised targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardizer {
    mean: Vec<f64>,
    std: Vec<f64>,
}

impl Standardizer {
    /// The identity map for `p` outputs (used when hyperparameters are given for raw units).
    pub fn identity(p: usize) -> Self {
        Self {
            mean: vec![0.0; p],
            std: vec![1.0; p],
        }
    }

    /// The map with these means and standard deviations (a saved model's); None unless both
    /// have the same length and every std is finite and positive.
    pub fn from_parts(mean: Vec<f64>, std: Vec<f64>) -> Option<Self> {
        let ok = mean.len() == std.len()
            && mean.iter().all(|m| m.is_finite())
            && std.iter().all(|s| s.is_finite() && *s > 0.0);
        ok.then_some(Self { mean, std })
    }

    /// Mean and standard deviation of each output of `y` (row-major n×p); a zero or
    /// non-finite spread is replaced by 1 so the map stays invertible.
    pub fn fit(y: &[f64], p: usize) -> Self {
        let n = y.len().checked_div(p).unwrap_or(0);
        let mut mean = vec![0.0; p];
        let mut std = vec![1.0; p];
        if n == 0 {
            return Self { mean, std };
        }
        for (k, m) in mean.iter_mut().enumerate() {
            *m = (0..n).map(|i| y[i * p + k]).sum::<f64>() / n as f64;
        }
        for (k, s) in std.iter_mut().enumerate() {
            let var = (0..n)
                .map(|i| (y[i * p + k] - mean[k]).powi(2))
                .sum::<f64>()
                / n as f64;
            let sd = var.sqrt();
            *s = if sd.is_finite() && sd > 1e-12 {
                sd
            } else {
                1.0
            };
        }
        Self { mean, std }
    }

    /// Raw → standardised targets, in place. Real-time.
    pub fn forward_mut(&self, y: &mut [f64]) {
        for (k, v) in y.iter_mut().enumerate() {
            *v = (*v - self.mean[k]) / self.std[k];
        }
    }

    /// Raw noise variances → standardised, in place. Real-time.
    pub fn forward_var_mut(&self, var: &mut [f64]) {
        for (k, v) in var.iter_mut().enumerate() {
            *v /= self.std[k] * self.std[k];
        }
    }

    /// Standardised mean and variance → raw (N·m, (N·m)²), in place. Real-time.
    pub fn inverse_mut(&self, mean: &mut [f64], var: &mut [f64]) {
        for k in 0..mean.len() {
            mean[k] = self.mean[k] + self.std[k] * mean[k];
            var[k] *= self.std[k] * self.std[k];
        }
    }

    /// Per-output means.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Per-output standard deviations.
    pub fn std(&self) -> &[f64] {
        &self.std
    }
}
