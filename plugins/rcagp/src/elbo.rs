//! The RCaGP training objective F = E − KL with the corrected KL term and its analytic
//! gradient (spec §1.4, A4; errors of the paper's eq. S4 in §5 items 4–6).
//!
//! * E = Σ_j [ −(Λ_j/2)((μ̂_j − y_j)² + var_j) − (2/σ_j²)(μ̂_j − y_j) g_j + (2/σ_j²) w_j² ]
//!   (the expected robust pseudo-log-likelihood; only marginal variances enter because Λ is
//!   diagonal, and the per-point form sidesteps the paper's wrong ν);
//! * KL = ½ [ v̄ᵀ G v̄ + log det M − log det(SᵀDS) − tr(M⁻¹ G) ], with
//!   log det(SᵀDS) = Σ_a log δ_a for block actions (not the paper's
//!   −i log σ² − log det SᵀS − log det J_w).
//!
//! With several outputs the objective is the sum of their F (shared lengthscales and actions;
//! per-output s_f² and σ²).
//!
//! The gradient follows steps R1–R12 of the spec per output; the two O(n²) parts (the
//! lengthscale contraction of R11 and K Ā of R9) are one shared sweep over point pairs whose
//! coefficients are summed over outputs (K_o = s_f,o² C, so Σ_o K̄_o ∘ ∂K_o collapses to one
//! matrix). Parameters are natural (ℓ_t, s_f², σ², s_l); the softplus chain is in
//! [`crate::train`]. Offline code: allocates.

use nalgebra::{DMatrix, DVector};

use crate::actions::Actions;
use crate::error::RcagpError;
use crate::kernel::sq_dist;
use crate::posterior::{Fitted, OutputData, OutputParams, OutputPosterior, Problem, Projection};

/// The pieces of one output's objective.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElboParts {
    /// Expected pseudo-log-likelihood E.
    pub e: f64,
    /// v̄ᵀ G v̄.
    pub quad: f64,
    /// log det M.
    pub logdet_m: f64,
    /// log det(SᵀDS).
    pub logdet_sds: f64,
    /// tr(M⁻¹ G).
    pub trace: f64,
}

impl ElboParts {
    /// KL = ½ (quad + log det M − log det SᵀDS − tr M⁻¹G).
    pub fn kl(&self) -> f64 {
        0.5 * (self.quad + self.logdet_m - self.logdet_sds - self.trace)
    }

    /// F = E − KL.
    pub fn f(&self) -> f64 {
        self.e - self.kl()
    }
}

/// The expected pseudo-log-likelihood E of one output at the training moments of `post`.
pub fn expected_loglik(data: &OutputData, post: &OutputPosterior) -> f64 {
    let mut e = 0.0;
    for j in 0..data.n() {
        let w = &post.weights[j];
        let s2 = post.sigma2[j];
        let err = post.mu[j] - data.y[j];
        e += -0.5 * w.lam * (err * err + post.var[j]) - 2.0 / s2 * err * w.g + 2.0 / s2 * w.w2;
    }
    e
}

/// The objective's pieces for one output.
pub fn parts(
    proj: &Projection,
    data: &OutputData,
    params: &OutputParams,
    post: &OutputPosterior,
) -> Result<ElboParts, RcagpError> {
    let g = &proj.gc * params.outputscale;
    let quad = post.vbar.dot(&(&g * &post.vbar));
    let logdet_m = 2.0 * post.l.diagonal().iter().map(|v| v.ln()).sum::<f64>();
    let logdet_sds = match post.sds.clone().cholesky() {
        Some(ch) => 2.0 * ch.l().diagonal().iter().map(|v| v.ln()).sum::<f64>(),
        None => {
            return Err(RcagpError::NotPositiveDefinite {
                size: post.sds.nrows(),
            });
        }
    };
    let trace = (&post.q * &g).trace();
    Ok(ElboParts {
        e: expected_loglik(data, post),
        quad,
        logdet_m,
        logdet_sds,
        trace,
    })
}

/// Σ over outputs of F (block or dense actions).
pub fn value(problem: &Problem, fitted: &Fitted) -> Result<f64, RcagpError> {
    let mut f = 0.0;
    for ((data, params), post) in problem.outputs.iter().zip(&fitted.outputs) {
        f += parts(&fitted.proj, data, params, post)?.f();
    }
    Ok(f)
}

/// ∂F/∂(natural parameters).
#[derive(Debug, Clone, PartialEq)]
pub struct Gradient {
    /// ∂F/∂ℓ_t (d).
    pub lengthscales: Vec<f64>,
    /// ∂F/∂s_f,o² per output.
    pub outputscale: Vec<f64>,
    /// ∂F/∂σ_o² per output (the noise multiplier).
    pub sigma2: Vec<f64>,
    /// ∂F/∂s_l (n); empty unless requested.
    pub s: Vec<f64>,
}

/// F (summed over outputs) and its gradient at the fitted posterior (block actions only).
/// With `want_s` the gradient with respect to the action entries is included (adds the
/// K Ā contraction).
pub fn value_and_gradient(
    problem: &Problem,
    fitted: &Fitted,
    want_s: bool,
) -> Result<(f64, Gradient), RcagpError> {
    let Actions::Block { layout, s } = &problem.actions else {
        return Err(RcagpError::Invalid(
            "the ELBO gradient needs block-sparse actions".into(),
        ));
    };
    let (n, i, d) = (problem.n(), layout.i(), problem.d);
    let of = layout.block_of_each();
    let blocks = Blocks {
        n,
        i,
        of: &of,
        s,
        want_s,
    };
    let p = problem.outputs.len();
    let mut f_total = 0.0;
    let mut grad = Gradient {
        lengthscales: vec![0.0; d],
        outputscale: vec![0.0; p],
        sigma2: vec![0.0; p],
        s: if want_s { vec![0.0; n] } else { Vec::new() },
    };
    // Coefficients of C in Σ_o K̄_o: Ḡ_C = Σ s_f² Ḡ_o, Ā_C = Σ s_f² Ā_o.
    let mut gbar_c = DMatrix::<f64>::zeros(i, i);
    let mut abar_c = DMatrix::<f64>::zeros(n, i);

    for (o, ((data, params), post)) in problem.outputs.iter().zip(&fitted.outputs).enumerate() {
        let pieces = parts(&fitted.proj, data, params, post)?;
        f_total += pieces.f();
        let sf2 = params.outputscale;
        let (gbar, abar) = output_gradient(&fitted.proj, data, post, sf2, &blocks, o, &mut grad);
        gbar_c += gbar * sf2;
        abar_c += abar * sf2;
    }

    shared_sweep(problem, &fitted.xs, &blocks, &gbar_c, &abar_c, &mut grad);
    Ok((f_total, grad))
}

/// The block actions as the gradient sees them: n points, i blocks, each point's block
/// and entry s_l, and whether ∂F/∂s is wanted.
struct Blocks<'a> {
    n: usize,
    i: usize,
    of: &'a [usize],
    s: &'a [f64],
    want_s: bool,
}

/// One output's part of the gradient (steps R1–R10 and R12): adds to `grad.s` (if wanted)
/// and sets `grad.outputscale[o]` and `grad.sigma2[o]`; returns Ḡ_o and Ā_o, whose
/// contraction with C is shared by the outputs.
fn output_gradient(
    proj: &Projection,
    data: &OutputData,
    post: &OutputPosterior,
    sf2: f64,
    blocks: &Blocks<'_>,
    o: usize,
    grad: &mut Gradient,
) -> (DMatrix<f64>, DMatrix<f64>) {
    let (n, i, of, s) = (blocks.n, blocks.i, blocks.of, blocks.s);
    let a = &proj.ac * sf2;
    let g = &proj.gc * sf2;
    let q = &post.q;
    let vbar = &post.vbar;
    let (ebar, psi) = residual_adjoints(data, post, n);
    // R2–R3.
    let b = &a * q;
    let mut abar = &ebar * vbar.transpose();
    for j in 0..n {
        for c in 0..i {
            abar[(j, c)] -= 2.0 * psi[j] * b[(j, c)];
        }
    }
    // R4–R5.
    let lambda = a.transpose() * &ebar - &g * vbar;
    let zeta = q * &lambda;
    // R6–R8.
    let mut psi_b = b.clone();
    for j in 0..n {
        for c in 0..i {
            psi_b[(j, c)] *= psi[j];
        }
    }
    let mbar = b.transpose() * psi_b - (q + q * &g * q) * 0.5 - &zeta * vbar.transpose();
    let gbar = &mbar - (vbar * vbar.transpose() - q) * 0.5;
    let dbar: Vec<f64> = (0..i)
        .map(|c| 0.5 / post.sds[(c, c)] + mbar[(c, c)])
        .collect();
    // R9–R10 without K Ā.
    if blocks.want_s {
        let gsym = &gbar + gbar.transpose();
        let ag = &a * gsym;
        for l in 0..n {
            let c = of[l];
            grad.s[l] +=
                ag[(l, c)] + post.weights[l].r * zeta[c] + 2.0 * s[l] * post.weights[l].d * dbar[c];
        }
    }
    // s_f²: Σ_jl K̄_jl K_jl / s_f² = (Σ ψ_j s_f² + ⟨Ḡ, G⟩ + ⟨Ā, A⟩)/s_f².
    grad.outputscale[o] =
        (psi.sum() * sf2 + gbar.component_mul(&g).sum() + abar.component_mul(&a).sum()) / sf2;
    grad.sigma2[o] = sigma2_gradient(data, post, blocks, &zeta, &dbar);
    (gbar, abar)
}

/// R1: ē_j = −Λ_j e_j − (2/σ_j²) g_j and ψ_j = −Λ_j/2, e_j = μ̂_j − y_j.
fn residual_adjoints(
    data: &OutputData,
    post: &OutputPosterior,
    n: usize,
) -> (DVector<f64>, DVector<f64>) {
    let mut ebar = DVector::zeros(n);
    let mut psi = DVector::zeros(n);
    for j in 0..n {
        let w = &post.weights[j];
        let e = post.mu[j] - data.y[j];
        ebar[j] = -w.lam * e - 2.0 / post.sigma2[j] * w.g;
        psi[j] = -0.5 * w.lam;
    }
    (ebar, psi)
}

/// R12: ∂F/∂σ² of one output (per point σ_l² = σ² ν_l).
fn sigma2_gradient(
    data: &OutputData,
    post: &OutputPosterior,
    blocks: &Blocks<'_>,
    zeta: &DVector<f64>,
    dbar: &[f64],
) -> f64 {
    let (of, s) = (blocks.of, blocks.s);
    let mut gs = 0.0;
    for l in 0..blocks.n {
        let w = &post.weights[l];
        let s2 = post.sigma2[l];
        let e = post.mu[l] - data.y[l];
        let c = of[l];
        let per_point = w.lam / s2 * (e * e + post.var[l]) + 2.0 / (s2 * s2) * e * w.g
            - 2.0 / (s2 * s2) * w.w2
            + 2.0 * w.d / s2 * s[l] * s[l] * dbar[c]
            - w.h * s[l] * zeta[c];
        gs += data.noise[l] * per_point;
    }
    gs
}

/// The shared O(n²) sweep over point pairs of the scaled inputs `xs`: R11 for the
/// lengthscales and K Ā for R9, with Ḡ_C and Ā_C summed over outputs.
fn shared_sweep(
    problem: &Problem,
    xs: &[f64],
    blocks: &Blocks<'_>,
    gbar_c: &DMatrix<f64>,
    abar_c: &DMatrix<f64>,
    grad: &mut Gradient,
) {
    let (n, of, s, want_s) = (blocks.n, blocks.of, blocks.s, blocks.want_s);
    let d = problem.d;
    let kind = problem.kind;
    let mut acc = vec![0.0; d];
    for j in 0..n {
        let xj = &xs[j * d..(j + 1) * d];
        let aj = of[j];
        if want_s {
            grad.s[j] += abar_c[(j, aj)];
        }
        for l in (j + 1)..n {
            let xl = &xs[l * d..(l + 1) * d];
            let al = of[l];
            let (phi, slope) = kind.profile_and_slope(sq_dist(xj, xl));
            let w_sum = s[j] * s[l] * (gbar_c[(aj, al)] + gbar_c[(al, aj)])
                + abar_c[(j, al)] * s[l]
                + abar_c[(l, aj)] * s[j];
            let coef = w_sum * slope;
            if coef != 0.0 {
                for ((a_t, &u), &v) in acc.iter_mut().zip(xj).zip(xl) {
                    let dt = u - v;
                    *a_t += coef * dt * dt;
                }
            }
            if want_s {
                grad.s[l] += phi * abar_c[(j, al)];
                grad.s[j] += phi * abar_c[(l, aj)];
            }
        }
    }
    for (t, g) in grad.lengthscales.iter_mut().enumerate() {
        *g = -2.0 * acc[t] / problem.lengthscales[t];
    }
}
