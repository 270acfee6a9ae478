//! The slow path (spec §6.3): a few Adam steps on −ELBO/n over a copy of the window,
//! summed over outputs, for the shared ARD lengthscales, each output's s_f² and noise
//! multiplier κ (the action entries stay as the block path set them). It hands back the new
//! hyperparameters with G_C of the blocks it saw, keyed by block id, so the block path
//! installs them without recomputing n² kernel values.

use crate::error::RcagpError;
use crate::posterior::Problem;
use crate::train::{TrainOptions, train_with};

use super::engine::RefitResult;

/// A refit request: the window as a batch problem and the ids of its blocks in order.
#[derive(Debug, Clone)]
pub(crate) struct RefitJob {
    pub problem: Problem,
    pub block_ids: Vec<u64>,
    pub based_on: u64,
    pub opts: TrainOptions,
    /// Sanity box: each learned value must stay within [1/`box_factor`, `box_factor`] × its
    /// configured value, else the refit is discarded.
    pub reference: (Vec<f64>, Vec<f64>),
}

/// Lengthscales and outputscales further than this factor from their configured values
/// mark a refit as diverged.
pub(crate) const BOX_FACTOR: f64 = 100.0;

/// Runs the job. Errors (and diverged results) are reported, never applied.
pub(crate) fn run(mut job: RefitJob, cancel: &dyn Fn() -> bool) -> Result<RefitResult, RcagpError> {
    let (_, fitted) = train_with(&mut job.problem, &job.opts, cancel)?;
    let p = &job.problem;
    let within = |v: f64, r: f64| v.is_finite() && v > r / BOX_FACTOR && v < r * BOX_FACTOR;
    let (ref_ell, ref_sf2) = &job.reference;
    let ok_ell = p
        .lengthscales
        .iter()
        .zip(ref_ell)
        .all(|(&v, &r)| within(v, r));
    let ok_sf2 = p
        .outputs
        .iter()
        .zip(ref_sf2)
        .all(|((_, par), &r)| within(par.outputscale, r));
    let ok_kappa = p
        .outputs
        .iter()
        .all(|(_, par)| par.sigma2.is_finite() && par.sigma2 > 0.0 && par.sigma2 < 1e6);
    if !(ok_ell && ok_sf2 && ok_kappa) {
        return Err(RcagpError::Invalid(format!(
            "refit left the sanity box (×{BOX_FACTOR} of the configured values): lengthscales {:?}",
            p.lengthscales
        )));
    }
    Ok(RefitResult {
        ell: p.lengthscales.clone(),
        outputscale: p.outputs.iter().map(|(_, par)| par.outputscale).collect(),
        kappa: p.outputs.iter().map(|(_, par)| par.sigma2).collect(),
        // The committed blocks come first in the problem (the open block's singles after).
        gc: (0..job.block_ids.len())
            .flat_map(|i| (0..job.block_ids.len()).map(move |j| (i, j)))
            .map(|(i, j)| fitted.proj.gc[(i, j)])
            .collect(),
        block_ids: job.block_ids,
        based_on: job.based_on,
    })
}
