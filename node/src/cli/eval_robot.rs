//! The robot a `gp-node eval` stream was recorded on (`--urdf`, `--joints`): the inverse
//! dynamics an `encoder-spike` contamination recomputes the targets with.

use std::path::Path;

use crate::eval::contaminate::InverseDynamics;
use gpn_dynamics::{Data, JointSelection, Model, rnea};

/// τ_RBD of a URDF model, as the node's learner forms its targets.
pub struct RobotDynamics {
    model: Model,
    data: Data,
}

impl RobotDynamics {
    /// Loads `urdf`, keeping the movable joints named in `joints` (comma-separated, in the
    /// stream's joint order as the URDF orders them; empty: every movable joint).
    pub fn load(urdf: &Path, joints: Option<&str>) -> anyhow::Result<Self> {
        let controlled: Vec<String> = joints
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let model = if controlled.is_empty() {
            Model::from_urdf_file(urdf)?
        } else {
            // Effort limits do not enter inverse dynamics: one placeholder for every joint
            // keeps a URDF without limits loadable.
            let selection = JointSelection {
                controlled,
                locked_at: Vec::new(),
            };
            Model::from_urdf_file_selected(urdf, &[1.0], &selection)?
        };
        let data = Data::new(&model);
        Ok(Self { model, data })
    }
}

impl InverseDynamics for RobotDynamics {
    fn dof(&self) -> usize {
        self.model.nv()
    }

    fn torque(&mut self, q: &[f64], v: &[f64], a: &[f64], tau: &mut [f64]) -> Result<(), String> {
        let out = rnea(&self.model, &mut self.data, q, v, a).map_err(|e| e.to_string())?;
        tau.copy_from_slice(out);
        Ok(())
    }
}
