//! The bandit loop (spec §3) for SparQ-GP-UCB, its budget-matched ablations and the
//! baselines of §5.1, one seeded run at a time.
//!
//! Per step t: play x_t (x_1 uniform in D, §7 #12), observe y_t = f_t(x_t) + N(0, σ²),
//! record the regret max f_t − f_t(x_t), build the method's data set for step t, fit, and
//! choose x_{t+1} = argmax μ + β σ over the candidate grid. Random streams are split by
//! purpose (initial point, observation noise, expert noise, selection), so every method
//! sees the same x_1 and the same observation noise sequence (common random numbers).
//!
//! Methods ([`Method`]):
//! * SparQ-GP-UCB ([`SparqConfig`]): injected variances, the discard window, and Q_t fresh
//!   expert answers at greedy pivoted-Cholesky (optionally swap-chain) points of the past
//!   locations. The same struct expresses the budget-matched ablations of §5.1: expert
//!   answers only (no recent window), random past points, random points of D, and GP-UCB
//!   plus Q_t answers at random points of D (no injection, no window).
//! * [`Method::Injected`]: heteroscedastic GP-UCB with injection and no side queries —
//!   with the paper's window (≤ 3 points at T = 500), without a window (quadratic
//!   injection on all data), or exponential weights (W-GP-UCB as a heteroscedastic GP,
//!   v_s = σ²·γ^{−age}, §5.1).
//! * [`Method::SlidingWindow`]: SW-GP-UCB, homoscedastic on the last W observations.
//! * [`Method::TimeKernel`]: GP-UCB (ε = 0), R-GP-UCB (ε = 0, reset every w steps),
//!   TV-GP-UCB (ε > 0), predicting f_{t+1}.
//!
//! All use the same β formula of §2.5 on their own data set, the same kernel, prior-mean
//! offset m0 and grid.

use std::time::Instant;

use super::hetero_gp::{HeteroGp, merge_duplicates};
use super::problem::TimeVaryingProblem;
use super::rng::SplitMix64;
use super::side_query::{Placement, QSchedule, dedup_points, select};
use super::time_kernel::TimeKernelGp;
use super::ucb::{argmax_ucb, beta, grid, refine_1d};
use super::window::{Injection, Threshold};
use super::{Result, TvgpError};
use gpn_gp_core::drift::DriftModel;
use gpn_gp_core::kernel::{ArdKernel, Kernel};

/// Settings shared by every method.
#[derive(Debug, Clone, PartialEq)]
pub struct BanditConfig {
    /// The frozen kernel (§7 #11).
    pub kernel: ArdKernel,
    /// Prior mean offset m0 (§7 #10).
    pub m0: f64,
    /// Confidence δ.
    pub delta: f64,
    /// RKHS norm bound B.
    pub b_norm: f64,
    /// β scale (1 = theory).
    pub beta_scale: f64,
    /// Candidate grid spacing (the spec's 0.01 with refinement; coarser is cheaper).
    pub grid_step: f64,
    /// Golden-section iterations around the best grid point (1-D; 0 = none).
    pub refine_iters: usize,
    /// Horizon T.
    pub horizon: usize,
    /// Points closer than this are one location (1e-9·ℓ).
    pub dedup_tol: f64,
}

/// The frozen ML-II fit for the synthetic problem, (σ_f, ℓ, m0):
/// [`super::problem::fit_hyperparameters`] on 200 samples of f(·, 1), seed 0, σ² = 0.01
/// (a test checks the fit reproduces them).
pub const SYNTHETIC_HYPER: (f64, f64, f64) = (0.471_655_7, 5.197_006, 1.562_407_3);

impl BanditConfig {
    /// The spec's defaults for the synthetic problem (δ = 0.05, B = 1, β scale 1, the frozen
    /// kernel of [`SYNTHETIC_HYPER`]), grid step 0.1 and no refinement.
    pub fn synthetic_default(horizon: usize) -> Result<Self> {
        let (sigma_f, ell, m0) = SYNTHETIC_HYPER;
        let kernel =
            ArdKernel::se(sigma_f, &[ell]).map_err(|e| TvgpError::Config(e.to_string()))?;
        Ok(Self::with_kernel(kernel, m0, horizon))
    }

    /// Defaults around a given kernel and offset.
    pub fn with_kernel(kernel: ArdKernel, m0: f64, horizon: usize) -> Self {
        let ell = (0..kernel.dim())
            .map(|j| kernel.lengthscale(j))
            .fold(f64::INFINITY, f64::min);
        Self {
            kernel,
            m0,
            delta: 0.05,
            b_norm: 1.0,
            beta_scale: 1.0,
            grid_step: 0.1,
            refine_iters: 0,
            horizon,
            dedup_tol: 1e-9 * ell,
        }
    }
}

/// Which past locations the side queries choose from (§7 #4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolKind {
    /// All past locations, deduplicated (paper).
    AllPast,
    /// Only the locations of discarded observations.
    DiscardedOnly,
}

/// SparQ-GP-UCB and its ablations.
#[derive(Debug, Clone, PartialEq)]
pub struct SparqConfig {
    /// Injected variances and the window.
    pub injection: Injection,
    /// σ̄², the expert's noise variance (§7 #7).
    pub expert_var: f64,
    /// Q_t.
    pub schedule: QSchedule,
    /// Where the queries go.
    pub placement: Placement,
    /// The candidate pool.
    pub pool: PoolKind,
    /// Use the recent (kept) bandit observations; false = the "expert-only" ablation.
    pub recent_window: bool,
    /// Skip the queries when nothing was discarded (§7 #16).
    pub skip_when_fresh: bool,
    /// Keep expert answers and age them like other samples (§7 #15; paper: false).
    pub reuse_expert: bool,
    /// KL tolerance η (for ε_t and the trace rule).
    pub eta: f64,
}

impl SparqConfig {
    /// The paper's algorithm with the spec's defaults: quadratic injection with
    /// c_drift = σ², g(t) = σ² max(1, ln t), σ̄² = σ², Q_t = ⌈6 ln t⌉ greedy over all past
    /// locations, η = 0.1.
    pub fn paper(noise_var: f64) -> Self {
        Self {
            injection: Injection::paper(noise_var),
            expert_var: noise_var,
            schedule: QSchedule::paper(),
            placement: Placement::Greedy,
            pool: PoolKind::AllPast,
            recent_window: true,
            skip_when_fresh: true,
            reuse_expert: false,
            eta: 0.1,
        }
    }
}

/// A bandit method.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    /// SparQ-GP-UCB or one of its budget-matched ablations.
    SparQ(SparqConfig),
    /// Heteroscedastic GP-UCB with injection and no side queries.
    Injected(Injection),
    /// SW-GP-UCB on the last `window` observations.
    SlidingWindow {
        /// W.
        window: usize,
    },
    /// GP-UCB / R-GP-UCB / TV-GP-UCB.
    TimeKernel {
        /// ε of the temporal kernel (1 − ε)^{|i−j|/2} (0 = none).
        eps: f64,
        /// Reset every w steps (R-GP-UCB).
        reset_every: Option<usize>,
    },
}

impl Method {
    /// SparQ-GP-UCB as in the paper (greedy selection).
    pub fn sparq(noise_var: f64) -> Self {
        Method::SparQ(SparqConfig::paper(noise_var))
    }

    /// SparQ-GP-UCB with the swap chain after the greedy start (Ñ = min(10 N, 10 000)).
    pub fn sparq_mcmc(noise_var: f64) -> Self {
        Method::SparQ(SparqConfig {
            placement: Placement::GreedyMcmc {
                per_point: 10,
                max_iters: 10_000,
            },
            ..SparqConfig::paper(noise_var)
        })
    }

    /// Ablation: the same Q_t queries at the same points, no recent observations.
    pub fn expert_only(noise_var: f64) -> Self {
        Method::SparQ(SparqConfig {
            recent_window: false,
            skip_when_fresh: false,
            ..SparqConfig::paper(noise_var)
        })
    }

    /// Ablation: Q_t queries at uniformly random past locations.
    pub fn random_past_refresh(noise_var: f64) -> Self {
        Method::SparQ(SparqConfig {
            placement: Placement::RandomPast,
            ..SparqConfig::paper(noise_var)
        })
    }

    /// Ablation: Q_t queries at uniformly random points of D.
    pub fn random_domain_refresh(noise_var: f64) -> Self {
        Method::SparQ(SparqConfig {
            placement: Placement::RandomDomain,
            ..SparqConfig::paper(noise_var)
        })
    }

    /// The spec's third budget-matched ablation: GP-UCB (all bandit data, variance σ², no
    /// injection, no window) plus Q_t fresh expert answers at uniform random points of D.
    pub fn gp_ucb_random_queries(noise_var: f64) -> Self {
        Method::SparQ(SparqConfig {
            injection: Injection::quadratic(0.0, Threshold::Never),
            placement: Placement::RandomDomain,
            skip_when_fresh: false,
            ..SparqConfig::paper(noise_var)
        })
    }

    /// Injection with the paper's window and no side queries.
    pub fn injection_window(noise_var: f64) -> Self {
        Method::Injected(Injection::paper(noise_var))
    }

    /// Quadratic injection (c_drift = σ²) on all data, no window, no side queries.
    pub fn injection_all(noise_var: f64) -> Self {
        Method::Injected(Injection::quadratic(noise_var, Threshold::Never))
    }

    /// W-GP-UCB as a heteroscedastic GP: v = σ²·γ^{−age} on all data.
    pub fn w_gp_ucb(gamma: f64) -> Self {
        Method::Injected(Injection::with_model(
            DriftModel::Exponential {
                tau_s: -1.0 / gamma.ln(),
            },
            Threshold::Never,
        ))
    }

    /// GP-UCB on all data.
    pub fn gp_ucb() -> Self {
        Method::TimeKernel {
            eps: 0.0,
            reset_every: None,
        }
    }

    /// R-GP-UCB: GP-UCB restarted every `w` steps.
    pub fn r_gp_ucb(w: usize) -> Self {
        Method::TimeKernel {
            eps: 0.0,
            reset_every: Some(w),
        }
    }

    /// TV-GP-UCB with forgetting ε.
    pub fn tv_gp_ucb(eps: f64) -> Self {
        Method::TimeKernel {
            eps,
            reset_every: None,
        }
    }

    /// SW-GP-UCB with window W.
    pub fn sw_gp_ucb(window: usize) -> Self {
        Method::SlidingWindow { window }
    }
}

/// What one step logs (§3 line 18).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepLog {
    /// Step t.
    pub t: usize,
    /// First coordinate of the action x_t.
    pub x0: f64,
    /// r_t = max f_t − f_t(x_t).
    pub regret: f64,
    /// Side queries Q_t made at this step.
    pub queries: usize,
    /// Bandit observations kept in the model.
    pub kept: usize,
    /// Samples in the fitted model after merging duplicates.
    pub model_size: usize,
    /// β_{t+1}.
    pub beta: f64,
    /// Ĉ_KL = tr(K − Q_Z)/min(σ², σ̄²) of the pool (0 without queries).
    pub c_kl: f64,
    /// ε_t = σ²η/(4 t M_k²) (logged only, §7 #6).
    pub eps_t: f64,
    /// Accepted swaps of the M-DPP chain at this step.
    pub swaps: usize,
    /// Wall time of the step, ns.
    pub wall_ns: u64,
}

/// A whole run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLog {
    /// One entry per step.
    pub steps: Vec<StepLog>,
}

impl RunLog {
    /// R_t / t for the first t steps.
    pub fn average_regret_at(&self, t: usize) -> f64 {
        let t = t.min(self.steps.len()).max(1);
        self.steps[..t.min(self.steps.len())]
            .iter()
            .map(|s| s.regret)
            .sum::<f64>()
            / t as f64
    }

    /// R_T / T.
    pub fn average_regret(&self) -> f64 {
        self.average_regret_at(self.steps.len())
    }

    /// Mean instantaneous regret over steps a..=b (1-based, inclusive).
    pub fn mean_regret_between(&self, a: usize, b: usize) -> f64 {
        let slice = &self.steps[a.saturating_sub(1).min(self.steps.len())..b.min(self.steps.len())];
        slice.iter().map(|s| s.regret).sum::<f64>() / slice.len().max(1) as f64
    }

    /// Bandit plays plus side queries.
    pub fn total_evaluations(&self) -> usize {
        self.steps.iter().map(|s| 1 + s.queries).sum()
    }
}

/// A bandit or expert sample: location, target (centred), step, base variance.
#[derive(Debug, Clone)]
struct Sample {
    x: Vec<f64>,
    y: f64,
    t: usize,
    base_var: f64,
}

/// Runs `method` on `problem` for `config.horizon` steps with seed `seed`.
pub fn run<P: TimeVaryingProblem>(
    problem: &P,
    method: &Method,
    config: &BanditConfig,
    seed: u64,
) -> Result<RunLog> {
    check_run(problem, config)?;
    let mut state = RunState::new(problem, method, config, seed)?;
    let mut log = RunLog {
        steps: Vec::with_capacity(config.horizon),
    };
    for t in 1..=config.horizon {
        let entry = state.step(problem, method, t)?;
        log.steps.push(entry);
    }
    Ok(log)
}

/// The kernel must take the problem's inputs; the grid step must be positive and the
/// horizon at least 1.
fn check_run<P: TimeVaryingProblem>(problem: &P, config: &BanditConfig) -> Result<()> {
    let d = problem.dim();
    if config.kernel.dim() != d {
        return Err(TvgpError::Input(
            gpn_gp_core::model::ModelError::Dimension {
                what: "kernel inputs",
                expected: d,
                found: config.kernel.dim(),
            },
        ));
    }
    if !config.grid_step.is_finite() || config.grid_step <= 0.0 || config.horizon == 0 {
        return Err(TvgpError::Config(
            "grid_step must be finite and > 0, and horizon ≥ 1".into(),
        ));
    }
    Ok(())
}

/// Everything a run carries from one step to the next.
struct RunState<'a> {
    config: &'a BanditConfig,
    domain: Vec<(f64, f64)>,
    candidates: Vec<f64>,
    noise_var: f64,
    sd: f64,
    rng_obs: SplitMix64,
    rng_expert: SplitMix64,
    rng_select: SplitMix64,
    /// The action of the coming step.
    x: Vec<f64>,
    history: Vec<Sample>,
    answers: Vec<Sample>,
    gp: HeteroGp<ArdKernel>,
    tk: Option<TimeKernelGp<ArdKernel>>,
    /// Posterior on the candidates.
    mean: Vec<f64>,
    var: Vec<f64>,
    /// Data set of the step (row-major inputs, centred targets, variances).
    dx: Vec<f64>,
    dy: Vec<f64>,
    dv: Vec<f64>,
    m_k2: f64,
}

impl<'a> RunState<'a> {
    /// The grid, the random streams split by purpose, x_1 uniform in D and the models.
    fn new<P: TimeVaryingProblem>(
        problem: &P,
        method: &Method,
        config: &'a BanditConfig,
        seed: u64,
    ) -> Result<Self> {
        let d = problem.dim();
        let domain = problem.domain().to_vec();
        let candidates = grid(&domain, config.grid_step);
        let n_cand = candidates.len() / d;
        let noise_var = problem.noise_var();
        let sd = noise_var.sqrt();
        let mut rng_init = SplitMix64::stream(seed, 1);
        let rng_obs = SplitMix64::stream(seed, 2);
        let rng_expert = SplitMix64::stream(seed, 3);
        let rng_select = SplitMix64::stream(seed, 4);

        let x: Vec<f64> = domain
            .iter()
            .map(|&(lo, hi)| rng_init.uniform_in(lo, hi))
            .collect();
        let tk = match method {
            Method::TimeKernel { eps, reset_every } => Some(TimeKernelGp::new(
                config.kernel.clone(),
                *eps,
                noise_var,
                candidates.clone(),
                reset_every.unwrap_or(config.horizon).min(config.horizon),
            )?),
            _ => None,
        };
        Ok(Self {
            config,
            domain,
            candidates,
            noise_var,
            sd,
            rng_obs,
            rng_expert,
            rng_select,
            x,
            history: Vec::with_capacity(config.horizon),
            answers: Vec::new(),
            gp: HeteroGp::new(config.kernel.clone(), 64),
            tk,
            mean: vec![0.0; n_cand],
            var: vec![0.0; n_cand],
            dx: Vec::new(),
            dy: Vec::new(),
            dv: Vec::new(),
            m_k2: config.kernel.sigma_f2(),
        })
    }

    /// Step t: play x_t, observe, record the regret, fit and choose x_{t+1}.
    fn step<P: TimeVaryingProblem>(
        &mut self,
        problem: &P,
        method: &Method,
        t: usize,
    ) -> Result<StepLog> {
        let config = self.config;
        let started = Instant::now();
        let f_x = problem.value(&self.x, t);
        let y = f_x + self.sd * self.rng_obs.normal();
        let mut entry = StepLog {
            t,
            x0: self.x[0],
            regret: problem.max_value(t) - f_x,
            ..StepLog::default()
        };
        self.history.push(Sample {
            x: self.x.clone(),
            y: y - config.m0,
            t,
            base_var: self.noise_var,
        });
        self.dx.clear();
        self.dy.clear();
        self.dv.clear();
        let beta_next = match method {
            Method::TimeKernel { reset_every, .. } => {
                self.time_kernel_step(*reset_every, t, y, &mut entry)?
            }
            _ => {
                self.build_data(problem, method, t, &mut entry)?;
                self.fit_and_choose(problem.dim(), &mut entry)?
            }
        };
        entry.beta = beta_next;
        entry.wall_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        Ok(entry)
    }

    /// GP-UCB / R-GP-UCB / TV-GP-UCB: add (x_t, y_t), predict f_{t+1} and choose; β_{t+1}.
    fn time_kernel_step(
        &mut self,
        reset_every: Option<usize>,
        t: usize,
        y: f64,
        entry: &mut StepLog,
    ) -> Result<f64> {
        let config = self.config;
        let Some(model) = self.tk.as_mut() else {
            return Err(TvgpError::Config("time-kernel model missing".into()));
        };
        if let Some(w) = reset_every
            && t > 1
            && (t - 1).is_multiple_of(w)
        {
            model.reset(t as f64);
        }
        model.push(&self.x, y - config.m0, t as f64)?;
        entry.kept = model.len();
        entry.model_size = model.len();
        let beta_next = beta(
            config.delta,
            model.logdet_info(),
            config.b_norm,
            config.beta_scale,
        );
        let tau = (t + 1) as f64;
        model.posterior_on_grid(tau, &mut self.mean, &mut self.var);
        self.x = choose(
            config,
            &self.domain,
            &self.candidates,
            &self.mean,
            &self.var,
            beta_next,
            |p| model.predict(p, tau),
        );
        Ok(beta_next)
    }

    /// The heteroscedastic methods' data set at step t into (dx, dy, dv).
    fn build_data<P: TimeVaryingProblem>(
        &mut self,
        problem: &P,
        method: &Method,
        t: usize,
        entry: &mut StepLog,
    ) -> Result<()> {
        match method {
            Method::SlidingWindow { window } => {
                let from = self.history.len().saturating_sub((*window).max(1));
                for s in &self.history[from..] {
                    self.dx.extend_from_slice(&s.x);
                    self.dy.push(s.y);
                    self.dv.push(s.base_var);
                }
                entry.kept = self.history.len() - from;
            }
            Method::Injected(inj) => {
                for s in &self.history {
                    if inj.keep(s.base_var, t, s.t, s.t == t) {
                        self.dx.extend_from_slice(&s.x);
                        self.dy.push(s.y);
                        self.dv.push(inj.var(s.base_var, t, s.t));
                        entry.kept += 1;
                    }
                }
            }
            Method::SparQ(cfg) => {
                sparq_data(
                    problem,
                    cfg,
                    self.config,
                    t,
                    &self.history,
                    &mut self.answers,
                    (&mut self.rng_expert, &mut self.rng_select),
                    (&mut self.dx, &mut self.dy, &mut self.dv),
                    entry,
                )?;
                entry.eps_t = self.noise_var * cfg.eta / (4.0 * t as f64 * self.m_k2);
            }
            Method::TimeKernel { .. } => {}
        }
        Ok(())
    }

    /// Fits the heteroscedastic GP to the merged data set, predicts on the grid and chooses
    /// x_{t+1}; β_{t+1}.
    fn fit_and_choose(&mut self, d: usize, entry: &mut StepLog) -> Result<f64> {
        let config = self.config;
        let merged = merge_duplicates(&self.dx, &self.dy, &self.dv, d, config.dedup_tol)?;
        let gp = &mut self.gp;
        gp.fit(&merged.x, &merged.y, &merged.var)?;
        entry.model_size = gp.len();
        let beta_next = beta(
            config.delta,
            gp.logdet_info(),
            config.b_norm,
            config.beta_scale,
        );
        gp.predict_many(&self.candidates, &mut self.mean, &mut self.var);
        self.x = choose(
            config,
            &self.domain,
            &self.candidates,
            &self.mean,
            &self.var,
            beta_next,
            |p| gp.predict(p),
        );
        Ok(beta_next)
    }
}

/// The UCB argmax over the candidates, refined in 1-D if asked.
fn choose(
    config: &BanditConfig,
    domain: &[(f64, f64)],
    candidates: &[f64],
    mean: &[f64],
    var: &[f64],
    beta: f64,
    mut predict: impl FnMut(&[f64]) -> (f64, f64),
) -> Vec<f64> {
    let d = domain.len();
    let best = argmax_ucb(mean, var, beta).unwrap_or(0);
    let point = candidates[best * d..(best + 1) * d].to_vec();
    if d == 1 && config.refine_iters > 0 {
        let (lo, hi) = domain[0];
        let (xr, _) = refine_1d(
            point[0],
            config.grid_step,
            lo,
            hi,
            config.refine_iters,
            |z| {
                let (m, v) = predict(&[z]);
                m + beta * v.max(0.0).sqrt()
            },
        );
        return vec![xr];
    }
    point
}

/// SparQ's data set at step t (§3 lines 4–14) into (dx, dy, dv).
#[allow(clippy::too_many_arguments)]
fn sparq_data<P: TimeVaryingProblem>(
    problem: &P,
    cfg: &SparqConfig,
    config: &BanditConfig,
    t: usize,
    history: &[Sample],
    answers: &mut Vec<Sample>,
    rngs: (&mut SplitMix64, &mut SplitMix64),
    data: (&mut Vec<f64>, &mut Vec<f64>, &mut Vec<f64>),
    entry: &mut StepLog,
) -> Result<()> {
    let (rng_expert, rng_select) = rngs;
    let (dx, dy, dv) = data;
    let d = problem.dim();
    let noise_var = problem.noise_var();
    let inj = &cfg.injection;
    let mut discarded = Vec::new();
    for s in history {
        if inj.keep(s.base_var, t, s.t, s.t == t) {
            if cfg.recent_window {
                dx.extend_from_slice(&s.x);
                dy.push(s.y);
                dv.push(inj.var(s.base_var, t, s.t));
                entry.kept += 1;
            }
        } else {
            discarded.extend_from_slice(&s.x);
        }
    }
    if cfg.reuse_expert {
        answers.retain(|a| inj.keep(a.base_var, t, a.t, false));
        for a in answers.iter() {
            dx.extend_from_slice(&a.x);
            dy.push(a.y);
            dv.push(inj.var(a.base_var, t, a.t));
        }
    }
    if discarded.is_empty() && cfg.skip_when_fresh {
        return Ok(());
    }
    let raw_pool: Vec<f64> = match cfg.pool {
        PoolKind::AllPast => history.iter().flat_map(|s| s.x.iter().copied()).collect(),
        PoolKind::DiscardedOnly => discarded,
    };
    let pool = dedup_points(&raw_pool, d, config.dedup_tol);
    let q = cfg.schedule.budget(t, d, pool.len() / d);
    let min_var = noise_var.min(cfg.expert_var);
    let trace_eta = match cfg.schedule {
        QSchedule::TraceRule { eta, .. } => Some((eta, min_var)),
        _ => None,
    };
    let tol = 1e-12 * config.kernel.sigma_f2();
    let sel = select(
        &config.kernel,
        &pool,
        q,
        cfg.placement,
        trace_eta,
        problem.domain(),
        tol,
        rng_select,
    );
    let expert_sd = cfg.expert_var.sqrt();
    let v_answer = inj.var(cfg.expert_var, t, t);
    for z in sel.points.chunks_exact(d) {
        let answer = problem.value(z, t) + expert_sd * rng_expert.normal() - config.m0;
        dx.extend_from_slice(z);
        dy.push(answer);
        dv.push(v_answer);
        if cfg.reuse_expert {
            answers.push(Sample {
                x: z.to_vec(),
                y: answer,
                t,
                base_var: cfg.expert_var,
            });
        }
    }
    entry.queries = sel.points.len() / d;
    entry.swaps = sel.swaps_accepted;
    entry.c_kl = sel.residual_trace / min_var;
    Ok(())
}
