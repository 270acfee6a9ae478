//! Subcommands of the `gp-node` binary: argument parsing and printing only; the work is
//! done by the `gp_node` library and the model crates.

pub mod dynamics;
pub mod eval;
pub mod plugins;
pub mod run;
pub mod sim;
