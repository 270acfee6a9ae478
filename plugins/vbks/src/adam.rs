//! Adam (Kingma & Ba 2015) for gradient *ascent*, with bias correction.

/// Adam state for a parameter vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Adam {
    /// Step size.
    pub lr: f64,
    /// First-moment decay β₁.
    pub beta1: f64,
    /// Second-moment decay β₂.
    pub beta2: f64,
    /// ε.
    pub eps: f64,
    m: Vec<f64>,
    v: Vec<f64>,
    t: u32,
}

impl Adam {
    /// State for `n` parameters with step size `lr` and the usual β = (0.9, 0.999),
    /// ε = 1e-8.
    pub fn new(n: usize, lr: f64) -> Adam {
        Adam {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            m: vec![0.0; n],
            v: vec![0.0; n],
            t: 0,
        }
    }

    /// One ascent step: `params += lr · m̂/(√v̂ + ε)` for the gradient `grad`.
    pub fn ascend(&mut self, params: &mut [f64], grad: &[f64]) {
        self.t = self.t.saturating_add(1);
        let b1t = 1.0 - self.beta1.powi(self.t as i32);
        let b2t = 1.0 - self.beta2.powi(self.t as i32);
        for (((p, &g), m), v) in params
            .iter_mut()
            .zip(grad)
            .zip(self.m.iter_mut())
            .zip(self.v.iter_mut())
        {
            if !g.is_finite() {
                continue;
            }
            *m = self.beta1 * *m + (1.0 - self.beta1) * g;
            *v = self.beta2 * *v + (1.0 - self.beta2) * g * g;
            *p += self.lr * (*m / b1t) / ((*v / b2t).sqrt() + self.eps);
        }
    }

    /// Steps taken.
    pub fn steps(&self) -> u32 {
        self.t
    }
}
