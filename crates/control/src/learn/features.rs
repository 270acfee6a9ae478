//! The model's input: the sample [q, q̇, q̈] and, optionally, one friction feature per
//! joint, tanh(q̇_j / v_f).
//!
//! Coulomb friction steps by 2·F_c as a joint's velocity changes sign, within a few mrad/s.
//! A smooth kernel on q̇ cannot follow a step that narrow: with a lengthscale that fits the
//! rest of the residual it rounds the step off over tens of mrad/s, and its mean is wrong by
//! up to F_c at every reversal — bursts the change detector and the coverage monitor read
//! as a changed robot (`docs/results/any-robot.md`, fourth pass). With tanh(q̇_j / v_f) among
//! the inputs, the step is a smooth function of one more input and the kernel's lengthscale
//! on it decides how sharp it is. The features follow the physical inputs, so every slice
//! `[..nv]`, `[nv..2nv]`, `[2nv..3nv]` of a sample keeps its meaning.

/// Where the blocks of a model input lie, and how the friction features are formed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputLayout {
    nv: usize,
    /// v_f in rad/s (or m/s for a prismatic joint); 0: no friction features.
    friction_velocity: f64,
}

impl InputLayout {
    /// The layout for `nv` joints; `friction_velocity` 0 leaves the friction features out.
    pub fn new(nv: usize, friction_velocity: f64) -> Self {
        Self {
            nv,
            friction_velocity,
        }
    }

    /// Joints.
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// Blocks of nv inputs: 3 ([q, q̇, q̈]) or 4 (with the friction features).
    pub fn blocks(&self) -> usize {
        if self.friction_velocity > 0.0 { 4 } else { 3 }
    }

    /// The model's input dimension.
    pub fn dim(&self) -> usize {
        self.blocks() * self.nv
    }

    /// v_f (0: no friction features).
    pub fn friction_velocity(&self) -> f64 {
        self.friction_velocity
    }

    /// Writes the friction features of `x` (its q̇ block) into their block. `x` has
    /// [`InputLayout::dim`] entries. Real-time.
    pub fn fill_features(&self, x: &mut [f64]) {
        if self.blocks() < 4 {
            return;
        }
        let nv = self.nv;
        let (head, features) = x.split_at_mut(3 * nv);
        for (f, &v) in features.iter_mut().zip(&head[nv..2 * nv]) {
            *f = (v / self.friction_velocity).tanh();
        }
    }

    /// Writes the model input for `sample` = [q, q̇, q̈] (3·nv entries) into `x`.
    /// Real-time.
    pub fn fill(&self, sample: &[f64], x: &mut [f64]) {
        x[..3 * self.nv].copy_from_slice(sample);
        self.fill_features(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_friction_velocity_the_input_is_the_sample() {
        let layout = InputLayout::new(2, 0.0);
        assert_eq!((layout.blocks(), layout.dim()), (3, 6));
        let mut x = [0.0; 6];
        layout.fill(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut x);
        assert_eq!(x, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn friction_features_follow_the_sample_and_saturate_at_the_sign_of_the_velocity() {
        let layout = InputLayout::new(2, 0.01);
        assert_eq!((layout.blocks(), layout.dim()), (4, 8));
        let mut x = [f64::NAN; 8];
        layout.fill(&[1.0, 2.0, 0.005, -0.5, 5.0, 6.0], &mut x);
        assert_eq!(x[..6], [1.0, 2.0, 0.005, -0.5, 5.0, 6.0]);
        assert!((x[6] - 0.5f64.tanh()).abs() < 1e-15);
        assert!(
            (x[7] + 1.0).abs() < 1e-15,
            "−0.5 rad/s is far beyond v_f: {}",
            x[7]
        );
    }
}
