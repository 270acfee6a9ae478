//! LoG-GP, the locally growing random tree of Gaussian processes (Lederer, Ordóñez Conejo,
//! Maier, Xiao, Umlauft and Hirche, "Gaussian Process-Based Real-Time Learning for Safety
//! Critical Applications", ICML 2021): a baseline model plugin. The input space is divided
//! by a binary tree whose leaves each hold an exact GP over at most N̄ points; a full leaf
//! splits in two along its widest dimension, with a linear blend across an overlap region;
//! a prediction mixes the few leaves reached with non-zero probability.
//!
//! The spec, with the reference implementation's errors and our choices, is
//! `docs/specs/loggp.md`. Modules: `config`/`schema` (keys), `tree` (splits, routing,
//! active leaves), `split` (where a leaf is cut), `leaf` (one local GP), `model` (the
//! [`OnlineModel`](gpn_gp_core::model::OnlineModel)), `persist` (state bytes), `plugin`
//! (the C ABI export).
#![warn(missing_docs)]

pub mod config;
pub mod leaf;
pub mod model;
mod persist;
mod plugin;
pub mod schema;
pub mod split;
pub mod tree;

pub use model::{Counters, LogGp};
