//! Failure double for the plugin host: `create` always fails with `INVALID_CONFIG`, after
//! building (and so having to release) a partial model. Exports the live-model counter.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
//!
//! ```
//! use gpn_plugin_api::Plugin;
//! let err = gpn_double_fails_create::FailsCreate::create(&gpn_double_common::serde_json::json!({}), 1, 1).err();
//! assert!(err.is_some());
//! assert_eq!(gpn_double_common::live_models(), 0);
//! ```
#![warn(missing_docs)]

use gpn_double_common::serde_json::Value;
use gpn_double_common::{Fault, Faulty};
use gpn_online_model::ModelError;

/// Refuses every configuration, once the model is already built.
#[derive(Debug)]
pub struct RefusesConfig;

impl Fault for RefusesConfig {
    fn from_config(_config: &Value) -> Result<Self, ModelError> {
        Err(ModelError::Config(
            "fails_create refuses every configuration (failure double)".into(),
        ))
    }
}

/// A model that can never be created.
pub type FailsCreate = Faulty<RefusesConfig>;

gpn_plugin_api::export_plugin!(
    FailsCreate,
    name = "fails_create",
    version = env!("CARGO_PKG_VERSION"),
    description = "Failure double: create always fails",
);
gpn_double_common::export_counters!();
