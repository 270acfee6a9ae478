//! The application layer: what the sim job (`simulate`) and the ROS node (`ros`) share —
//! the one parameter set and its file ([`NodeParams`]), the parameter schema and ranges
//! checked at every boundary, and what is built from the parameters (the robot model, the
//! model factory). Both jobs sit on this layer and never import each other; it imports
//! neither. The node re-exports this crate as `gp_node::app`.

#![warn(missing_docs)]

mod factory;
pub mod param_ranges;
pub mod param_schema;
mod params;
pub mod realtime;
pub mod record;
mod reference;
pub mod robot_defaults;
pub mod ros_params;

pub use factory::{
    ModelHost, check_model_configs, effective_model_config, hosted_model_factory, load_robot,
    load_robot_description, model_factory, plugin_search, read_start_model, start_from_model_file,
};
pub use params::{
    Isolation, ModelParams, NodeParams, ParamsError, RobotParams, RunParams, SwapTarget,
};
pub use realtime::{RealtimeParams, RealtimeSetup};
pub use reference::ReferenceParams;
pub use robot_defaults::{DeriveError, DerivedDefaults, derive_defaults, derive_node_defaults};
pub use ros_params::{
    Mode, RosParams, TopicNames, TorqueSource, TrajectoryConstraints, WatchdogAction,
};

/// The default parameter file (`config/sim_default.yaml`), built in so that `gp-node sim`
/// runs from any directory.
pub const DEFAULT_PARAMS_YAML: &str = include_str!("../../../config/sim_default.yaml");

/// The default robot (`urdf/panda.urdf`), built in for the same reason.
pub const DEFAULT_URDF: &str = include_str!("../../../urdf/panda.urdf");

/// The built-in parameters with every value derived from the built-in robot filled in
/// (what `gp-node sim --print-params` prints): for code that assembles the loop's parts
/// itself rather than through `gp-node sim` or `gp-node run`, which derive on their own.
pub fn resolved_default_params() -> Result<NodeParams, String> {
    let mut params = NodeParams::from_yaml(DEFAULT_PARAMS_YAML)?;
    let robot = load_robot(&params).map_err(|e| e.to_string())?;
    derive_defaults(&robot, &mut params).map_err(|e| e.to_string())?;
    Ok(params)
}
