//! gpn_plugin_api: the versioned C ABI through which gp-learning-node loads learning models
//! as shared libraries, the glue that exports a Rust model through it, and (in
//! `include/gpn_plugin.h`) the same ABI for C and C++ authors.
//!
//! Boundary: this crate is the plugin side of the contract. It knows the model trait
//! (`gpn_online_model::OnlineModel`) and nothing of robots, ROS or how a host finds and
//! loads libraries (that is `gp_node::plugin_host`). No feature flags.
//!
//! # The ABI (version 1)
//!
//! A plugin exports one symbol, [`ENTRY_SYMBOL`] (`gpn_plugin_entry`), a function with no
//! arguments returning a pointer to a static [`PluginTable`]. The table begins with
//! `abi_version` ([`ABI_VERSION`]) and `struct_size` (the table's size as the plugin was
//! compiled), which a host checks before reading anything else; then the model's name,
//! version and description as pointer + length UTF-8 strings ([`StrRef`]); then the
//! functions `create`, `destroy`, `update`, `predict`, `stats`, `save`, `load` and
//! `last_error` (types in [`abi`]), and, added at the end within version 1, the optional
//! `describe` (model-specific diagnostics as a JSON object) and then `config_schema` (the
//! plugin's configuration keys with type, default, unit and meaning; [`config_schema`]).
//! Every call that can fail returns a [`status`] code;
//! the message of the last failure on the calling thread comes from `last_error`, bounded
//! by the caller's buffer and cut at a character boundary. `save` streams the state to a
//! host-supplied writer callback, so the host owns the bytes. Within a major version the
//! table only grows at its end.
//!
//! # Writing a plugin in Rust
//!
//! Implement [`Plugin`] (construction from JSON and the state round trip) on a type that
//! implements `OnlineModel`, set `crate-type = ["cdylib", "rlib"]`, and invoke
//! [`export_plugin!`] once:
//!
//! ```ignore
//! gpn_plugin_api::export_plugin!(
//!     MyModel,
//!     name = "my_model",
//!     version = env!("CARGO_PKG_VERSION"),
//!     description = "Bayesian linear regression per output",
//! );
//! ```
//!
//! The generated shims ([`shim`]) check pointers, run the model under `catch_unwind`, turn
//! errors and panics into status codes and messages, and poison a model that panicked. A
//! plugin must be built with `panic = "unwind"` (the default) for that to work.
#![warn(missing_docs)]

pub mod abi;
pub mod config_schema;
mod export;
pub mod last_error;
mod panic_hook;
mod plugin;
pub mod shim;
pub mod status;

pub use abi::{
    ABI_VERSION, ENTRY_SYMBOL, ModelHandle, PluginStats, PluginTable, StrRef, TABLE_SIZE,
    TABLE_SIZE_MIN, TableHeader,
};
pub use config_schema::{ConfigKey, ConfigSchema, KeyCondition, KeyType};
pub use plugin::Plugin;
/// The JSON crate whose `Value` [`Plugin::create`] receives.
pub use serde_json;
