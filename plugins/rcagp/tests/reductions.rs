//! Spec §7 test 1 (reductions) and test 9 (prediction at the training inputs): the
//! block-sparse RCaGP posterior against dense references that share no code with it.
//!
//! * S = I_n ⇒ exact RCGP (Cholesky of K̃ = K + D);
//! * β = σ/√2, c = 1e12 ⇒ CaGP (dense C_i = S(SᵀK̂S)⁻¹Sᵀ, and Wenger's sequential
//!   Algorithm 1 written out here);
//! * both ⇒ the exact GP.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use gpn_rcagp::actions::Actions;
use gpn_rcagp::baselines::DensePosterior;
use gpn_rcagp::kernel::{KernelKind, KernelParams};
use gpn_rcagp::posterior::{OutputData, OutputParams, Problem};
use gpn_rcagp::weights::Beta;
use nalgebra::{DMatrix, DVector};

const N: usize = 30;
const D: usize = 2;
const ELL: [f64; 2] = [0.9, 1.4];

fn kernel(kind: KernelKind) -> KernelParams {
    KernelParams {
        kind,
        lengthscales: ELL.to_vec(),
        outputscale: 1.0,
    }
}

fn assert_same(problem: &Problem, reference: &DensePosterior, tol: f64, what: &str) {
    let fitted = problem.fit().unwrap();
    let m = problem.outputs[0].0.prior_mean[0];
    for xq in test_inputs(25, D, 99) {
        let (mu, var) = fitted.predict(problem, 0, &xq, m);
        let (mu_ref, var_ref) = reference.predict(&xq);
        assert!(close(mu, mu_ref, tol), "{what}: mean {mu} vs {mu_ref}");
        assert!(
            close(var, var_ref.max(0.0), tol),
            "{what}: var {var} vs {var_ref}"
        );
    }
}

#[test]
fn identity_actions_give_exact_rcgp() {
    for kind in [
        KernelKind::Rbf,
        KernelKind::Matern52,
        KernelKind::Matern32,
        KernelKind::Matern12,
    ] {
        let (x, y) = data(N, D, 7);
        let params = params(1.3, 0.2, Beta::Fixed(1.0));
        // Block layout with k_b = 1 and s = 1, and a dense identity: both are S = I.
        for actions in [identity_blocks(N), Actions::Dense(DMatrix::identity(N, N))] {
            let p = problem(kind, &x, D, &y, &ELL, params, actions);
            let reference = DensePosterior::exact_rcgp(
                &kernel(kind),
                &x,
                D,
                &p.outputs[0].0,
                &params,
                p.outputs[0].0.prior_mean[0],
            )
            .unwrap();
            assert_same(&p, &reference, 1e-9, "S = I vs RCGP");
        }
    }
}

/// Wenger et al. 2022, Algorithm 1: C_j = C_{j−1} + p_j p_jᵀ/η_j, v_j likewise.
fn sequential_cagp(
    kh: &DMatrix<f64>,
    s: &DMatrix<f64>,
    resid: &DVector<f64>,
) -> (DMatrix<f64>, DVector<f64>) {
    let n = kh.nrows();
    let mut c: DMatrix<f64> = DMatrix::zeros(n, n);
    let mut v: DVector<f64> = DVector::zeros(n);
    for j in 0..s.ncols() {
        let sj: DVector<f64> = s.column(j).into_owned();
        let pj = &sj - &c * (kh * &sj);
        let eta = sj.dot(&(kh * &pj));
        let step = sj.dot(&(resid - kh * &v)) / eta;
        c += &pj * pj.transpose() / eta;
        v += &pj * step;
    }
    (c, v)
}

/// The problem of `x`, `y` (N samples of D inputs) with lengthscales `ELL`, prior mean `m`
/// and c = 1e12 (h ≈ 0: no sample is treated as an outlier), as the reductions set it.
fn reduction_problem(
    kind: KernelKind,
    x: &[f64],
    y: &[f64],
    params: OutputParams,
    m: f64,
    actions: Actions,
) -> Problem {
    Problem::single(kind, x, D, y, &ELL, params, m, 1e12, actions)
}

#[test]
fn gaussian_weights_give_cagp() {
    let (x, y) = data(N, D, 11);
    let sigma2 = 0.15;
    // β = σ/√2 (w² = σ²/2 ⇒ d = σ²) and c = 1e12 (h ≈ 0 ⇒ r = y − m).
    let params = params(0.8, sigma2, Beta::Fixed((sigma2 / 2.0).sqrt()));
    let m = y.iter().sum::<f64>() / N as f64;
    for (i, seed) in [(5usize, 1u64), (6, 2), (10, 3)] {
        let actions = random_blocks(N, i, seed);
        let dense_s = actions.to_dense();
        let p = reduction_problem(KernelKind::Matern52, &x, &y, params, m, actions);
        let reference = DensePosterior::cagp(
            &kernel(KernelKind::Matern52),
            &x,
            D,
            &OutputData::paper(&y, m, 1e12),
            &params,
            &dense_s,
            m,
        )
        .unwrap();
        assert_same(&p, &reference, 1e-9, "CaGP (batch form)");

        // The sequential algorithm gives the same C_i and v_i as the batch reference.
        let k = KernelParams {
            outputscale: 0.8,
            ..kernel(KernelKind::Matern52)
        };
        let kh = DMatrix::from_fn(N, N, |a, b| {
            k.value_raw(&x[a * D..(a + 1) * D], &x[b * D..(b + 1) * D])
                + if a == b { sigma2 } else { 0.0 }
        });
        let resid = DVector::from_iterator(N, y.iter().map(|v| v - m));
        let (_, v_seq) = sequential_cagp(&kh, &dense_s, &resid);
        let fitted = p.fit().unwrap();
        for (a, b) in fitted.outputs[0].alpha.iter().zip(v_seq.iter()) {
            assert!(
                close(*a, *b, 1e-9),
                "representer weights {a} vs sequential {b}"
            );
        }
    }
}

#[test]
fn both_reductions_give_the_exact_gp() {
    let (x, y) = data(N, D, 13);
    let sigma2 = 0.05;
    let params = params(1.1, sigma2, Beta::Fixed((sigma2 / 2.0).sqrt()));
    let m = y.iter().sum::<f64>() / N as f64;
    let p = reduction_problem(KernelKind::Rbf, &x, &y, params, m, identity_blocks(N));
    let reference = DensePosterior::exact_gp(
        &kernel(KernelKind::Rbf),
        &x,
        D,
        &OutputData::paper(&y, m, 1e12),
        &params,
        m,
    )
    .unwrap();
    assert_same(&p, &reference, 1e-9, "exact GP");
    // Normalized β with c = 1e12 is the same model (d = σ²(1 + t²/c²) → σ²).
    let p2 = reduction_problem(
        KernelKind::Rbf,
        &x,
        &y,
        common::params(1.1, sigma2, Beta::Normalized),
        m,
        identity_blocks(N),
    );
    assert_same(&p2, &reference, 1e-9, "normalized β = exact GP");
}

#[test]
fn prediction_at_training_inputs_reproduces_the_cache() {
    // Spec §7 test 9: A6 at x_j equals μ̂_j and var_j of A3.
    let (x, y) = data(40, 3, 17);
    for actions in [
        random_blocks(40, 5, 4),
        Actions::Dense(dense_random(40, 7, 5)),
    ] {
        let p = problem(
            KernelKind::Matern32,
            &x,
            3,
            &y,
            &[1.0, 0.7, 1.5],
            params(1.2, 0.3, Beta::Fixed(1.0)),
            actions,
        );
        let fitted = p.fit().unwrap();
        let m = p.outputs[0].0.prior_mean[0];
        let post = &fitted.outputs[0];
        for j in 0..40 {
            let (mu, var) = fitted.predict(&p, 0, &x[j * 3..(j + 1) * 3], m);
            assert!(
                close(mu, post.mu[j], 1e-10),
                "mean at x_{j}: {mu} vs {}",
                post.mu[j]
            );
            assert!(
                close(var, post.var[j].max(0.0), 1e-10),
                "var at x_{j}: {var} vs {}",
                post.var[j]
            );
        }
    }
}
