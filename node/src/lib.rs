//! gp_node: the library behind the `gp-node` binary — the workspace's layers under one name.
//!
//! Each module is a crate of its own (see `ARCHITECTURE.md`); this library only re-exports
//! them, so that `gp_node::…` paths stay stable for the binary's commands (`cli/`), the
//! tests and the benches. Boundaries (see `DESIGN.md` in the shared folder): `robot` knows
//! rigid-body dynamics and nothing of learning or ROS; the model crates know nothing of
//! robots; `simulate` and `ros` never import each other.
#![warn(missing_docs)]

/// The application layer: parameters, schema and ranges, robot loader, model factory (the
/// `gpn_app` crate).
pub use gpn_app as app;
/// rosbag2 recordings: storage, compression, CDR (the `gpn_bag` crate).
pub use gpn_bag as bag;
/// The command line of the `gp-node` executable (and of the ROS 2 package's
/// `gp_learning_node`).
pub mod cli;
pub use gpn_control::{control, control_loop, learn};
/// Rigid-body dynamics (the `gpn_dynamics` crate).
pub use gpn_dynamics as robot;
/// The embedded simulator of the true robot (the `gpn_embedded_sim` crate).
pub use gpn_embedded_sim as embedded_sim;
/// `gp-node eval`: scoring a plugin on a recorded stream (the `gpn_eval` crate).
pub use gpn_eval as eval;
/// The plugin host (the `gpn_plugin_host` crate).
pub use gpn_plugin_host as plugin_host;
/// `gp-node learn`: a recording replayed through the node's loop and learner (the
/// `gpn_replay` crate).
pub use gpn_replay as replay;
/// `gp-node run`: the ROS 2 node's plant, reference, operations and publishers (the
/// `gpn_ros_io` crate; its DDS transport, `ros::run`, only with the `ros` feature).
pub use gpn_ros_io as ros;
/// `gp-node sim`: the learning control loop on the embedded simulator (the `gpn_sim_job`
/// crate).
pub use gpn_sim_job as simulate;
/// rerun logging off the control thread (the `gpn_viz` crate; a stub without the `rerun`
/// feature).
pub use gpn_viz as viz;
