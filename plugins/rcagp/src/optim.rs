//! Adam, the softplus transform of positive parameters and global-norm clipping (spec A5).

/// softplus(x) = ln(1 + eˣ), computed without overflow.
#[inline]
pub fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x
    } else if x < -30.0 {
        x.exp()
    } else {
        x.exp().ln_1p()
    }
}

/// The inverse of [`softplus`] for y > 0 (y ≤ 0 is clamped to 1e−300).
#[inline]
pub fn softplus_inv(y: f64) -> f64 {
    let y = y.max(1e-300);
    if y > 30.0 { y } else { y.exp_m1().ln() }
}

/// d softplus(x)/dx = sigmoid(x).
#[inline]
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// Scales `g` so that its Euclidean norm is at most `max_norm`; returns the norm before.
pub fn clip_global_norm(g: &mut [f64], max_norm: f64) -> f64 {
    let norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > max_norm && norm.is_finite() {
        let k = max_norm / norm;
        g.iter_mut().for_each(|v| *v *= k);
    }
    norm
}

/// Adam (Kingma & Ba) with PyTorch's defaults β₁ = 0.9, β₂ = 0.999, ε = 1e−8, minimising.
#[derive(Debug, Clone, PartialEq)]
pub struct Adam {
    /// Learning rate.
    pub lr: f64,
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl Adam {
    /// An optimiser for `n` parameters.
    pub fn new(n: usize, lr: f64) -> Self {
        Self {
            lr,
            m: vec![0.0; n],
            v: vec![0.0; n],
            t: 0,
        }
    }

    /// One step: `params` ← `params` − lr · m̂/(√v̂ + ε) for the gradient `grad` of the loss.
    pub fn step(&mut self, params: &mut [f64], grad: &[f64]) {
        const B1: f64 = 0.9;
        const B2: f64 = 0.999;
        const EPS: f64 = 1e-8;
        self.t = self.t.saturating_add(1);
        let c1 = 1.0 - B1.powi(self.t);
        let c2 = 1.0 - B2.powi(self.t);
        for (((p, &g), m), v) in params
            .iter_mut()
            .zip(grad)
            .zip(&mut self.m)
            .zip(&mut self.v)
        {
            *m = B1 * *m + (1.0 - B1) * g;
            *v = B2 * *v + (1.0 - B2) * g * g;
            let mh = *m / c1;
            let vh = *v / c2;
            *p -= self.lr * mh / (vh.sqrt() + EPS);
        }
    }
}
