//! The paper's synthetic datasets A and B (spec §5.2, Appendix E.1), generated here with
//! the true kernels written out directly from their formulas (independent of the crate's
//! kernel code): D₀ = 256 inputs uniform on [−10, 10] with outputs drawn from the GP prior
//! (noise variance 1e-4 × the mean prior variance, spec gap #16), then N inputs uniform on
//! [−10, 10] whose targets are the GP posterior mean given D₀ (eq. 1).
#![allow(dead_code)]

use std::f64::consts::PI;

use gpn_test_support::XorshiftStar;

/// Which dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// (PER + RQ) × LIN.
    A,
    /// PER × LIN × RQ.
    B,
    /// LIN + PER with observation noise (not from the paper): a periodic signal on a
    /// linear trend, targets = a prior draw plus N(0, 0.05²) noise.
    C,
}

impl Which {
    /// The true kernel as the crate prints it.
    pub fn true_kernel(self) -> &'static str {
        match self {
            Which::A => "(PER+RQ)*LIN",
            Which::B => "LIN*PER*RQ",
            Which::C => "LIN+PER",
        }
    }
}

fn per(r: f64, ell: f64, period: f64) -> f64 {
    (-2.0 * (PI * r / period).sin().powi(2) / (ell * ell)).exp()
}

fn rq(r: f64, ell: f64, alpha: f64) -> f64 {
    (1.0 + r * r / (2.0 * alpha * ell * ell)).powf(-alpha)
}

/// The true covariance of dataset `which`.
pub fn k_true(which: Which, a: f64, b: f64) -> f64 {
    let r = a - b;
    match which {
        Which::A => (0.01 * per(r, 2.0, 2.0 * PI) + 0.01 * rq(r, 3.0, 1.0)) * a * b / 25.0,
        Which::B => 0.01 * per(r, 1.0, 2.0 * PI) * (a * b / 9.0) * 0.01 * rq(r, 8.0, 1.0),
        Which::C => a * b / 100.0 + per(r, 1.0, 4.0),
    }
}

fn cholesky(a: &mut [f64], n: usize) {
    for i in 0..n {
        for j in 0..=i {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            if i == j {
                a[i * n + i] = s.max(1e-300).sqrt();
            } else {
                a[i * n + j] = s / a[j * n + j];
            }
        }
        for j in i + 1..n {
            a[i * n + j] = 0.0;
        }
    }
}

/// (x, y) of dataset `which` with `n` training points, from `seed`.
pub fn generate(which: Which, n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let noise_sd = if which == Which::C { 0.05 } else { 0.0 };
    generate_noisy(which, n, seed, noise_sd)
}

/// As [`generate`], with N(0, `noise_sd`²) added to every target.
pub fn generate_noisy(which: Which, n: usize, seed: u64, noise_sd: f64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = XorshiftStar(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let n0 = 256;
    let x0: Vec<f64> = (0..n0).map(|_| -10.0 + 20.0 * rng.uniform()).collect();
    let mut k0 = vec![0.0; n0 * n0];
    let mut mean_var = 0.0;
    for i in 0..n0 {
        for j in 0..n0 {
            k0[i * n0 + j] = k_true(which, x0[i], x0[j]);
        }
        mean_var += k0[i * n0 + i] / n0 as f64;
    }
    let noise = 1e-4 * mean_var;
    for i in 0..n0 {
        k0[i * n0 + i] += noise;
    }
    let mut l = k0.clone();
    cholesky(&mut l, n0);
    let eps: Vec<f64> = (0..n0).map(|_| rng.normal()).collect();
    let f0: Vec<f64> = (0..n0)
        .map(|i| (0..=i).map(|k| l[i * n0 + k] * eps[k]).sum())
        .collect();
    // alpha = (K0 + σ²I)⁻¹ f0 by two triangular solves.
    let mut alpha = f0.clone();
    for i in 0..n0 {
        let s: f64 = (0..i).map(|k| l[i * n0 + k] * alpha[k]).sum();
        alpha[i] = (alpha[i] - s) / l[i * n0 + i];
    }
    for i in (0..n0).rev() {
        let s: f64 = (i + 1..n0).map(|k| l[k * n0 + i] * alpha[k]).sum();
        alpha[i] = (alpha[i] - s) / l[i * n0 + i];
    }
    let x: Vec<f64> = (0..n).map(|_| -10.0 + 20.0 * rng.uniform()).collect();
    let y: Vec<f64> = x
        .iter()
        .map(|&xi| {
            (0..n0)
                .map(|k| k_true(which, xi, x0[k]) * alpha[k])
                .sum::<f64>()
                + noise_sd * rng.normal()
        })
        .collect();
    (x, y)
}
