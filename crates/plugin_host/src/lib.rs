//! The plugin host: finds model plugins by name, loads them (`libloading`), checks their
//! ABI, and wraps each model in a safe handle that implements
//! [`OnlineModel`](gpn_online_model::OnlineModel), so the evaluator and the control loop
//! drive a plugin exactly as they drive an in-process crate.
//!
//! Boundary: knows the ABI of `gpn_plugin_api` and the `OnlineModel` trait; knows nothing
//! of robots, ROS or the control law, nor of any particular model; from the learner
//! (`gpn_control::learn`) only the snapshot a model file stores. Hot swap (build and warm
//! off the control thread, adopt at a tick boundary) is built on top of this crate. The
//! node re-exports it as `gp_node::plugin_host`.
//!
//! - [`SearchPath`] — where plugins are looked for (`--plugin-path`, `GPN_PLUGIN_PATH`, the
//!   executable's directory) and how a name becomes a file (`lib<name>.so`…).
//! - [`Plugin`] — a loaded library whose table passed the checks (ABI version and table
//!   size first), with its [`PluginInfo`]; creates models from YAML or JSON config.
//! - [`PluginModel`] — one model; `Drop` destroys it; holds an `Arc` of its library.
//! - [`create_model_in`] — a model by plugin name: find, check the configuration, create.
//! - [`HostError`] — every failure, naming the plugin and ending with the path.
//!
//! ```no_run
//! use gpn_plugin_host::{Plugin, SearchPath};
//! use gpn_online_model::OnlineModel;
//! let search = SearchPath::standard(["./plugins"]);
//! let plugin = Plugin::find("skygp", &search)?;
//! let mut model = plugin.create("variant: fast\nhyper: {sigma_f: 1, sigma_n: 0.1, lengthscales: [1]}", 1, 1)?;
//! let (mut mean, mut var) = ([0.0], [0.0]);
//! model.predict(&[0.3], &mut mean, &mut var)?;
//! model.update(&[0.3], &[1.2], 0.0, &[0.01])?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Safety argument
//!
//! Loading a plugin runs foreign code with the node's privileges; nothing here can make an
//! arbitrary library safe, so the host trusts what it opens (a library is as trusted as a
//! crate linked in) and defends against *honest mistakes*:
//!
//! - **Wrong ABI**: the first read from a table is its 8-byte header, valid in every
//!   version; the rest is read only if `abi_version` matches and `struct_size` covers the
//!   version-1 table. Null function pointers and bad strings are refused at load time.
//! - **Lifetimes**: the table is copied into host memory at load; strings are copied out.
//!   The only pointers into the library that remain are its functions, and every holder of
//!   them ([`Plugin`], [`PluginModel`]) holds an `Arc` of the library, so it cannot be
//!   unloaded while any can still be called. A model is destroyed (by the plugin, joining
//!   its threads) before its `Arc` is released.
//! - **Arguments**: slices passed across have exactly the lengths the model was created
//!   with (checked on every call); outputs are exclusive borrows, so they never alias
//!   inputs; the `save` writer only appends to a vector the host owns.
//! - **Threads**: a model handle is `Send` but not `Sync`: one call at a time, from any
//!   thread, which is what the ABI promises plugins.
//! - **Failures**: a plugin never unwinds into the host (its shims catch panics); a status
//!   other than `OK` becomes an error carrying the plugin's `last_error` message, read
//!   immediately on the same thread; a `PANIC` poisons the model; a NaN or infinite
//!   prediction is an error, never a value.
//!
//! Every `unsafe` block carries its own `// SAFETY:` note relating it to these points.

#![warn(missing_docs)]

mod ament;
pub mod config;
mod config_page;
mod create;
mod error;
pub mod file;
mod instance;
mod library;
mod loaded;
pub mod process;
mod search;

pub use config_page::config_page;
pub use create::{create_model_in, create_plugin_model_in};
pub use error::{Available, HostError, Result};
pub use file::{ModelFile, ModelFileError, ModelFileHeader};
pub use instance::PluginModel;
pub use library::Plugin;
pub use loaded::PluginInfo;
pub use search::{ENV_VAR, SearchPath, name_of_file};
