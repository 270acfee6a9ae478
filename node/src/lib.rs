//! gp_node: the library behind the `gp-node` binary.
//!
//! Boundaries (see `DESIGN.md` in the shared folder): `robot` knows rigid-body dynamics
//! and nothing of learning or ROS; the model crates know nothing of robots.
#![warn(missing_docs)]

pub mod app;
pub use gpn_control::{control, control_loop, learn};
pub mod eval;
pub mod model;
/// Rigid-body dynamics (the `gpn_dynamics` crate).
pub use gpn_dynamics as robot;
pub mod ros;
/// The embedded simulator of the true robot (the `gpn_embedded_sim` crate).
pub use gpn_embedded_sim as sim;
pub mod simulate;
pub mod viz;
