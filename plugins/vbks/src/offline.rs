//! The offline phase on the first N samples (spec Alg. 2, 4, 6): standardise, choose the
//! shared inducing inputs, fit every kernel's hyperparameters by minibatch stochastic
//! optimisation of its local bound while the data arrive as a stream of checkpoints, form
//! the kernel belief from the local bounds, prune to the top K̃ kernels and build the online
//! components. Runs on the model's background thread (or a caller's thread in tests);
//! allocates freely.
//!
//! Stream and checkpoints: the N samples are shuffled (seeded) into a stream, cut into T
//! equal chunks; at checkpoint t the data D_t are the first t chunks. Per checkpoint every
//! kernel takes max(⌈epochs·|chunk|/|B|⌉, `min_steps`) local steps ([`crate::local`]) on
//! minibatches drawn uniformly (with replacement) from D_t with scale N_t/|B| (the whole
//! D_t when |B| ≥ N_t), and `final_steps` more at the last checkpoint; the Adam step
//! decays geometrically from `lr_hyper` to `lr_hyper_final` over all steps; then L_i* is the collapsed
//! bound of D_t at the current θ_i (exact, from the statistics: spec gap #10), and, if the
//! trajectory is kept, the belief is refitted warm (Alg. 4). The final belief uses the
//! bounds on all N samples.
//!
//! Initialisation: for every kernel `init_candidates` initial points ([`crate::init`]) are
//! scored by their collapsed bound on the first min(N, 512) samples of the stream and the
//! best `starts` are optimised; the start with the best final bound is kept.
//!
//! Pruning (Alg. 6): the K̃ kernels of highest weight are kept; q(g̃) starts from the
//! marginal of q(g) on them and is refitted on their bounds; their weights are q*(k̃).
//!
//! Components: the kept kernels at their learned θ with inducing inputs Z (k-means with
//! `inducing` centres; the selection's Z when the sizes agree), statistics of all N
//! samples folded in time order, then refactorised exactly.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::belief::{Belief, BeliefMode, discrete_weights};
use crate::component::Component;
use crate::config::ValidConfig;
use crate::ensemble::Ensemble;
use crate::init::{self, DataSummary};
use crate::kernel::KernelSpec;
use crate::kmeans::kmeans;
use crate::linalg::{cholesky_in_place, solve_lower};
use crate::local::{Batch, LocalFit};
use crate::rng::Rng;
use crate::scaler::Scaler;
use crate::stats::{Factor, Stats};

/// What the offline phase found for one candidate kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelReport {
    /// Canonical expression.
    pub expr: String,
    /// L_i*: the collapsed bound on all N samples at the learned θ (summed over outputs).
    pub bound: f64,
    /// Weight q*(k_i) in the full space.
    pub weight: f64,
    /// Learned log-parameters (kernel's, then ln s²).
    pub psi: Vec<f64>,
    /// Local steps whose factorisation failed (skipped).
    pub failed_steps: usize,
}

/// Weights of all kernels at one checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Samples used so far N_t.
    pub samples: usize,
    /// q*(k_i) for every kernel, in config order.
    pub weights: Vec<f64>,
}

/// The result of the offline phase, apart from the components.
#[derive(Debug, Clone, PartialEq)]
pub struct OfflineReport {
    /// Every candidate, in config order.
    pub kernels: Vec<KernelReport>,
    /// Belief trajectory (empty unless `trajectory`).
    pub trajectory: Vec<Checkpoint>,
    /// Indices of the kept kernels, highest weight first.
    pub kept: Vec<usize>,
    /// Weights of the kept kernels after the pruned refit (same order).
    pub kept_weights: Vec<f64>,
    /// Wall time, s.
    pub seconds: f64,
    /// Samples used N.
    pub samples: usize,
}

/// Everything the online model needs.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Frozen standardisation.
    pub scaler: Scaler,
    /// Components of the kept kernels, highest weight first.
    pub components: Vec<Component>,
    /// The belief over the kept kernels (after the pruned refit).
    pub belief: Belief,
    /// Its weights.
    pub weights: Vec<f64>,
    /// The report.
    pub report: OfflineReport,
    /// RNG state to continue with online.
    pub rng: Rng,
}

/// Why the offline phase stopped without a result.
#[derive(Debug, Clone, PartialEq)]
pub enum OfflineError {
    /// The model is being destroyed.
    Cancelled,
    /// Something numerical failed everywhere (message).
    Failed(String),
}

impl std::fmt::Display for OfflineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OfflineError::Cancelled => f.write_str("offline phase cancelled"),
            OfflineError::Failed(m) => write!(f, "offline phase failed: {m}"),
        }
    }
}

/// Compile every configured kernel.
pub fn compile_kernels(cfg: &ValidConfig) -> Result<Vec<KernelSpec>, String> {
    let dims = |b| cfg.base_dims.of(b);
    cfg.kernels
        .iter()
        .map(|e| KernelSpec::compile(e, cfg.input_dim, &dims))
        .collect()
}

/// L_K = chol(K_uu + jitter·mean diag) for `z` (M×d). **Allocates.**
pub fn inducing_factor(
    spec: &KernelSpec,
    psi: &[f64],
    z: &[f64],
    jitter_rel: f64,
) -> Result<Vec<f64>, String> {
    let d = spec.dim();
    let m = z.len() / d;
    let prep = spec.prepare(&psi[..spec.n_params()]);
    let mut k = vec![0.0; m * m];
    let mut mean_diag = 0.0;
    for i in 0..m {
        for j in 0..=i {
            let v = prep.value(&z[i * d..(i + 1) * d], &z[j * d..(j + 1) * d]);
            k[i * m + j] = v;
            k[j * m + i] = v;
        }
        mean_diag += k[i * m + i];
    }
    let jitter = jitter_rel * (mean_diag / m.max(1) as f64).max(1e-12);
    for i in 0..m {
        k[i * m + i] += jitter;
    }
    cholesky_in_place(&mut k, m).map_err(|e| format!("{}: K_uu {e:?}", spec.expr()))?;
    Ok(k)
}

/// The collapsed bound of the n samples (`x` n×d standardised, `y` n×p standardised)
/// for `spec` at `psi` with inducing inputs `z`; −∞ if a factorisation fails.
pub fn collapsed_bound(
    spec: &KernelSpec,
    psi: &[f64],
    z: &[f64],
    x: &[f64],
    y: &[f64],
    p: usize,
    jitter_rel: f64,
) -> f64 {
    let d = spec.dim();
    let m = z.len() / d;
    let Ok(lk) = inducing_factor(spec, psi, z, jitter_rel) else {
        return f64::NEG_INFINITY;
    };
    let prep = spec.prepare(&psi[..spec.n_params()]);
    let s2 = psi[spec.n_params()].exp();
    let mut stats = Stats::new(m, p);
    let mut v = vec![0.0; m];
    let n = x.len() / d;
    for i in 0..n {
        let xi = &x[i * d..(i + 1) * d];
        for (j, vj) in v.iter_mut().enumerate() {
            *vj = prep.value(&z[j * d..(j + 1) * d], xi);
        }
        solve_lower(&lk, m, &mut v);
        stats.add(&v, prep.diag(xi), &y[i * p..(i + 1) * p], 1.0);
    }
    let mut factor = Factor::new(m, p);
    let mut col = vec![0.0; m];
    match factor.refactor(&stats, s2, &mut col) {
        Ok(()) => factor.bound(&stats, s2),
        Err(_) => f64::NEG_INFINITY,
    }
}

/// One kernel's search: its starts and their RNGs.
struct KernelSearch {
    starts: Vec<LocalFit>,
    rng: Rng,
    bound: f64,
    best: usize,
}

/// Run the offline phase on n raw samples (`x` n×d, `y` n×p row-major; `t_order` is
/// their arrival order, i.e. the buffers as collected). `cancel` stops it early.
///
/// One generator seeded with `cfg.seed` serves, in this order, the data summary, the
/// shuffle, the selection's k-means, every belief fit and the online k-means (each kernel's
/// minibatches have their own), so the steps below must keep their order.
pub fn run(
    cfg: &ValidConfig,
    x: &[f64],
    y: &[f64],
    cancel: &AtomicBool,
) -> Result<Selection, OfflineError> {
    let start_time = Instant::now();
    let d = cfg.input_dim;
    let n = x.len() / d;
    let scaler = Scaler::fit(
        x,
        y,
        d,
        cfg.output_dim,
        cfg.standardize_inputs,
        cfg.center_targets,
    );
    let (xs, ys) = standardise(&scaler, x, y, cfg);
    let mut rng = Rng::new(cfg.seed);
    let summary = data_summary(cfg, &scaler, &xs, &mut rng);
    let specs = compile_kernels(cfg).map_err(OfflineError::Failed)?;
    let (sx, sy) = shuffled_stream(cfg, &xs, &ys, &mut rng);
    let z_sel = kmeans(&xs, d, cfg.inducing_select, 25, &mut rng);
    let data = StreamData {
        z: &z_sel,
        x: &sx,
        y: &sy,
    };
    let mut searches = initial_searches(cfg, &specs, &summary, &data, cancel)?;
    let fitted = run_checkpoints(cfg, &mut searches, &data, cancel, &mut rng)?;
    let ell: Vec<f64> = searches.iter().map(|s| s.bound).collect();
    if ell.iter().all(|l| !l.is_finite()) {
        return Err(OfflineError::Failed(
            "no kernel has a finite local bound (every factorisation failed)".into(),
        ));
    }
    let pruned = prune(cfg, &ell, &fitted, &mut rng);

    // Online components.
    let z_online = if cfg.inducing == cfg.inducing_select {
        z_sel.clone()
    } else {
        kmeans(&xs, d, cfg.inducing, 25, &mut rng)
    };
    let components = online_components(cfg, &searches, &pruned.kept, &ell, &z_online, &xs, &ys)?;
    let kernels = kernel_reports(&searches, &specs, &ell, &fitted.weights);
    Ok(Selection {
        scaler,
        components,
        belief: pruned.belief,
        weights: pruned.weights.clone(),
        report: OfflineReport {
            kernels,
            trajectory: fitted.trajectory,
            kept: pruned.kept,
            kept_weights: pruned.weights,
            seconds: start_time.elapsed().as_secs_f64(),
            samples: n,
        },
        rng,
    })
}

/// The warm-up model that predicts while the offline phase has not run yet (the
/// `warmup_samples` key): the first candidate kernel at its base initial parameters
/// (seeded from `hyper` when given, `init.rs`), the scaler and up to `inducing` inducing
/// inputs (k-means) of the warm-up samples `x` (n×d raw) and `y` (n×p raw), those samples
/// folded in. No search, no belief: one component of weight 1. **Allocates**; runs on the
/// background thread.
pub fn warmup(cfg: &ValidConfig, x: &[f64], y: &[f64]) -> Result<Ensemble, String> {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let n = x.len() / d;
    if n < 2 {
        return Err(format!("warm-up needs at least 2 samples, found {n}"));
    }
    let scaler = Scaler::fit(x, y, d, p, cfg.standardize_inputs, cfg.center_targets);
    let (xs, ys) = standardise(&scaler, x, y, cfg);
    let mut rng = Rng::new(cfg.seed);
    let summary = data_summary(cfg, &scaler, &xs, &mut rng);
    let spec = compile_kernels(cfg)?
        .into_iter()
        .next()
        .ok_or_else(|| "no candidate kernel".to_string())?;
    let psi = init::base_psi(&spec, &summary);
    let z = kmeans(&xs, d, cfg.inducing.min(n), 25, &mut rng);
    let lk = inducing_factor(&spec, &psi, &z, cfg.local.jitter_rel)?;
    let mut comp = Component::new(spec, psi, z, lk, p).map_err(|e| e.0)?;
    fold_in_order(cfg, &mut comp, &xs, &ys)?;
    Ok(Ensemble::new(scaler, vec![comp], vec![1.0]))
}

/// Folds the standardised samples into `comp` in time order, then refactorises it exactly.
fn fold_in_order(
    cfg: &ValidConfig,
    comp: &mut Component,
    xs: &[f64],
    ys: &[f64],
) -> Result<(), String> {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    for s in 0..xs.len() / d {
        comp.update_std(
            &xs[s * d..(s + 1) * d],
            &ys[s * p..(s + 1) * p],
            1.0,
            cfg.forgetting,
        );
    }
    comp.refactor().map_err(|e| e.0)
}

/// The raw samples standardised by `scaler`: (x n×d, y n×p).
fn standardise(scaler: &Scaler, x: &[f64], y: &[f64], cfg: &ValidConfig) -> (Vec<f64>, Vec<f64>) {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let n = x.len() / d;
    let mut xs = vec![0.0; n * d];
    let mut ys = vec![0.0; n * p];
    for i in 0..n {
        scaler.x_into(&x[i * d..(i + 1) * d], &mut xs[i * d..(i + 1) * d]);
        scaler.y_into(&y[i * p..(i + 1) * p], &mut ys[i * p..(i + 1) * p]);
    }
    (xs, ys)
}

/// The summary the initial points are drawn around, seeded from the configured
/// hyperparameters when there are some.
fn data_summary(cfg: &ValidConfig, scaler: &Scaler, xs: &[f64], rng: &mut Rng) -> DataSummary {
    let d = cfg.input_dim;
    let mut summary = DataSummary::of(xs, d, rng);
    if let Some(h) = &cfg.hyper {
        // Seed: lengthscales averaged over outputs in standardised units; noise likewise.
        let mut ell = vec![0.0; d];
        let mut noise = 0.0;
        for (o, e) in h.iter().enumerate() {
            for (j, l) in ell.iter_mut().enumerate() {
                *l += e.lengthscales[j] / scaler.x_scale[j] / h.len() as f64;
            }
            noise +=
                (e.sigma_n * e.sigma_n) / (scaler.y_scale[o] * scaler.y_scale[o]) / h.len() as f64;
        }
        summary.seed_lengthscales = Some(ell);
        summary.seed_noise_var = Some(noise.max(cfg.local.min_noise_var));
    }
    summary
}

/// The stream: a seeded shuffle of the standardised samples.
fn shuffled_stream(
    cfg: &ValidConfig,
    xs: &[f64],
    ys: &[f64],
    rng: &mut Rng,
) -> (Vec<f64>, Vec<f64>) {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let n = xs.len() / d;
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let mut sx = vec![0.0; n * d];
    let mut sy = vec![0.0; n * p];
    for (pos, &i) in order.iter().enumerate() {
        sx[pos * d..(pos + 1) * d].copy_from_slice(&xs[i * d..(i + 1) * d]);
        sy[pos * p..(pos + 1) * p].copy_from_slice(&ys[i * p..(i + 1) * p]);
    }
    (sx, sy)
}

/// The selection's inducing inputs and the shuffled stream (standardised).
struct StreamData<'a> {
    z: &'a [f64],
    x: &'a [f64],
    y: &'a [f64],
}

/// Every kernel's search: its `init_candidates` initial points scored on the first
/// min(N, 512) samples of the stream, the best `starts` of them kept, and its own RNG.
fn initial_searches(
    cfg: &ValidConfig,
    specs: &[KernelSpec],
    summary: &DataSummary,
    data: &StreamData<'_>,
    cancel: &AtomicBool,
) -> Result<Vec<KernelSearch>, OfflineError> {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let n_score = (data.x.len() / d).min(512);
    let mut searches: Vec<KernelSearch> = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(OfflineError::Cancelled);
        }
        let cands = init::candidates(spec, summary, cfg.init_candidates);
        let mut scored: Vec<(f64, Vec<f64>)> = cands
            .into_iter()
            .map(|psi| {
                let b = collapsed_bound(
                    spec,
                    &psi,
                    data.z,
                    &data.x[..n_score * d],
                    &data.y[..n_score * p],
                    p,
                    cfg.local.jitter_rel,
                );
                (b, psi)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let starts = scored
            .into_iter()
            .take(cfg.starts)
            .map(|(_, psi)| LocalFit::new(spec.clone(), psi, cfg.inducing_select, p, cfg.lr_hyper))
            .collect();
        searches.push(KernelSearch {
            starts,
            rng: Rng::new(
                cfg.seed
                    .wrapping_add(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1)),
            ),
            bound: f64::NEG_INFINITY,
            best: 0,
        });
    }
    Ok(searches)
}

/// The belief over all kernels after the checkpoints, its weights and the trajectory
/// (empty unless `trajectory`).
struct FittedBelief {
    belief: Belief,
    weights: Vec<f64>,
    trajectory: Vec<Checkpoint>,
}

/// The checkpoints: at each, every kernel's local steps on D_t, then (when the trajectory
/// is kept, and at the last) the belief refitted on the bounds.
fn run_checkpoints(
    cfg: &ValidConfig,
    searches: &mut [KernelSearch],
    data: &StreamData<'_>,
    cancel: &AtomicBool,
    rng: &mut Rng,
) -> Result<FittedBelief, OfflineError> {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let (n, k) = (data.x.len() / d, searches.len());
    let mut belief = Belief::prior(cfg.prior_mean.clone(), &cfg.belief);
    let mut weights = vec![1.0 / k as f64; k];
    let mut trajectory = Vec::new();
    let mut belief_fitted = false;
    let chunk = n.div_ceil(cfg.checkpoints);
    let iters_of = |t: usize| {
        let new = (t * chunk).min(n) - ((t - 1) * chunk).min(n);
        (((cfg.epochs * new as f64) / cfg.batch_size as f64).ceil() as usize).max(cfg.min_steps)
    };
    let total_steps: usize = (1..=cfg.checkpoints).map(iters_of).sum::<usize>() + cfg.final_steps;
    let mut steps_done = 0usize;
    for t in 1..=cfg.checkpoints {
        let n_t = (t * chunk).min(n);
        let last = t == cfg.checkpoints || n_t == n;
        let iters = iters_of(t) + if last { cfg.final_steps } else { 0 };
        let ctx = StepContext {
            cfg,
            z: data.z,
            x: &data.x[..n_t * d],
            y: &data.y[..n_t * p],
            iters,
            first_step: steps_done,
            total_steps,
            cancel,
        };
        steps_done += iters;
        for_each_kernel(searches, cfg.threads, &|s: &mut KernelSearch| {
            search_checkpoint(s, &ctx)
        });
        if cancel.load(Ordering::Relaxed) {
            return Err(OfflineError::Cancelled);
        }
        if cfg.trajectory || last {
            let ell: Vec<f64> = searches.iter().map(|s| s.bound).collect();
            form_weights(cfg, &mut belief, &ell, !belief_fitted, rng, &mut weights);
            belief_fitted = true;
            trajectory.push(Checkpoint {
                samples: n_t,
                weights: weights.clone(),
            });
        }
        if last {
            break;
        }
    }
    if !cfg.trajectory {
        trajectory.clear();
    }
    Ok(FittedBelief {
        belief,
        weights,
        trajectory,
    })
}

/// The kept kernels (highest weight first), their belief and weights.
struct Pruned {
    kept: Vec<usize>,
    belief: Belief,
    weights: Vec<f64>,
}

/// Alg. 6: keep the K̃ kernels of highest weight (ties by bound) among those with a finite
/// bound, and refit the belief restricted to them.
fn prune(cfg: &ValidConfig, ell: &[f64], fitted: &FittedBelief, rng: &mut Rng) -> Pruned {
    let weights = &fitted.weights;
    let mut ranked: Vec<usize> = (0..ell.len()).filter(|&i| ell[i].is_finite()).collect();
    ranked.sort_by(|&a, &b| {
        weights[b]
            .total_cmp(&weights[a])
            .then(ell[b].total_cmp(&ell[a]))
    });
    ranked.truncate(cfg.keep);
    let kept = ranked;
    let kept_ell: Vec<f64> = kept.iter().map(|&i| ell[i]).collect();
    let mut belief = fitted.belief.restrict(&kept, &cfg.belief);
    let mut kept_weights = vec![0.0; kept.len()];
    form_weights(cfg, &mut belief, &kept_ell, true, rng, &mut kept_weights);
    Pruned {
        kept,
        belief,
        weights: kept_weights,
    }
}

/// The kept kernels' components at their best start's θ with inducing inputs `z`, the
/// statistics of all N samples folded in time order, then refactorised exactly.
fn online_components(
    cfg: &ValidConfig,
    searches: &[KernelSearch],
    kept: &[usize],
    ell: &[f64],
    z: &[f64],
    xs: &[f64],
    ys: &[f64],
) -> Result<Vec<Component>, OfflineError> {
    let p = cfg.output_dim;
    let mut components = Vec::with_capacity(kept.len());
    for &i in kept {
        let search = &searches[i];
        let fit = &search.starts[search.best];
        let lk = inducing_factor(&fit.spec, &fit.psi, z, cfg.local.jitter_rel)
            .map_err(OfflineError::Failed)?;
        let mut comp = Component::new(fit.spec.clone(), fit.psi.clone(), z.to_vec(), lk, p)
            .map_err(|e| OfflineError::Failed(e.0))?;
        fold_in_order(cfg, &mut comp, xs, ys).map_err(OfflineError::Failed)?;
        comp.offline_bound = ell[i];
        // The offline samples are in L_i*; the prequential sum counts online samples only.
        comp.prequential = 0.0;
        components.push(comp);
    }
    Ok(components)
}

/// What the search found for every candidate kernel, in config order.
fn kernel_reports(
    searches: &[KernelSearch],
    specs: &[KernelSpec],
    ell: &[f64],
    weights: &[f64],
) -> Vec<KernelReport> {
    searches
        .iter()
        .zip(specs)
        .enumerate()
        .map(|(i, (s, spec))| KernelReport {
            expr: spec.expr().to_string(),
            bound: ell[i],
            weight: weights[i],
            psi: s.starts[s.best].psi.clone(),
            failed_steps: s.starts.iter().map(|f| f.failed_steps).sum(),
        })
        .collect()
}

/// Weights from local bounds: the logistic-normal fit (fresh: `belief_steps`, else the
/// warm `belief_steps_warm`) or the discrete alternative.
pub fn form_weights(
    cfg: &ValidConfig,
    belief: &mut Belief,
    ell: &[f64],
    fresh: bool,
    rng: &mut Rng,
    out: &mut [f64],
) {
    // A kernel whose bound is −∞ gets a very low finite value (it can never win).
    let top = ell
        .iter()
        .copied()
        .filter(|l| l.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let floor = if top.is_finite() { top - 1e6 } else { 0.0 };
    let clean: Vec<f64> = ell
        .iter()
        .map(|&l| if l.is_finite() { l } else { floor })
        .collect();
    match cfg.belief_mode {
        BeliefMode::LogisticNormal => {
            let steps = if fresh {
                cfg.belief_steps
            } else {
                cfg.belief_steps_warm
            };
            belief.fit(&clean, steps, &cfg.belief, rng);
            belief.probabilities(cfg.belief.posterior_samples, rng, out);
        }
        BeliefMode::Discrete { tau } => discrete_weights(&clean, tau, out),
    }
}

struct StepContext<'a> {
    cfg: &'a ValidConfig,
    z: &'a [f64],
    x: &'a [f64],
    y: &'a [f64],
    iters: usize,
    /// Global index of this checkpoint's first step and the total (for the step size).
    first_step: usize,
    total_steps: usize,
    cancel: &'a AtomicBool,
}

/// One checkpoint of one kernel: local steps on D_t for every start, then the bounds.
fn search_checkpoint(s: &mut KernelSearch, ctx: &StepContext<'_>) {
    let cfg = ctx.cfg;
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let n_t = ctx.x.len() / d;
    let b = cfg.batch_size.min(n_t);
    let full = b == n_t;
    let mut bx = vec![0.0; b * d];
    let mut by = vec![0.0; b * p];
    let decay = (cfg.lr_hyper_final / cfg.lr_hyper).ln() / ctx.total_steps.max(1) as f64;
    for fit in &mut s.starts {
        for k in 0..ctx.iters {
            if ctx.cancel.load(Ordering::Relaxed) {
                return;
            }
            fit.set_lr(cfg.lr_hyper * (decay * (ctx.first_step + k) as f64).exp());
            for j in 0..b {
                let i = if full { j } else { s.rng.below(n_t) };
                bx[j * d..(j + 1) * d].copy_from_slice(&ctx.x[i * d..(i + 1) * d]);
                by[j * p..(j + 1) * p].copy_from_slice(&ctx.y[i * p..(i + 1) * p]);
            }
            let jitter = fit.jitter(ctx.z, d, cfg.local.jitter_rel);
            let batch = Batch {
                z: ctx.z,
                x: &bx,
                y: &by,
                d,
                p,
                scale: n_t as f64 / b as f64,
                jitter,
            };
            fit.step(&batch, &cfg.local);
        }
    }
    let mut best = (f64::NEG_INFINITY, 0);
    for (i, fit) in s.starts.iter().enumerate() {
        let bound = collapsed_bound(
            &fit.spec,
            &fit.psi,
            ctx.z,
            ctx.x,
            ctx.y,
            p,
            cfg.local.jitter_rel,
        );
        if bound > best.0 || i == 0 {
            best = (bound, i);
        }
    }
    s.bound = best.0;
    s.best = best.1;
}

/// Apply `f` to every kernel, on `threads` scoped threads (kernels are independent).
fn for_each_kernel<F>(searches: &mut [KernelSearch], threads: usize, f: &F)
where
    F: Fn(&mut KernelSearch) + Sync,
{
    if threads <= 1 || searches.len() <= 1 {
        searches.iter_mut().for_each(f);
        return;
    }
    let per = searches.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for chunk in searches.chunks_mut(per) {
            scope.spawn(move || chunk.iter_mut().for_each(f));
        }
    });
}
