//! Kernel values against their formulas and gradients against central differences.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use gpn_gp_core::kernel::{ArdKernel, Kernel, KernelKind};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const KINDS: [KernelKind; 3] = [
    KernelKind::SquaredExponential,
    KernelKind::Matern32,
    KernelKind::Matern52,
];

fn random_kernel(kind: KernelKind, d: usize, rng: &mut ChaCha8Rng) -> ArdKernel {
    let ells: Vec<f64> = (0..d).map(|_| rng.random_range(0.3..3.0)).collect();
    ArdKernel::new(kind, rng.random_range(0.5..2.0), &ells).unwrap()
}

#[test]
fn values_match_formulas() {
    let k = ArdKernel::se(1.5, &[2.0, 0.5]).unwrap();
    let a = [0.3, -0.2];
    let b = [1.1, 0.4];
    let r2: f64 = ((0.3f64 - 1.1) / 2.0).powi(2) + ((-0.2f64 - 0.4) / 0.5).powi(2);
    let r = r2.sqrt();
    assert!((k.value(&a, &b) - 2.25 * (-0.5 * r2).exp()).abs() < 1e-15);
    let k = ArdKernel::matern32(1.5, &[2.0, 0.5]).unwrap();
    let s3 = 3f64.sqrt() * r;
    assert!((k.value(&a, &b) - 2.25 * (1.0 + s3) * (-s3).exp()).abs() < 1e-15);
    let k = ArdKernel::matern52(1.5, &[2.0, 0.5]).unwrap();
    let s5 = 5f64.sqrt() * r;
    assert!((k.value(&a, &b) - 2.25 * (1.0 + s5 + 5.0 * r2 / 3.0) * (-s5).exp()).abs() < 1e-15);
    for kind in KINDS {
        let k = ArdKernel::new(kind, 1.5, &[2.0, 0.5]).unwrap();
        assert_eq!(k.value(&a, &a), k.diag());
        assert_eq!(k.diag(), 2.25);
        assert_eq!(k.value(&a, &b), k.value(&b, &a));
    }
}

#[test]
fn rejects_bad_hyperparameters() {
    assert!(ArdKernel::se(0.0, &[1.0]).is_err());
    assert!(ArdKernel::se(1.0, &[1.0, f64::NAN]).is_err());
    assert!(ArdKernel::se(1.0, &[]).is_err());
    assert!(ArdKernel::matern52(1.0, &[-1.0]).is_err());
}

#[test]
fn log_params_round_trip() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for kind in KINDS {
        let mut k = random_kernel(kind, 4, &mut rng);
        let mut p = vec![0.0; k.n_params()];
        k.log_params(&mut p);
        assert!((p[0] - k.sigma_f().ln()).abs() < 1e-14);
        let mut q = p.clone();
        q[2] += 0.3;
        k.set_log_params(&q);
        let mut r = vec![0.0; k.n_params()];
        k.log_params(&mut r);
        for (x, y) in q.iter().zip(&r) {
            assert!((x - y).abs() < 1e-13);
        }
    }
}

#[test]
fn gradients_match_central_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for kind in KINDS {
        for trial in 0..20 {
            let d = 1 + trial % 5;
            let k = random_kernel(kind, d, &mut rng);
            let a: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
            let b: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
            let mut g = vec![0.0; k.n_params()];
            k.gradient(&a, &b, &mut g);
            let mut p = vec![0.0; k.n_params()];
            k.log_params(&mut p);
            let h = 1e-6;
            for j in 0..k.n_params() {
                let mut kp = k.clone();
                let mut km = k.clone();
                let mut pp = p.clone();
                pp[j] += h;
                kp.set_log_params(&pp);
                let mut pm = p.clone();
                pm[j] -= h;
                km.set_log_params(&pm);
                let fd = (kp.value(&a, &b) - km.value(&a, &b)) / (2.0 * h);
                assert!(
                    (fd - g[j]).abs() < 1e-7 * (1.0 + fd.abs()),
                    "{kind:?} param {j}: analytic {} vs fd {fd}",
                    g[j]
                );
            }
        }
    }
}

#[test]
fn gradient_at_zero_distance_is_finite() {
    for kind in KINDS {
        let k = ArdKernel::new(kind, 1.3, &[0.7, 1.9]).unwrap();
        let mut g = [0.0; 3];
        k.gradient(&[0.1, 0.2], &[0.1, 0.2], &mut g);
        assert!((g[0] - 2.0 * 1.69).abs() < 1e-12);
        assert_eq!(g[1], 0.0);
        assert_eq!(g[2], 0.0);
    }
}
