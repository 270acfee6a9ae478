//! Spec §7 tests 2–4: the corrected KL against a dense Gaussian KL (and the paper's literal
//! eq. S4 against it, as a regression guard), the pseudo-likelihood's quadratic form against
//! the score-matching loss, and the closed-form E against Monte Carlo.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use gpn_rcagp::actions::Actions;
use gpn_rcagp::elbo;
use gpn_rcagp::kernel::KernelKind;
use gpn_rcagp::posterior::{Problem, corr_matrix};
use gpn_rcagp::weights::{Beta, WeightProfile, point};
use nalgebra::{DMatrix, DVector};

const N: usize = 40;
const D: usize = 2;
const ELL: [f64; 2] = [1.1, 0.8];

fn setup(actions: Actions, beta: Beta) -> Problem {
    let (x, mut y) = data(N, D, 21);
    y[3] += 4.0; // one outlier so that the weights are not all alike
    problem(
        KernelKind::Matern32,
        &x,
        D,
        &y,
        &ELL,
        params(1.4, 0.25, beta),
        actions,
    )
}

/// K (with s_f²), the variational covariance K − K C̃ K and K̃ = K + D, densely.
fn dense_parts(p: &Problem) -> (DMatrix<f64>, DMatrix<f64>) {
    let fitted = p.fit().unwrap();
    let sf2 = p.outputs[0].1.outputscale;
    let k = corr_matrix(p.kind, &fitted.xs, D) * sf2;
    let mut kt = k.clone();
    for (l, w) in fitted.outputs[0].weights.iter().enumerate() {
        kt[(l, l)] += w.d;
    }
    let s = p.actions.to_dense();
    let m = s.transpose() * &kt * &s;
    let c = &s * m.cholesky().unwrap().inverse() * s.transpose();
    let cov = &k - &k * c * &k;
    (k, cov)
}

fn logdet(m: &DMatrix<f64>) -> f64 {
    2.0 * m
        .clone()
        .cholesky()
        .unwrap()
        .l()
        .diagonal()
        .iter()
        .map(|v| v.ln())
        .sum::<f64>()
}

#[test]
fn kl_equals_the_dense_gaussian_kl() {
    for actions in [
        random_blocks(N, 5, 3),
        random_blocks(N, 8, 4),
        Actions::Dense(dense_random(N, 6, 5)),
    ] {
        let p = setup(actions, Beta::Fixed(1.0));
        let fitted = p.fit().unwrap();
        let (data, par) = &p.outputs[0];
        let post = &fitted.outputs[0];
        let kl = elbo::parts(&fitted.proj, data, par, post).unwrap().kl();

        let (k, cov) = dense_parts(&p);
        let kinv = k.clone().cholesky().unwrap().inverse();
        let dm = DVector::from_iterator(N, (0..N).map(|j| post.mu[j] - data.prior_mean[j]));
        let dense = 0.5
            * ((&kinv * &cov).trace() + dm.dot(&(&kinv * &dm)) - N as f64 + logdet(&k)
                - logdet(&cov));
        assert!(
            (kl - dense).abs() <= 1e-8 * dense.abs().max(1.0),
            "KL {kl} vs dense {dense}"
        );
        assert!(dense > 0.1, "a non-trivial KL ({dense})");

        // The paper's eq. S4 replaces −log det(SᵀDS) by −i log σ² − log det(SᵀS) − log det J_w,
        // J_w = diag(σ²/(2w²)): it does not agree.
        let s = p.actions.to_dense();
        let i = s.ncols() as f64;
        let sigma2 = par.sigma2;
        let logdet_jw: f64 = post
            .weights
            .iter()
            .map(|w| (sigma2 / (2.0 * w.w2)).ln())
            .sum();
        let pieces = elbo::parts(&fitted.proj, data, par, post).unwrap();
        let s4 = 0.5
            * (pieces.quad + pieces.logdet_m
                - pieces.trace
                - i * sigma2.ln()
                - logdet(&(s.transpose() * &s))
                - logdet_jw);
        assert!(
            (s4 - dense).abs() > 0.5,
            "the literal S4 form ({s4}) must differ from {dense}"
        );
    }
}

/// w²(y) of each weight profile, written out here from its definition.
fn profile_w2(profile: WeightProfile, yy: f64, m: f64, c: f64, beta: f64) -> f64 {
    let t = yy - m;
    let u = match profile {
        WeightProfile::Imq => t.abs(),
        WeightProfile::FlatImq => (t.abs() - c).max(0.0),
    };
    beta * beta / (1.0 + u * u / (c * c))
}

/// n L(f) from the score-matching definition, with ∂_y by central differences of
/// y ↦ w²(y)·s(y).
fn score_matching_loss(f: &[f64], y: &[f64], w2: impl Fn(f64) -> f64, sigma2: f64) -> f64 {
    let mut total = 0.0;
    for (&fj, &yj) in f.iter().zip(y) {
        let s = (fj - yj) / sigma2;
        let ws = |yy: f64| w2(yy) * (fj - yy) / sigma2;
        let h = 1e-5 * yj.abs().max(1.0);
        let dws = (ws(yj + h) - ws(yj - h)) / (2.0 * h);
        total += w2(yj) * s * s + 2.0 * dws;
    }
    total
}

#[test]
fn pseudo_likelihood_is_the_quadratic_form() {
    let (_, mut y) = data(N, D, 22);
    y[7] -= 6.0;
    let m = 0.2;
    let c = paper_c(&y, m);
    let (sigma2, beta) = (0.3, 1.0);
    for profile in [WeightProfile::Imq, WeightProfile::FlatImq] {
        let w: Vec<_> = y
            .iter()
            .map(|&v| point(v, m, m, c * c, sigma2, beta * beta, profile))
            .collect();
        let mut rng = Rng(5);
        for _ in 0..20 {
            let f: Vec<f64> = y.iter().map(|v| v + rng.normal()).collect();
            let (mut quad, mut lin, mut cst) = (0.0, 0.0, 0.0);
            for j in 0..N {
                let nu = w[j].lam * (y[j] - sigma2 * w[j].h);
                quad += w[j].lam * f[j] * f[j];
                lin += f[j] * nu;
                cst += 2.0
                    * (w[j].w2 * y[j] * y[j] / (sigma2 * sigma2)
                        - 2.0 / sigma2 * (w[j].w2 + y[j] * w[j].g));
            }
            let form = -0.5 * (quad - 2.0 * lin + cst);
            let w2 = |yy: f64| profile_w2(profile, yy, m, c, beta);
            let direct = -score_matching_loss(&f, &y, w2, sigma2);
            assert!(
                (form - direct).abs() <= 1e-6 * direct.abs().max(1.0),
                "{profile:?}: {form} vs {direct}"
            );
        }
    }
}

#[test]
fn expected_loglik_matches_monte_carlo() {
    let p = setup(random_blocks(N, 5, 9), Beta::Fixed(1.0));
    let fitted = p.fit().unwrap();
    let (data, par) = &p.outputs[0];
    let post = &fitted.outputs[0];
    let e = elbo::expected_loglik(data, post);
    let (_, cov) = dense_parts(&p);
    let mut cj = cov.clone();
    for a in 0..N {
        cj[(a, a)] += 1e-12;
    }
    let l = cj.cholesky().unwrap().l();
    let mu = DVector::from_column_slice(&post.mu);
    let mut rng = Rng(77);
    let samples = 20_000;
    let (mut sum, mut sum2) = (0.0, 0.0);
    let sigma2 = par.sigma2;
    for _ in 0..samples {
        let xi = DVector::from_fn(N, |_, _| rng.normal());
        let f = &mu + &l * xi;
        // −n L(f) per point.
        let v: f64 = (0..N)
            .map(|j| {
                let w = &post.weights[j];
                let err = f[j] - data.y[j];
                -0.5 * w.lam * err * err - 2.0 / sigma2 * err * w.g + 2.0 / sigma2 * w.w2
            })
            .sum();
        sum += v;
        sum2 += v * v;
    }
    let mean = sum / samples as f64;
    let se = ((sum2 / samples as f64 - mean * mean) / samples as f64).sqrt();
    assert!((e - mean).abs() <= 3.0 * se, "E {e} vs MC {mean} ± {se}");
    assert!(
        se < 0.05 * e.abs().max(1.0),
        "the Monte Carlo estimate is informative (se {se})"
    );
}
