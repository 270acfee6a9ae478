//! gp_node: the library behind the `gp-node` binary.
//!
//! Boundaries (see `DESIGN.md` in the shared folder): `robot` knows rigid-body dynamics
//! and nothing of learning or ROS; the model crates know nothing of robots.
#![warn(missing_docs)]

pub mod app;
pub use gpn_control::{control, control_loop, learn};
pub mod eval;
/// Rigid-body dynamics (the `gpn_dynamics` crate).
pub use gpn_dynamics as robot;
/// The plugin host (the `gpn_plugin_host` crate).
pub use gpn_plugin_host as plugin_host;
pub mod ros;
/// The embedded simulator of the true robot (the `gpn_embedded_sim` crate).
pub use gpn_embedded_sim as embedded_sim;
pub mod simulate;
/// rerun logging off the control thread (the `gpn_viz` crate; a stub without the `rerun`
/// feature).
pub use gpn_viz as viz;
