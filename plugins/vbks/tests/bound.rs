//! The collapsed bound and the online posterior against independent dense computations
//! (nalgebra, written from the textbook formulas, not from the crate's whitened form):
//!
//! * with Z = X the bound is the exact GP log marginal likelihood (spec §8 test 2);
//! * for M < N it equals log N(y | 0, Q + s²I) − tr(K − Q)/(2s²), Q = K_fu K_uu⁻¹ K_uf;
//! * the SVGP bound of a random q(u) is below it, and one full-batch natural-gradient
//!   step with γ = 1 reaches it (spec §8 tests 3–4);
//! * λ = 1 online updates give the batch SGPR posterior (mean and variance) and factor
//!   (spec §7.6, to ~1e-9); with forgetting, the statistics are the discounted sums and a
//!   refactorisation gives the discounted SGPR posterior.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpn_vbks::component::Component;
use gpn_vbks::expr::Expr;
use gpn_vbks::kernel::KernelSpec;
use gpn_vbks::local::{Batch, LocalFit, LocalSettings, QRef, Scratch, bound_and_grad};
use gpn_vbks::offline::{collapsed_bound, inducing_factor};
use gpn_vbks::rng::Rng;
use nalgebra::{DMatrix, DVector};

fn all(_: gpn_vbks::expr::Base) -> Option<Vec<usize>> {
    None
}

fn points(n: usize, d: usize, rng: &mut Rng) -> Vec<f64> {
    (0..n * d).map(|_| rng.uniform() * 4.0 - 2.0).collect()
}

fn targets(x: &[f64], d: usize, p: usize, rng: &mut Rng) -> Vec<f64> {
    let n = x.len() / d;
    (0..n * p)
        .map(|k| {
            let i = k / p;
            (x[i * d] * (1.0 + (k % p) as f64)).sin() + 0.3 * x[i * d + d - 1] + 0.05 * rng.normal()
        })
        .collect()
}

/// The problem drawn from `seed`: `n` inputs of dimension `d`, their `p` targets each, and
/// `m` inducing inputs; and the generator, to draw more.
fn problem(
    seed: u64,
    d: usize,
    p: usize,
    n: usize,
    m: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, Rng) {
    let mut rng = Rng::new(seed);
    let x = points(n, d, &mut rng);
    let y = targets(&x, d, p, &mut rng);
    let z = points(m, d, &mut rng);
    (x, y, z, rng)
}

fn gram(spec: &KernelSpec, psi: &[f64], a: &[f64], b: &[f64]) -> DMatrix<f64> {
    let d = spec.dim();
    let prep = spec.prepare(&psi[..spec.n_params()]);
    let (na, nb) = (a.len() / d, b.len() / d);
    DMatrix::from_fn(na, nb, |i, j| {
        prep.value(&a[i * d..(i + 1) * d], &b[j * d..(j + 1) * d])
    })
}

/// Σ_o log N(y_o | 0, C) for an n×n covariance C.
fn log_gauss(c: &DMatrix<f64>, y: &[f64], p: usize) -> f64 {
    let n = c.nrows();
    let chol = c.clone().cholesky().expect("SPD");
    let ln_det = 2.0 * chol.l().diagonal().map(f64::ln).sum();
    (0..p)
        .map(|o| {
            let yo = DVector::from_fn(n, |i, _| y[i * p + o]);
            let a = chol.solve(&yo);
            -0.5 * yo.dot(&a) - 0.5 * ln_det - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
        })
        .sum()
}

fn spec_psi(text: &str, d: usize, seed: u64) -> (KernelSpec, Vec<f64>) {
    let spec = KernelSpec::compile(&Expr::parse(text).unwrap(), d, &all).unwrap();
    let mut rng = Rng::new(seed);
    let mut psi: Vec<f64> = (0..=spec.n_params()).map(|_| 0.2 * rng.normal()).collect();
    let last = psi.len() - 1;
    psi[last] = (0.05f64).ln();
    (spec, psi)
}

const KERNELS: [&str; 5] = ["SE", "RQ", "PER", "PER*SE+RQ", "(PER+RQ)*SE"];

#[test]
fn with_z_equal_x_the_bound_is_the_exact_marginal_likelihood() {
    let (d, p, n) = (2, 2, 25);
    let mut rng = Rng::new(1);
    let x = points(n, d, &mut rng);
    let y = targets(&x, d, p, &mut rng);
    for (k, text) in KERNELS.iter().enumerate() {
        let (spec, psi) = spec_psi(text, d, k as u64);
        let s2 = psi[spec.n_params()].exp();
        let bound = collapsed_bound(&spec, &psi, &x, &x, &y, p, 1e-12);
        let kff = gram(&spec, &psi, &x, &x) + DMatrix::identity(n, n) * s2;
        let exact = log_gauss(&kff, &y, p);
        assert!(
            (bound - exact).abs() < 1e-6 * (1.0 + exact.abs()),
            "{text}: bound {bound} vs exact {exact}"
        );
    }
}

#[test]
fn sparse_bound_matches_the_titsias_formula() {
    let (d, p, n, m) = (2, 2, 40, 7);
    let (x, y, z, _) = problem(2, d, p, n, m);
    for (k, text) in KERNELS.iter().chain(["LIN*SE+PER"].iter()).enumerate() {
        let (spec, psi) = spec_psi(text, d, 10 + k as u64);
        let s2 = psi[spec.n_params()].exp();
        let jitter_rel = 1e-8;
        let bound = collapsed_bound(&spec, &psi, &z, &x, &y, p, jitter_rel);
        let mut kuu = gram(&spec, &psi, &z, &z);
        let jitter = jitter_rel * kuu.diagonal().mean();
        kuu += DMatrix::identity(m, m) * jitter;
        let kuf = gram(&spec, &psi, &z, &x);
        let q = kuf.transpose() * kuu.clone().cholesky().unwrap().solve(&kuf);
        let kff = gram(&spec, &psi, &x, &x);
        let trace = (kff.trace() - q.trace()) * p as f64;
        let want = log_gauss(&(q + DMatrix::identity(n, n) * s2), &y, p) - trace / (2.0 * s2);
        assert!(
            (bound - want).abs() < 1e-7 * (1.0 + want.abs()),
            "{text}: {bound} vs {want}"
        );
    }
}

#[test]
fn svgp_bound_is_below_and_natgrad_with_full_batch_reaches_it() {
    let (d, p, n, m) = (2, 2, 50, 8);
    let (x, y, z, mut rng) = problem(3, d, p, n, m);
    for (k, text) in KERNELS.iter().enumerate() {
        let (spec, psi) = spec_psi(text, d, 20 + k as u64);
        let jitter_rel = 1e-6;
        let collapsed = collapsed_bound(&spec, &psi, &z, &x, &y, p, jitter_rel);
        let mut fit = LocalFit::new(spec.clone(), psi.clone(), m, p, 1e-12);
        let jitter = fit.jitter(&z, d, jitter_rel);
        let batch = Batch {
            z: &z,
            x: &x,
            y: &y,
            d,
            p,
            scale: 1.0,
            jitter,
        };
        // The first step uses γ = 1 (1/t warm start) on the full batch: q becomes optimal.
        let settings = LocalSettings {
            natgrad_step: 1.0,
            prior_sd: 0.0,
            min_noise_var: 1e-9,
            max_log_change: 8.0,
            jitter_rel,
        };
        fit.step(&batch, &settings);
        assert!(
            (fit.last_bound - collapsed).abs() < 1e-7 * (1.0 + collapsed.abs()),
            "{text}: SVGP at the natural-gradient optimum {} vs collapsed {collapsed}",
            fit.last_bound
        );
        // A random q(v) is worse.
        let qm: Vec<f64> = (0..m * p).map(|_| 0.3 * rng.normal()).collect();
        let mut qs = vec![0.0; m * m];
        for i in 0..m {
            qs[i * m + i] = 0.5;
        }
        let mut grad = vec![0.0; psi.len()];
        let random = bound_and_grad(
            &spec,
            &psi,
            &batch,
            QRef {
                m: &qm,
                s: &qs,
                ln_det_s: m as f64 * 0.5f64.ln(),
            },
            &mut Scratch::default(),
            &mut grad,
        )
        .unwrap();
        assert!(random < collapsed, "{text}: {random} !< {collapsed}");
    }
}

/// Dense SGPR posterior at x*: (means per output, latent variance).
#[allow(clippy::too_many_arguments)]
fn sgpr_posterior(
    spec: &KernelSpec,
    psi: &[f64],
    z: &[f64],
    x: &[f64],
    y: &[f64],
    w: &[f64],
    p: usize,
    xstar: &[f64],
    jitter: f64,
) -> (Vec<f64>, f64) {
    let m = z.len() / spec.dim();
    let s2 = psi[spec.n_params()].exp();
    let mut kuu = gram(spec, psi, z, z);
    kuu += DMatrix::identity(m, m) * jitter;
    let kuf = gram(spec, psi, z, x);
    let wdiag = DMatrix::from_diagonal(&DVector::from_column_slice(w));
    let lambda = &kuu + &kuf * &wdiag * kuf.transpose() / s2;
    let lam_chol = lambda.cholesky().unwrap();
    let ks = gram(spec, psi, z, xstar);
    let kss = gram(spec, psi, xstar, xstar)[(0, 0)];
    let n = x.len() / spec.dim();
    let means = (0..p)
        .map(|o| {
            let yo = DVector::from_fn(n, |i, _| y[i * p + o] * w[i]);
            let b = &kuf * yo / s2;
            (ks.transpose() * lam_chol.solve(&b))[(0, 0)]
        })
        .collect();
    let q = (ks.transpose() * kuu.cholesky().unwrap().solve(&ks))[(0, 0)];
    let extra = (ks.transpose() * lam_chol.solve(&ks))[(0, 0)];
    (means, kss - q + extra)
}

#[test]
fn online_updates_match_the_batch_posterior() {
    let (d, p, n, m) = (2, 3, 120, 10);
    let (x, y, z, mut rng) = problem(4, d, p, n, m);
    let xstar = points(5, d, &mut rng);
    for (k, text) in ["SE", "PER*SE+RQ", "LIN*SE+PER"].iter().enumerate() {
        let (spec, psi) = spec_psi(text, d, 30 + k as u64);
        let jitter_rel = 1e-6;
        let lk = inducing_factor(&spec, &psi, &z, jitter_rel).unwrap();
        let jitter = {
            let kuu = gram(&spec, &psi, &z, &z);
            jitter_rel * kuu.diagonal().mean()
        };
        let mut comp = Component::new(spec.clone(), psi.clone(), z.clone(), lk, p).unwrap();
        for i in 0..n {
            comp.update_std(&x[i * d..(i + 1) * d], &y[i * p..(i + 1) * p], 1.0, 1.0);
        }
        // Rank-one updates against a refactorisation of the same statistics.
        let mut batch = comp.clone();
        batch.refactor().unwrap();
        for (a, b) in comp.factor.lb.iter().zip(&batch.factor.lb) {
            assert!(
                (a - b).abs() < 1e-9 * (1.0 + b.abs()),
                "{text}: L_B {a} vs {b}"
            );
        }
        for (a, b) in comp.factor.gamma.iter().zip(&batch.factor.gamma) {
            assert!(
                (a - b).abs() < 1e-9 * (1.0 + b.abs()),
                "{text}: γ {a} vs {b}"
            );
        }
        // Predictions against the dense SGPR posterior.
        let ones = vec![1.0; n];
        for s in 0..5 {
            let xs = &xstar[s * d..(s + 1) * d];
            let mut mean = vec![0.0; p];
            let var = comp.predict_std(xs, &mut mean);
            let (want_mean, want_var) =
                sgpr_posterior(&spec, &psi, &z, &x, &y, &ones, p, xs, jitter);
            for o in 0..p {
                assert!(
                    (mean[o] - want_mean[o]).abs() < 1e-8 * (1.0 + want_mean[o].abs()),
                    "{text}: mean {} vs {}",
                    mean[o],
                    want_mean[o]
                );
            }
            assert!(
                (var - want_var).abs() < 1e-8 * (1.0 + want_var.abs()),
                "{text}: var {var} vs {want_var}"
            );
        }
        // The online local bound equals the batch collapsed bound.
        let want = collapsed_bound(&spec, &psi, &z, &x, &y, p, jitter_rel);
        assert!((comp.local_bound() - want).abs() < 1e-7 * (1.0 + want.abs()));
    }
}

#[test]
fn forgetting_discounts_the_statistics_and_refactoring_gives_the_discounted_posterior() {
    let (d, p, n, m) = (2, 2, 80, 8);
    let lambda: f64 = 0.97;
    let (x, y, z, _) = problem(5, d, p, n, m);
    let (spec, psi) = spec_psi("PER*SE+RQ", d, 40);
    let jitter_rel = 1e-6;
    let lk = inducing_factor(&spec, &psi, &z, jitter_rel).unwrap();
    let jitter = jitter_rel * gram(&spec, &psi, &z, &z).diagonal().mean();
    let mut comp = Component::new(spec.clone(), psi.clone(), z.clone(), lk, p).unwrap();
    for i in 0..n {
        comp.update_std(&x[i * d..(i + 1) * d], &y[i * p..(i + 1) * p], 1.0, lambda);
    }
    let w: Vec<f64> = (0..n).map(|i| lambda.powi((n - 1 - i) as i32)).collect();
    assert!((comp.stats.n - w.iter().sum::<f64>()).abs() < 1e-10);
    comp.refactor().unwrap();
    let xs = [0.3, -0.7];
    let mut mean = vec![0.0; p];
    let var = comp.predict_std(&xs, &mut mean);
    let (want_mean, want_var) = sgpr_posterior(&spec, &psi, &z, &x, &y, &w, p, &xs, jitter);
    for o in 0..p {
        assert!((mean[o] - want_mean[o]).abs() < 1e-8 * (1.0 + want_mean[o].abs()));
    }
    assert!((var - want_var).abs() < 1e-8 * (1.0 + want_var.abs()));
}

#[test]
fn prequential_evidence_with_z_equal_x_is_the_exact_marginal_likelihood() {
    // With the inducing inputs at every data point the SGPR posterior is the exact GP, and
    // the chain rule gives Σ_t log p(y_t | y_<t) = log N(y | 0, K + s²I).
    let (d, p, n) = (2, 2, 30);
    let mut rng = Rng::new(6);
    let x = points(n, d, &mut rng);
    let y = targets(&x, d, p, &mut rng);
    let (spec, psi) = spec_psi("PER*SE+RQ", d, 50);
    let s2 = psi[spec.n_params()].exp();
    let lk = inducing_factor(&spec, &psi, &x, 1e-12).unwrap();
    let mut comp = Component::new(spec.clone(), psi.clone(), x.clone(), lk, p).unwrap();
    comp.offline_bound = 0.0;
    for i in 0..n {
        comp.update_std(&x[i * d..(i + 1) * d], &y[i * p..(i + 1) * p], 1.0, 1.0);
    }
    let exact = log_gauss(
        &(gram(&spec, &psi, &x, &x) + DMatrix::identity(n, n) * s2),
        &y,
        p,
    );
    assert!(
        (comp.online_evidence() - exact).abs() < 1e-6 * (1.0 + exact.abs()),
        "{} vs {exact}",
        comp.online_evidence()
    );
}
