//! Training by Adam on −F (spec A5): raw parameters through softplus,
//! ℓ = softplus(ρ_ℓ), s_f² = softplus(ρ_s), σ² = softplus(ρ_σ) + σ²_floor, and the action
//! entries s unconstrained.
//!
//! Raw vector layout: [ρ_ℓ (d, or 1 when isotropic), ρ_s (p), ρ_σ (p), s (n, only when the
//! actions are learned)]. A parameter group that is not learned is left out of the vector.

use crate::actions::Actions;
use crate::elbo;
use crate::error::RcagpError;
use crate::optim::{Adam, clip_global_norm, sigmoid, softplus, softplus_inv};
use crate::posterior::{Fitted, Problem};

/// What to learn and how.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    /// Adam steps.
    pub steps: usize,
    /// Adam learning rate (0.01 in the paper).
    pub lr: f64,
    /// One lengthscale per input (else one shared lengthscale).
    pub ard: bool,
    /// Learn the lengthscales.
    pub learn_lengthscales: bool,
    /// Learn each output's s_f².
    pub learn_outputscale: bool,
    /// Learn each output's σ² (noise multiplier).
    pub learn_noise: bool,
    /// Learn the action entries s (block actions only).
    pub learn_actions: bool,
    /// Divide the objective by n (GPyTorch's per-datum ELBO).
    pub per_datum: bool,
    /// Clip the raw gradient's global norm (2.0 in the paper's BO; none for UCI).
    pub clip_norm: Option<f64>,
    /// Floor added to σ² (1e−4).
    pub sigma2_floor: f64,
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            steps: 50,
            lr: 0.01,
            ard: true,
            learn_lengthscales: true,
            learn_outputscale: true,
            learn_noise: true,
            learn_actions: true,
            per_datum: false,
            clip_norm: None,
            sigma2_floor: 1e-4,
        }
    }
}

/// What a training run did.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainReport {
    /// F (not divided by n) before each step, then after the last one.
    pub objective: Vec<f64>,
}

/// The raw parameter vector of `problem` under `opts`.
pub fn raw_params(problem: &Problem, opts: &TrainOptions) -> Vec<f64> {
    let mut raw = Vec::new();
    if opts.learn_lengthscales {
        if opts.ard {
            raw.extend(problem.lengthscales.iter().map(|&l| softplus_inv(l)));
        } else {
            let mean = problem.lengthscales.iter().sum::<f64>() / problem.d.max(1) as f64;
            raw.push(softplus_inv(mean));
        }
    }
    if opts.learn_outputscale {
        raw.extend(
            problem
                .outputs
                .iter()
                .map(|(_, p)| softplus_inv(p.outputscale)),
        );
    }
    if opts.learn_noise {
        raw.extend(
            problem
                .outputs
                .iter()
                .map(|(_, p)| softplus_inv(p.sigma2 - opts.sigma2_floor)),
        );
    }
    if opts.learn_actions
        && let Actions::Block { s, .. } = &problem.actions
    {
        raw.extend_from_slice(s);
    }
    raw
}

/// Writes the raw vector back into `problem`'s natural parameters.
pub fn set_raw_params(problem: &mut Problem, raw: &[f64], opts: &TrainOptions) {
    let mut k = 0;
    if opts.learn_lengthscales {
        if opts.ard {
            for l in problem.lengthscales.iter_mut() {
                *l = softplus(raw[k]);
                k += 1;
            }
        } else {
            let l = softplus(raw[k]);
            problem.lengthscales.iter_mut().for_each(|v| *v = l);
            k += 1;
        }
    }
    if opts.learn_outputscale {
        for (_, p) in problem.outputs.iter_mut() {
            p.outputscale = softplus(raw[k]);
            k += 1;
        }
    }
    if opts.learn_noise {
        for (_, p) in problem.outputs.iter_mut() {
            p.sigma2 = softplus(raw[k]) + opts.sigma2_floor;
            k += 1;
        }
    }
    if opts.learn_actions
        && let Actions::Block { s, .. } = &mut problem.actions
    {
        let n = s.len();
        s.copy_from_slice(&raw[k..k + n]);
    }
}

/// F and ∂F/∂raw at `raw` (the problem is updated to `raw`). Not divided by n.
pub fn raw_value_and_gradient(
    problem: &mut Problem,
    raw: &[f64],
    opts: &TrainOptions,
) -> Result<(f64, Vec<f64>), RcagpError> {
    set_raw_params(problem, raw, opts);
    let fitted = problem.fit()?;
    let want_s = opts.learn_actions && matches!(problem.actions, Actions::Block { .. });
    let (f, g) = elbo::value_and_gradient(problem, &fitted, want_s)?;
    let mut out = Vec::with_capacity(raw.len());
    let mut k = 0;
    if opts.learn_lengthscales {
        if opts.ard {
            for &gl in &g.lengthscales {
                out.push(gl * sigmoid(raw[k]));
                k += 1;
            }
        } else {
            out.push(g.lengthscales.iter().sum::<f64>() * sigmoid(raw[k]));
            k += 1;
        }
    }
    if opts.learn_outputscale {
        for &gs in &g.outputscale {
            out.push(gs * sigmoid(raw[k]));
            k += 1;
        }
    }
    if opts.learn_noise {
        for &gn in &g.sigma2 {
            out.push(gn * sigmoid(raw[k]));
            k += 1;
        }
    }
    if want_s {
        out.extend_from_slice(&g.s);
    }
    Ok((f, out))
}

/// Runs `opts.steps` Adam steps on −F (or −F/n) and leaves the learned parameters in
/// `problem`.
pub fn train(problem: &mut Problem, opts: &TrainOptions) -> Result<TrainReport, RcagpError> {
    train_with(problem, opts, &|| false).map(|(report, _)| report)
}

/// [`train`] that also returns the posterior at the learned parameters and stops early
/// (keeping the parameters reached) when `cancel()` turns true between steps.
pub fn train_with(
    problem: &mut Problem,
    opts: &TrainOptions,
    cancel: &dyn Fn() -> bool,
) -> Result<(TrainReport, Fitted), RcagpError> {
    let mut raw = raw_params(problem, opts);
    let mut adam = Adam::new(raw.len(), opts.lr);
    let scale = if opts.per_datum {
        1.0 / problem.n().max(1) as f64
    } else {
        1.0
    };
    let mut objective = Vec::with_capacity(opts.steps + 1);
    for _ in 0..opts.steps {
        if cancel() {
            break;
        }
        let (f, g) = raw_value_and_gradient(problem, &raw, opts)?;
        objective.push(f);
        let mut loss_grad: Vec<f64> = g.iter().map(|v| -v * scale).collect();
        if loss_grad.iter().any(|v| !v.is_finite()) {
            return Err(RcagpError::Invalid(
                "non-finite ELBO gradient during training".into(),
            ));
        }
        if let Some(c) = opts.clip_norm {
            clip_global_norm(&mut loss_grad, c);
        }
        adam.step(&mut raw, &loss_grad);
    }
    set_raw_params(problem, &raw, opts);
    let fitted = problem.fit()?;
    objective.push(elbo::value(problem, &fitted)?);
    Ok((TrainReport { objective }, fitted))
}
