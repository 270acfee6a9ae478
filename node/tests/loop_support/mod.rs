//! Shared by the control-loop and ROS-node tests: a model that knows the simulator's true
//! residual exactly, so a loop driven by it tracks (almost) perfectly.
#![allow(dead_code)] // each test file uses a subset

use gp_node::learn::ModelFactory;
use gp_node::robot::Model;
use gp_node::sim::{SimParams, SimState, Simulator};
use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel};

/// Predicts the simulator's true residual exactly (its own copy of the true robot).
pub struct ExactModel {
    sim: Simulator,
    state: SimState,
}

impl OnlineModel for ExactModel {
    fn input_dim(&self) -> usize {
        21
    }
    fn output_dim(&self) -> usize {
        7
    }
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.state.q.copy_from_slice(&x[..7]);
        self.state.v.copy_from_slice(&x[7..14]);
        self.sim
            .true_residual(&self.state, &x[14..], mean)
            .map_err(|e| ModelError::Other(e.to_string()))?;
        var.fill(1e-6);
        Ok(())
    }
    fn update(&mut self, _: &[f64], _: &[f64], _: f64, _: &[f64]) -> Result<(), ModelError> {
        Ok(())
    }
    fn stats(&self) -> ModelStats {
        ModelStats::default()
    }
}

/// A factory of [`ExactModel`]s for `robot` with the true robot of `sim`.
pub fn exact_factory(robot: &Model, sim: &SimParams) -> ModelFactory {
    let (robot, sim) = (robot.clone(), sim.clone());
    Box::new(move |_| {
        let model = ExactModel {
            sim: Simulator::new(&robot, &sim).map_err(|e| e.to_string())?,
            state: SimState::at_rest(&[0.0; 7]),
        };
        Ok(Box::new(model) as Box<dyn OnlineModel>)
    })
}
