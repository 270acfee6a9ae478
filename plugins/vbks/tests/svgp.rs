//! The local bound's (uncollapsed SVGP, whitened) ψ-gradient against central differences,
//! for kernels of every kind and nesting (its values are checked in `bound.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpn_vbks::expr::Expr;
use gpn_vbks::kernel::KernelSpec;
use gpn_vbks::local::{Batch, QRef, Scratch, bound_and_grad};
use gpn_vbks::rng::Rng;
use nalgebra::DMatrix;

fn all(_: gpn_vbks::expr::Base) -> Option<Vec<usize>> {
    None
}

fn data(n: usize, d: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let x: Vec<f64> = (0..n * d).map(|_| rng.uniform() * 3.0 - 1.5).collect();
    let y: Vec<f64> = (0..n * p)
        .map(|k| (x[(k / p) * d] * (1.0 + k as f64 % 3.0)).sin() + 0.1 * rng.normal())
        .collect();
    (x, y)
}

/// A random q(v): m (M×p) and S = R Rᵀ + 0.1 I.
fn random_q(m: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<f64>, f64) {
    let mut rng = Rng::new(seed);
    let qm: Vec<f64> = (0..m * p).map(|_| rng.normal() * 0.5).collect();
    let r: Vec<f64> = (0..m * m).map(|_| rng.normal() * 0.3).collect();
    let mut s = DMatrix::<f64>::zeros(m, m);
    for i in 0..m {
        for j in 0..m {
            let mut v = 0.0;
            for k in 0..m {
                v += r[i * m + k] * r[j * m + k];
            }
            s[(i, j)] = v + if i == j { 0.1 } else { 0.0 };
        }
    }
    let ln_det = s
        .clone()
        .cholesky()
        .unwrap()
        .l()
        .diagonal()
        .map(f64::ln)
        .sum()
        * 2.0;
    (qm, s.as_slice().to_vec(), ln_det)
}

#[test]
fn gradient_matches_central_differences() {
    let (d, p, m, b) = (2, 2, 6, 9);
    let (x, y) = data(b, d, p, 3);
    let (z, _) = data(m, d, 1, 4);
    for (k, text) in [
        "SE",
        "RQ",
        "PER",
        "LIN",
        "(PER+RQ)*LIN",
        "LIN*PER*RQ",
        "PER*SE+LIN",
        "LIN*LIN+SE*RQ",
    ]
    .iter()
    .enumerate()
    {
        let spec = KernelSpec::compile(&Expr::parse(text).unwrap(), d, &all).unwrap();
        let np = spec.n_params();
        let mut rng = Rng::new(10 + k as u64);
        let psi: Vec<f64> = (0..=np).map(|_| rng.normal() * 0.3).collect();
        let (qm, qs, ln_det) = random_q(m, p, 20 + k as u64);
        let batch = Batch {
            z: &z,
            x: &x,
            y: &y,
            d,
            p,
            scale: 3.0,
            jitter: 1e-3,
        };
        let mut scratch = Scratch::default();
        let mut grad = vec![0.0; np + 1];
        bound_and_grad(
            &spec,
            &psi,
            &batch,
            QRef {
                m: &qm,
                s: &qs,
                ln_det_s: ln_det,
            },
            &mut scratch,
            &mut grad,
        )
        .unwrap();
        let mut dummy = vec![0.0; np + 1];
        for i in 0..=np {
            let h = 1e-5;
            let mut plus = psi.clone();
            plus[i] += h;
            let mut minus = psi.clone();
            minus[i] -= h;
            let fp = bound_and_grad(
                &spec,
                &plus,
                &batch,
                QRef {
                    m: &qm,
                    s: &qs,
                    ln_det_s: ln_det,
                },
                &mut scratch,
                &mut dummy,
            )
            .unwrap();
            let fm = bound_and_grad(
                &spec,
                &minus,
                &batch,
                QRef {
                    m: &qm,
                    s: &qs,
                    ln_det_s: ln_det,
                },
                &mut scratch,
                &mut dummy,
            )
            .unwrap();
            let fd = (fp - fm) / (2.0 * h);
            let tol = 1e-5 * (1.0 + fd.abs());
            assert!(
                (grad[i] - fd).abs() < tol,
                "{text}: ∂/∂ψ[{i}] ({}) analytic {} vs central difference {fd}",
                spec.params().get(i).map_or("ln s²".into(), |p| p.name()),
                grad[i]
            );
        }
    }
}
