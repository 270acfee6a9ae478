//! The counting allocator of the allocation tests (`testing/alloc_count`), under the name
//! these tests use, and the learning setup they share. Each test crate installs it:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: alloc_support::Counting = alloc_support::Counting;
//! ```

#![allow(unused_imports, dead_code)] // each test uses part of it

pub use gpn_alloc_count::*;

use gp_node::app::{self, DEFAULT_PARAMS_YAML, NodeParams};
use gp_node::learn::Learner;
use gp_node::robot::Model;

/// The default parameters with fixed hyperparameters (no fit to wait for), as the
/// allocation tests run them; `adjust` changes them before the robot and learner are built.
pub fn fixed_hyper_setup(adjust: impl FnOnce(&mut NodeParams)) -> (NodeParams, Model, Learner) {
    let mut params = gp_node::app::resolved_default_params().expect("parameters");
    // [q, q̇, q̈, friction features] of 7 joints.
    let lengthscales = [vec![0.5; 7], vec![2.0; 7], vec![20.0; 7], vec![1.0; 7]].concat();
    params.model.config["hyper"] =
        serde_json::json!({"sigma_f": 2.0, "sigma_n": 0.1, "lengthscales": lengthscales});
    adjust(&mut params);
    let robot = app::load_robot(&params).expect("robot");
    let factory = app::model_factory(
        &app::plugin_search(&params),
        &params.model.plugin,
        &params.model.config,
    );
    let hyper = params.model.config.get("hyper").cloned();
    let learner = Learner::new(&robot, params.learn.clone(), hyper, factory).expect("learner");
    (params, robot, learner)
}
