//! [`Viz`] of a build without the `rerun` feature: the same API, and [`Viz::start`] says
//! "built without rerun".

use gpn_dynamics::Model;

use super::error::{Result, VizError};
use super::{VizSource, VizSummary, VizTarget, VizTick, VizUrdf, VizVisuals};

/// The rerun logger of a build without rerun: it cannot be started.
pub struct Viz {
    // Cannot be built outside this module: `start` always fails.
    visuals: VizVisuals,
}

impl Viz {
    /// Always [`VizError::NotBuilt`]: this build has no rerun.
    pub fn start(
        _target: &VizTarget,
        _robot: &Model,
        _urdf: Option<&VizUrdf<'_>>,
        _source: VizSource<'_>,
        _recording_name: &str,
    ) -> Result<Self> {
        Err(VizError::NotBuilt)
    }

    /// Does nothing (a `Viz` of this build cannot exist).
    pub fn log_tick(&mut self, _tick: &VizTick<'_>) {}

    /// Nothing was drawn.
    pub fn visuals(&self) -> &VizVisuals {
        &self.visuals
    }

    /// Always 0.
    pub fn dropped(&self) -> u64 {
        0
    }

    /// Nothing was logged.
    pub fn finish(self) -> Result<VizSummary> {
        Ok(VizSummary::default())
    }
}
