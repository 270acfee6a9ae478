//! The local step of one kernel in the offline phase (spec Alg. 3): the uncollapsed SVGP
//! bound of Hensman et al. (2013) on a minibatch, a natural-gradient step for q(u) and an
//! Adam step for the log-hyperparameters ψ (kernel parameters, then ln s²).
//!
//! Parameterisation (a documented deviation from the paper's non-whitened form): q(u) is
//! held *whitened*, u = L_K v with q(v) = N(m_o, S) per output o (S shared by the outputs,
//! which share kernel and noise), prior N(0, I). The bound's fixed points are the same
//! (at the optimal q it is the collapsed bound for any parameterisation), and the whitened
//! natural parameters stay well conditioned when K_uu is nearly singular (LIN kernels on
//! few inputs are low-rank). With V = L_K⁻¹ K_uB (columns w_n), c = N/|B|:
//!
//! ```text
//! ELL = c Σ_n Σ_o [ −½ ln(2π s²) − ((y_no − w_nᵀ m_o)² + w_nᵀ S w_n + k_nn − ‖w_n‖²)/(2s²) ]
//! KL  = Σ_o ½ [ tr S + m_oᵀ m_o − M − ln|S| ]        (independent of ψ when whitened)
//! natural-gradient target: Λ̂ = I + (c/s²) V Vᵀ, ĥ_o = (c/s²) V y_o;
//! (Λ_q, h) ← (1 − γ_t)(Λ_q, h) + γ_t (Λ̂, ĥ),  S = Λ_q⁻¹, m_o = S h_o
//! ```
//!
//! γ_t = max(γ, 1/t) for the t-th step, so the first steps average the minibatch targets
//! instead of jumping to the first one; when the batch is the whole data (scale 1) the
//! target is exact and γ = 1. With the full batch and γ = 1 one step gives the
//! optimal q and the bound equals the collapsed bound (tested).
//!
//! Gradient w.r.t. ψ (reverse mode by hand, checked against central differences):
//! G_V = ∂ELL/∂V with columns (c/s²)[Σ_o r_no m_o − p (S − I) w_n], r_no = y_no − w_nᵀm_o;
//! ∂/∂K_uB = L_K⁻ᵀ G_V; ∂/∂K_uu = −L_K⁻ᵀ Φ(G_V Vᵀ) L_K⁻¹ (Φ: lower triangle, halved
//! diagonal; Murray 2016); ∂/∂k_nn = −c p/(2s²); ∂/∂ln s² = c Σ_n [−p/2 + E_n/(2s²)]
//! with E_n the bracket's numerator summed over o. These are contracted with ∂k/∂ψ of
//! every kernel entry. The jitter on K_uu is held constant in the derivative.

use crate::adam::Adam;
use crate::kernel::{KernelSpec, Prepared};
use crate::linalg::{
    NotPositiveDefinite, cholesky_in_place, solve_lower_mat, solve_lower_t_mat,
    symmetrize_from_lower,
};

/// Inputs of one bound evaluation.
pub struct Batch<'a> {
    /// Inducing inputs, M×d row-major.
    pub z: &'a [f64],
    /// Minibatch inputs, b×d row-major.
    pub x: &'a [f64],
    /// Minibatch standardised targets, b×p row-major.
    pub y: &'a [f64],
    /// Input dimension d.
    pub d: usize,
    /// Outputs p.
    pub p: usize,
    /// Scale c = N/|B|.
    pub scale: f64,
    /// Jitter added to the diagonal of K_uu.
    pub jitter: f64,
}

/// Buffers of one evaluation, sized on first use.
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    kuu: Vec<f64>,
    lk: Vec<f64>,
    v: Vec<f64>,
    kdiag: Vec<f64>,
    sv: Vec<f64>,
    gv: Vec<f64>,
    gk: Vec<f64>,
    tmp: Vec<f64>,
    grad_entry: Vec<f64>,
    r: Vec<f64>,
}

fn ensure(v: &mut Vec<f64>, n: usize) {
    if v.len() != n {
        v.clear();
        v.resize(n, 0.0);
    }
}

/// Kernel matrices of a batch: K_uu + jitter (M×M), L_K, V = L_K⁻¹ K_uB (M×b), diag K_BB.
fn matrices(
    prep: &Prepared<'_>,
    batch: &Batch<'_>,
    s: &mut Scratch,
) -> Result<(usize, usize), NotPositiveDefinite> {
    let d = batch.d;
    let m = batch.z.len() / d;
    let b = batch.x.len() / d;
    ensure(&mut s.kuu, m * m);
    ensure(&mut s.lk, m * m);
    ensure(&mut s.v, m * b);
    ensure(&mut s.kdiag, b);
    for i in 0..m {
        let zi = &batch.z[i * d..(i + 1) * d];
        for j in 0..=i {
            let v = prep.value(zi, &batch.z[j * d..(j + 1) * d]);
            s.kuu[i * m + j] = v;
            s.kuu[j * m + i] = v;
        }
        s.kuu[i * m + i] += batch.jitter;
        for n in 0..b {
            s.v[i * b + n] = prep.value(zi, &batch.x[n * d..(n + 1) * d]);
        }
    }
    for n in 0..b {
        let xn = &batch.x[n * d..(n + 1) * d];
        s.kdiag[n] = prep.diag(xn);
    }
    s.lk.copy_from_slice(&s.kuu);
    cholesky_in_place(&mut s.lk, m)?;
    solve_lower_mat(&s.lk, m, &mut s.v, b);
    Ok((m, b))
}

/// q(v) = N(m_o, S) in whitened coordinates: `m` (M×p), `s` (M×M full) and ln|S|.
#[derive(Debug, Clone, Copy)]
pub struct QRef<'a> {
    /// Means, M×p row-major.
    pub m: &'a [f64],
    /// Covariance, M×M row-major.
    pub s: &'a [f64],
    /// ln|S|.
    pub ln_det_s: f64,
}

/// The whitened SVGP bound ELL − KL on `batch` for q(v) = N(m_o, S) (`qm` M×p,
/// `qs` M×M full, `ln_det_s` = ln|S|) at log-parameters `psi` (kernel's, then ln s²),
/// and its gradient w.r.t. `psi` into `grad` (same length).
pub fn bound_and_grad(
    spec: &KernelSpec,
    psi: &[f64],
    batch: &Batch<'_>,
    q: QRef<'_>,
    s: &mut Scratch,
    grad: &mut [f64],
) -> Result<f64, NotPositiveDefinite> {
    let np = spec.n_params();
    let prep = spec.prepare(&psi[..np]);
    let s2 = psi[np].exp();
    let (m, b) = matrices(&prep, batch, s)?;
    let c = batch.scale;

    covariance_times_v(q.s, s, m, b);
    let (ell, d_ln_s2) = expected_loglik(batch, q.m, s, (m, b), c, s2);
    let kl = whitened_kl(q, m, batch.p);
    kernel_matrix_adjoints(s, m, b);

    grad.fill(0.0);
    let w_diag = -c * batch.p as f64 / (2.0 * s2);
    contract_kernel_gradients(&prep, batch, s, (m, b), np, w_diag, grad);
    grad[np] = d_ln_s2;
    Ok(ell - kl)
}

/// S V (M×b) into `s.sv`.
fn covariance_times_v(qs: &[f64], s: &mut Scratch, m: usize, b: usize) {
    ensure(&mut s.sv, m * b);
    for i in 0..m {
        for n in 0..b {
            let mut acc = 0.0;
            for k in 0..m {
                acc += qs[i * m + k] * s.v[k * b + n];
            }
            s.sv[i * b + n] = acc;
        }
    }
}

/// ELL and ∂ELL/∂ln s² over the batch (scale `c`, noise `s2`); the residuals r_no into
/// `s.r` and G_V = ∂ELL/∂V into `s.gv`.
fn expected_loglik(
    batch: &Batch<'_>,
    qm: &[f64],
    s: &mut Scratch,
    (m, b): (usize, usize),
    c: f64,
    s2: f64,
) -> (f64, f64) {
    let p = batch.p;
    ensure(&mut s.r, b * p);
    ensure(&mut s.gv, m * b);
    let mut ell = 0.0;
    let mut d_ln_s2 = 0.0;
    let ln2pis2 = (2.0 * std::f64::consts::PI * s2).ln();
    for n in 0..b {
        let (mut quad, mut vv) = (0.0, 0.0);
        for i in 0..m {
            quad += s.v[i * b + n] * s.sv[i * b + n];
            vv += s.v[i * b + n] * s.v[i * b + n];
        }
        let mut e_n = p as f64 * (quad + s.kdiag[n] - vv);
        for o in 0..p {
            let mut mean = 0.0;
            for i in 0..m {
                mean += s.v[i * b + n] * qm[i * p + o];
            }
            let r = batch.y[n * p + o] - mean;
            s.r[n * p + o] = r;
            e_n += r * r;
        }
        ell += c * (-0.5 * p as f64 * ln2pis2 - e_n / (2.0 * s2));
        d_ln_s2 += c * (-0.5 * p as f64 + e_n / (2.0 * s2));
        for i in 0..m {
            let mut acc = 0.0;
            for o in 0..p {
                acc += s.r[n * p + o] * qm[i * p + o];
            }
            s.gv[i * b + n] = c / s2 * (acc - p as f64 * (s.sv[i * b + n] - s.v[i * b + n]));
        }
    }
    (ell, d_ln_s2)
}

/// KL = Σ_o ½ [tr S + m_oᵀ m_o − M − ln|S|] of q(v) against N(0, I).
fn whitened_kl(q: QRef<'_>, m: usize, p: usize) -> f64 {
    let (qm, qs, ln_det_s) = (q.m, q.s, q.ln_det_s);
    let mut kl = 0.0;
    let tr_s: f64 = (0..m).map(|i| qs[i * m + i]).sum();
    for o in 0..p {
        let mm: f64 = (0..m).map(|i| qm[i * p + o] * qm[i * p + o]).sum();
        kl += 0.5 * (tr_s + mm - m as f64 - ln_det_s);
    }
    kl
}

/// From G_V (`s.gv`): ∂/∂K_uu = −L⁻ᵀ Φ(G_V Vᵀ) L⁻¹ into `s.gk`, and ∂/∂K_uB = L⁻ᵀ G_V in
/// place in `s.gv`.
fn kernel_matrix_adjoints(s: &mut Scratch, m: usize, b: usize) {
    ensure(&mut s.gk, m * m);
    for i in 0..m {
        for j in 0..m {
            s.gk[i * m + j] = if j > i {
                0.0
            } else {
                let mut acc = 0.0;
                for n in 0..b {
                    acc += s.gv[i * b + n] * s.v[j * b + n];
                }
                if i == j { 0.5 * acc } else { acc }
            };
        }
    }
    solve_lower_t_mat(&s.lk, m, &mut s.gk, m); // X = L⁻ᵀ Φ
    ensure(&mut s.tmp, m * m);
    for i in 0..m {
        for j in 0..m {
            s.tmp[i * m + j] = s.gk[j * m + i]; // Xᵀ
        }
    }
    solve_lower_t_mat(&s.lk, m, &mut s.tmp, m); // L⁻ᵀ Xᵀ = (X L⁻¹)ᵀ
    for i in 0..m {
        for j in 0..m {
            s.gk[i * m + j] = -s.tmp[j * m + i];
        }
    }
    // ∂/∂K_uB = L⁻ᵀ G_V (in place in gv).
    solve_lower_t_mat(&s.lk, m, &mut s.gv, b);
}

/// Adds the adjoints of K_uu (`s.gk`), K_uB (`s.gv`) and diag K_BB (`w_diag` each)
/// contracted with ∂k/∂ψ of every entry (`np` kernel parameters) to `grad`.
fn contract_kernel_gradients(
    prep: &Prepared<'_>,
    batch: &Batch<'_>,
    s: &mut Scratch,
    (m, b): (usize, usize),
    np: usize,
    w_diag: f64,
    grad: &mut [f64],
) {
    let d = batch.d;
    ensure(&mut s.grad_entry, np);
    let g = &mut s.grad_entry;
    for i in 0..m {
        let zi = &batch.z[i * d..(i + 1) * d];
        for j in 0..=i {
            let w = if i == j {
                s.gk[i * m + i]
            } else {
                s.gk[i * m + j] + s.gk[j * m + i]
            };
            prep.value_grad(zi, &batch.z[j * d..(j + 1) * d], g);
            for (acc, &gk) in grad.iter_mut().zip(g.iter()) {
                *acc += w * gk;
            }
        }
        for n in 0..b {
            let w = s.gv[i * b + n];
            prep.value_grad(zi, &batch.x[n * d..(n + 1) * d], g);
            for (acc, &gk) in grad.iter_mut().zip(g.iter()) {
                *acc += w * gk;
            }
        }
    }
    for n in 0..b {
        let xn = &batch.x[n * d..(n + 1) * d];
        prep.value_grad(xn, xn, g);
        for (acc, &gk) in grad.iter_mut().zip(g.iter()) {
            *acc += w_diag * gk;
        }
    }
}

/// Settings of the local optimisation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocalSettings {
    /// Natural-gradient step γ for q(u) (after the 1/t warm start).
    pub natgrad_step: f64,
    /// Standard deviation of the log-normal MAP prior on every hyperparameter (0: ML-II).
    pub prior_sd: f64,
    /// Lower bound of s² (standardised units).
    pub min_noise_var: f64,
    /// |ψ − ψ₀| is clamped to this many nats.
    pub max_log_change: f64,
    /// Relative jitter: K_uu gets `jitter_rel`·mean diag added.
    pub jitter_rel: f64,
}

/// One kernel's state in the offline phase.
#[derive(Debug, Clone)]
pub struct LocalFit {
    /// The kernel.
    pub spec: KernelSpec,
    /// Log-parameters: the kernel's, then ln s².
    pub psi: Vec<f64>,
    /// Prior centres (the initial values).
    pub psi0: Vec<f64>,
    adam: Adam,
    m: usize,
    p: usize,
    /// Natural parameters of q(v): Λ_q (M×M) and h (M×p).
    lam_q: Vec<f64>,
    h: Vec<f64>,
    qm: Vec<f64>,
    qs: Vec<f64>,
    lq: Vec<f64>,
    steps: usize,
    grad: Vec<f64>,
    scratch: Scratch,
    /// Last minibatch bound (for diagnostics).
    pub last_bound: f64,
    /// Steps whose Cholesky failed (the step is skipped).
    pub failed_steps: usize,
}

impl LocalFit {
    /// A fit starting at `psi0` (kernel parameters then ln s²) with q(v) = prior.
    pub fn new(spec: KernelSpec, psi0: Vec<f64>, m: usize, p: usize, lr: f64) -> LocalFit {
        let n = psi0.len();
        let mut lam_q = vec![0.0; m * m];
        for i in 0..m {
            lam_q[i * m + i] = 1.0;
        }
        LocalFit {
            spec,
            psi: psi0.clone(),
            psi0,
            adam: Adam::new(n, lr),
            m,
            p,
            lam_q,
            h: vec![0.0; m * p],
            qm: vec![0.0; m * p],
            qs: vec![0.0; m * m],
            lq: vec![0.0; m * m],
            steps: 0,
            grad: vec![0.0; n],
            scratch: Scratch::default(),
            last_bound: f64::NAN,
            failed_steps: 0,
        }
    }

    /// Jitter for K_uu at the current parameters.
    pub fn jitter(&self, z: &[f64], d: usize, jitter_rel: f64) -> f64 {
        let np = self.spec.n_params();
        let prep = self.spec.prepare(&self.psi[..np]);
        let m = z.len() / d;
        let mean_diag = (0..m)
            .map(|i| prep.diag(&z[i * d..(i + 1) * d]))
            .sum::<f64>()
            / m.max(1) as f64;
        jitter_rel * mean_diag.max(1e-12)
    }

    /// One natural-gradient step on q(v) and one Adam step on ψ with `batch`
    /// (its `scale` = N_t/|B|). A failed factorisation skips the step.
    pub fn step(&mut self, batch: &Batch<'_>, settings: &LocalSettings) {
        self.steps += 1;
        if self.natgrad(batch, settings).is_err() {
            self.failed_steps += 1;
            return;
        }
        let ln_det_s = -crate::linalg::ln_det(&self.lq, self.m);
        let q = QRef {
            m: &self.qm,
            s: &self.qs,
            ln_det_s,
        };
        match bound_and_grad(
            &self.spec,
            &self.psi,
            batch,
            q,
            &mut self.scratch,
            &mut self.grad,
        ) {
            Ok(v) => self.last_bound = v,
            Err(_) => {
                self.failed_steps += 1;
                return;
            }
        }
        if settings.prior_sd > 0.0 {
            let w = 1.0 / (settings.prior_sd * settings.prior_sd);
            for ((g, &x), &x0) in self.grad.iter_mut().zip(&self.psi).zip(&self.psi0) {
                *g -= w * (x - x0);
            }
        }
        self.adam.ascend(&mut self.psi, &self.grad);
        clamp_psi(&mut self.psi, &self.psi0, settings);
    }

    fn natgrad(
        &mut self,
        batch: &Batch<'_>,
        settings: &LocalSettings,
    ) -> Result<(), NotPositiveDefinite> {
        let np = self.spec.n_params();
        let prep = self.spec.prepare(&self.psi[..np]);
        let s2 = self.psi[np].exp();
        let (m, b) = matrices(&prep, batch, &mut self.scratch)?;
        let p = self.p;
        // The whole data set in the batch (scale 1): the target is exact, take it.
        let gamma = if batch.scale <= 1.0 {
            1.0
        } else {
            settings.natgrad_step.max(1.0 / self.steps as f64).min(1.0)
        };
        let f = batch.scale / s2;
        let v = &self.scratch.v;
        for i in 0..m {
            for j in 0..=i {
                let mut acc = 0.0;
                for n in 0..b {
                    acc += v[i * b + n] * v[j * b + n];
                }
                let target = f * acc + if i == j { 1.0 } else { 0.0 };
                let val = (1.0 - gamma) * self.lam_q[i * m + j] + gamma * target;
                self.lam_q[i * m + j] = val;
                self.lam_q[j * m + i] = val;
            }
            for o in 0..p {
                let mut acc = 0.0;
                for n in 0..b {
                    acc += v[i * b + n] * batch.y[n * p + o];
                }
                self.h[i * p + o] = (1.0 - gamma) * self.h[i * p + o] + gamma * f * acc;
            }
        }
        self.lq.copy_from_slice(&self.lam_q);
        cholesky_in_place(&mut self.lq, m)?;
        // S = Λ_q⁻¹ column by column; m_o = S h_o.
        self.qs.fill(0.0);
        for i in 0..m {
            self.qs[i * m + i] = 1.0;
        }
        solve_lower_mat(&self.lq, m, &mut self.qs, m);
        solve_lower_t_mat(&self.lq, m, &mut self.qs, m);
        symmetrize_from_lower(&mut self.qs, m);
        self.qm.copy_from_slice(&self.h);
        solve_lower_mat(&self.lq, m, &mut self.qm, p);
        solve_lower_t_mat(&self.lq, m, &mut self.qm, p);
        Ok(())
    }

    /// Steps taken.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Set the Adam step size (the offline phase decays it).
    pub fn set_lr(&mut self, lr: f64) {
        self.adam.lr = lr;
    }
}

/// Keep ψ within `max_log_change` of ψ₀ and s² above its floor.
pub fn clamp_psi(psi: &mut [f64], psi0: &[f64], settings: &LocalSettings) {
    let n = psi.len();
    for (x, &x0) in psi.iter_mut().zip(psi0) {
        *x = x.clamp(x0 - settings.max_log_change, x0 + settings.max_log_change);
    }
    let floor = settings.min_noise_var.ln();
    if psi[n - 1] < floor {
        psi[n - 1] = floor;
    }
}
