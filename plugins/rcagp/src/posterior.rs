//! The batch RCaGP posterior (spec §1.3, A3, A6) for p outputs that share the inputs, the
//! kernel shape (profile and lengthscales) and the action matrix S.
//!
//! Kernel of output o: K_o = s_f,o² · C with C the unit-outputscale correlation matrix, so
//! the projections A_C = C S (n×i) and G_C = Sᵀ C S (i×i) are computed once ([`Projection`])
//! and scaled per output. Per output ([`OutputPosterior`]):
//!
//! * weights, d, Λ, r from [`crate::weights`] (per-point noise σ_l² = σ²·ν_l);
//! * M = s_f² G_C + SᵀDS (diagonal δ_a = Σ_{l∈B_a} s_l² d_l for block S), L = chol(M) with
//!   the jitter schedule of A3.5;
//! * z = Sᵀ r, v̄ = M⁻¹ z, α = S v̄;
//! * training moments μ̂ = m + s_f² A_C v̄, var_j = s_f² − ‖L⁻¹ s_f² a_C,j‖² (not clamped);
//! * prediction at x: μ̂(x) = m(x) + s_f² c_xᵀ α, var_f(x) = s_f² − ‖L⁻¹ s_f² Sᵀc_x‖²
//!   (latent; clamped at 0).
//!
//! Offline code: dense nalgebra matrices, allocation everywhere. The block-sparse kernel
//! sweeps never form the n×n matrix; dense actions do (tests, inducing-point actions).

use nalgebra::{DMatrix, DVector};

use crate::actions::{Actions, BlockLayout};
use crate::error::RcagpError;
use crate::kernel::{KernelKind, scale_rows, sq_dist};
use crate::weights::{Beta, PointWeight, WeightProfile, point};

/// One output's data in a batch problem (all vectors have length n).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputData {
    /// Targets y.
    pub y: Vec<f64>,
    /// Base noise ν_l of every point; the noise variance is σ_l² = σ²·ν_l (all ones for the
    /// paper's homoscedastic σ²).
    pub noise: Vec<f64>,
    /// Prior mean m at each input.
    pub prior_mean: Vec<f64>,
    /// Weight centre γ_l (the prior mean in the paper).
    pub center: Vec<f64>,
    /// Squared soft threshold c_l² of every point (c² in the paper).
    pub c2: Vec<f64>,
}

impl OutputData {
    /// The paper's setting: unit base noise, constant prior mean `m` that is also the weight
    /// centre, one threshold `c`.
    pub fn paper(y: &[f64], m: f64, c: f64) -> Self {
        let n = y.len();
        Self {
            y: y.to_vec(),
            noise: vec![1.0; n],
            prior_mean: vec![m; n],
            center: vec![m; n],
            c2: vec![c * c; n],
        }
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.y.len()
    }
}

/// One output's hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputParams {
    /// s_f² (kernel outputscale, a variance).
    pub outputscale: f64,
    /// σ², the noise multiplier (the noise variance itself when ν ≡ 1).
    pub sigma2: f64,
    /// The IMQ height β.
    pub beta: Beta,
    /// The shape of the weights.
    pub profile: WeightProfile,
}

/// A batch problem: shared raw inputs, kernel shape and actions; per-output data and
/// hyperparameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Kernel profile.
    pub kind: KernelKind,
    /// Input dimension d.
    pub d: usize,
    /// Raw inputs, n×d row-major.
    pub x: Vec<f64>,
    /// ℓ_1..ℓ_d.
    pub lengthscales: Vec<f64>,
    /// The action matrix S.
    pub actions: Actions,
    /// Per output: data and hyperparameters.
    pub outputs: Vec<(OutputData, OutputParams)>,
}

/// A_C = C S and G_C = Sᵀ C S for the unit-outputscale kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// C S (n×i).
    pub ac: DMatrix<f64>,
    /// Sᵀ C S (i×i), symmetrised.
    pub gc: DMatrix<f64>,
}

/// The posterior of one output. See the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputPosterior {
    /// Per-point weights.
    pub weights: Vec<PointWeight>,
    /// σ_l² per point.
    pub sigma2: Vec<f64>,
    /// Sᵀ D S (diagonal δ for block S).
    pub sds: DMatrix<f64>,
    /// M = s_f² G_C + SᵀDS (+ jitter).
    pub m: DMatrix<f64>,
    /// Jitter added to M's diagonal (0 if none was needed).
    pub jitter: f64,
    /// L, lower triangular, L Lᵀ = M.
    pub l: DMatrix<f64>,
    /// Q = M⁻¹.
    pub q: DMatrix<f64>,
    /// z = Sᵀ r.
    pub z: DVector<f64>,
    /// v̄ = M⁻¹ z.
    pub vbar: DVector<f64>,
    /// α = S v̄ (n).
    pub alpha: Vec<f64>,
    /// μ̂ at the training inputs (n).
    pub mu: Vec<f64>,
    /// Latent variance at the training inputs (n, not clamped).
    pub var: Vec<f64>,
}

/// Everything built from a [`Problem`]: scaled inputs, the projection and each output's
/// posterior.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// Inputs scaled by 1/ℓ (n×d).
    pub xs: Vec<f64>,
    /// 1/ℓ.
    pub inv_ell: Vec<f64>,
    /// The shared projection.
    pub proj: Projection,
    /// One per output.
    pub outputs: Vec<OutputPosterior>,
}

/// Per-point weights and noise variances of one output.
pub fn output_weights(data: &OutputData, params: &OutputParams) -> (Vec<PointWeight>, Vec<f64>) {
    let n = data.n();
    let mut w = Vec::with_capacity(n);
    let mut s2 = Vec::with_capacity(n);
    for l in 0..n {
        let sigma2 = params.sigma2 * data.noise[l];
        w.push(point(
            data.y[l],
            data.center[l],
            data.prior_mean[l],
            data.c2[l],
            sigma2,
            params.beta.beta2(sigma2),
            params.profile,
        ));
        s2.push(sigma2);
    }
    (w, s2)
}

/// The correlation matrix C (n×n) of scaled inputs. **Allocates n².**
pub fn corr_matrix(kind: KernelKind, xs: &[f64], d: usize) -> DMatrix<f64> {
    let n = xs.len() / d;
    DMatrix::from_fn(n, n, |j, l| {
        kind.profile(sq_dist(&xs[j * d..(j + 1) * d], &xs[l * d..(l + 1) * d]))
    })
}

/// A_C = C S and G_C = Sᵀ C S. Block actions stream over point pairs (n²/2 kernel values,
/// O(n i) memory); dense actions form C.
pub fn project(kind: KernelKind, xs: &[f64], d: usize, actions: &Actions) -> Projection {
    match actions {
        Actions::Block { layout, s } => project_block(kind, xs, d, layout, s),
        Actions::Dense(s) => {
            let c = corr_matrix(kind, xs, d);
            let ac = &c * s;
            let g = s.transpose() * &ac;
            let gc = (&g + g.transpose()) * 0.5;
            Projection { ac, gc }
        }
    }
}

fn project_block(
    kind: KernelKind,
    xs: &[f64],
    d: usize,
    layout: &BlockLayout,
    s: &[f64],
) -> Projection {
    let (n, i) = (layout.n(), layout.i());
    let of = layout.block_of_each();
    let mut ac = DMatrix::zeros(n, i);
    for j in 0..n {
        let xj = &xs[j * d..(j + 1) * d];
        ac[(j, of[j])] += s[j];
        for l in (j + 1)..n {
            let c = kind.profile(sq_dist(xj, &xs[l * d..(l + 1) * d]));
            ac[(j, of[l])] += c * s[l];
            ac[(l, of[j])] += c * s[j];
        }
    }
    let mut gc = DMatrix::zeros(i, i);
    for b in 0..i {
        for l in layout.block(b) {
            for a in 0..i {
                gc[(b, a)] += s[l] * ac[(l, a)];
            }
        }
    }
    let gc = (&gc + gc.transpose()) * 0.5;
    Projection { ac, gc }
}

/// Cholesky of a symmetric matrix with the jitter schedule of spec A3.5: none, then
/// 1e−8, 1e−7, 1e−6, then ×10 up to 1e−4·mean(diag). Returns the factorisation and the
/// jitter.
pub fn chol_jitter(
    m: &DMatrix<f64>,
) -> Result<(nalgebra::Cholesky<f64, nalgebra::Dyn>, f64), RcagpError> {
    let size = m.nrows();
    let mean_diag = (0..size).map(|a| m[(a, a)]).sum::<f64>() / size.max(1) as f64;
    let mut tries = vec![0.0, 1e-8, 1e-7, 1e-6];
    let cap = 1e-4 * mean_diag.abs();
    let mut j = 1e-5;
    while j <= cap {
        tries.push(j);
        j *= 10.0;
    }
    if cap > 1e-6 {
        tries.push(cap);
    }
    for jitter in tries {
        let mut mj = m.clone();
        for a in 0..size {
            mj[(a, a)] += jitter;
        }
        if let Some(ch) = mj.cholesky() {
            return Ok((ch, jitter));
        }
    }
    Err(RcagpError::NotPositiveDefinite { size })
}

impl OutputPosterior {
    /// Builds the posterior of one output from the shared projection (spec A3).
    pub fn build(
        proj: &Projection,
        actions: &Actions,
        data: &OutputData,
        params: &OutputParams,
    ) -> Result<Self, RcagpError> {
        let n = data.n();
        if actions.n() != n {
            return Err(RcagpError::Dimension {
                what: "actions rows",
                expected: n,
                found: actions.n(),
            });
        }
        let (weights, sigma2) = output_weights(data, params);
        let i = actions.i();
        let sf2 = params.outputscale;
        let r = DVector::from_iterator(n, weights.iter().map(|w| w.r));
        let (sds, z) = match actions {
            Actions::Block { layout, s } => {
                let mut sds = DMatrix::zeros(i, i);
                let mut z = DVector::zeros(i);
                for a in 0..i {
                    let mut delta = 0.0;
                    for l in layout.block(a) {
                        delta += s[l] * s[l] * weights[l].d;
                        z[a] += s[l] * r[l];
                    }
                    sds[(a, a)] = delta.max(1e-12);
                }
                (sds, z)
            }
            Actions::Dense(s) => {
                let dvec = DVector::from_iterator(n, weights.iter().map(|w| w.d));
                let sd = DMatrix::from_fn(n, i, |l, a| s[(l, a)] * dvec[l]);
                let sds = s.transpose() * sd;
                let sds = (&sds + sds.transpose()) * 0.5;
                (sds, s.transpose() * &r)
            }
        };
        let m_raw = &proj.gc * sf2 + &sds;
        let (chol, jitter) = chol_jitter(&m_raw)?;
        let mut m = m_raw;
        for a in 0..i {
            m[(a, a)] += jitter;
        }
        let l = chol.l();
        let q = chol.inverse();
        let vbar = chol.solve(&z);
        let alpha: Vec<f64> = match actions {
            Actions::Block { layout, s } => {
                let mut alpha = vec![0.0; n];
                for a in 0..i {
                    for l in layout.block(a) {
                        alpha[l] = s[l] * vbar[a];
                    }
                }
                alpha
            }
            Actions::Dense(s) => (s * &vbar).iter().copied().collect(),
        };
        let a_mat = &proj.ac * sf2;
        let mu_dev = &a_mat * &vbar;
        let mu: Vec<f64> = (0..n).map(|j| data.prior_mean[j] + mu_dev[j]).collect();
        // W = L⁻¹ Aᵀ; var_j = s_f² − ‖W_{:,j}‖².
        let w = l
            .solve_lower_triangular(&a_mat.transpose())
            .ok_or(RcagpError::NotPositiveDefinite { size: i })?;
        let var: Vec<f64> = (0..n).map(|j| sf2 - w.column(j).norm_squared()).collect();
        Ok(Self {
            weights,
            sigma2,
            sds,
            m,
            jitter,
            l,
            q,
            z,
            vbar,
            alpha,
            mu,
            var,
        })
    }
}

impl Problem {
    /// A single-output problem in the paper's setting (see [`OutputData::paper`]).
    #[allow(clippy::too_many_arguments)]
    pub fn single(
        kind: KernelKind,
        x: &[f64],
        d: usize,
        y: &[f64],
        lengthscales: &[f64],
        params: OutputParams,
        m: f64,
        c: f64,
        actions: Actions,
    ) -> Self {
        Self {
            kind,
            d,
            x: x.to_vec(),
            lengthscales: lengthscales.to_vec(),
            actions,
            outputs: vec![(OutputData::paper(y, m, c), params)],
        }
    }

    /// Number of training points n.
    pub fn n(&self) -> usize {
        self.x.len() / self.d.max(1)
    }

    /// Checks sizes and values.
    pub fn check(&self) -> Result<(), RcagpError> {
        let n = self.n();
        let dims = |what: &'static str, expected: usize, found: usize| {
            if expected == found {
                Ok(())
            } else {
                Err(RcagpError::Dimension {
                    what,
                    expected,
                    found,
                })
            }
        };
        dims("x", n * self.d, self.x.len())?;
        dims("lengthscales", self.d, self.lengthscales.len())?;
        dims("actions rows", n, self.actions.n())?;
        for (data, params) in &self.outputs {
            dims("y", n, data.y.len())?;
            dims("noise", n, data.noise.len())?;
            dims("prior_mean", n, data.prior_mean.len())?;
            dims("center", n, data.center.len())?;
            dims("c2", n, data.c2.len())?;
            if !(params.outputscale > 0.0 && params.sigma2 > 0.0) {
                return Err(RcagpError::Invalid(format!(
                    "outputscale and sigma2 must be > 0, found {} and {}",
                    params.outputscale, params.sigma2
                )));
            }
        }
        if self
            .lengthscales
            .iter()
            .any(|l| !(*l > 0.0 && l.is_finite()))
        {
            return Err(RcagpError::Invalid(
                "lengthscales must be finite and > 0".into(),
            ));
        }
        Ok(())
    }

    /// Builds the posterior of every output.
    pub fn fit(&self) -> Result<Fitted, RcagpError> {
        self.check()?;
        let inv_ell: Vec<f64> = self.lengthscales.iter().map(|l| 1.0 / l).collect();
        let mut xs = vec![0.0; self.x.len()];
        scale_rows(&self.x, &inv_ell, &mut xs);
        let proj = project(self.kind, &xs, self.d, &self.actions);
        let outputs = self
            .outputs
            .iter()
            .map(|(data, params)| OutputPosterior::build(&proj, &self.actions, data, params))
            .collect::<Result<_, _>>()?;
        Ok(Fitted {
            xs,
            inv_ell,
            proj,
            outputs,
        })
    }
}

impl Fitted {
    /// Latent mean and variance of output `o` at the raw input `x`, with prior mean
    /// `prior_mean` there (spec A6). Allocates scratch; for offline use.
    pub fn predict(&self, problem: &Problem, o: usize, x: &[f64], prior_mean: f64) -> (f64, f64) {
        let d = problem.d;
        let xq: Vec<f64> = x.iter().zip(&self.inv_ell).map(|(a, w)| a * w).collect();
        let n = problem.n();
        let c: Vec<f64> = (0..n)
            .map(|l| {
                problem
                    .kind
                    .profile(sq_dist(&xq, &self.xs[l * d..(l + 1) * d]))
            })
            .collect();
        let post = &self.outputs[o];
        let sf2 = problem.outputs[o].1.outputscale;
        let mean = prior_mean + sf2 * c.iter().zip(&post.alpha).map(|(a, b)| a * b).sum::<f64>();
        let u: DVector<f64> = match &problem.actions {
            Actions::Block { layout, s } => DVector::from_iterator(
                layout.i(),
                (0..layout.i()).map(|a| layout.block(a).map(|l| s[l] * c[l]).sum::<f64>() * sf2),
            ),
            Actions::Dense(s) => s.transpose() * DVector::from_vec(c) * sf2,
        };
        let t = post
            .l
            .solve_lower_triangular(&u)
            .unwrap_or_else(|| DVector::zeros(u.len()));
        (mean, (sf2 - t.norm_squared()).max(0.0))
    }
}
