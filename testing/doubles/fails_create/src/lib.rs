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

use gpn_double_common::Mean;
use gpn_double_common::serde_json::Value;
use gpn_online_model::{ModelError, ModelStats, OnlineModel};
use gpn_plugin_api::Plugin;

/// A model that can never be created.
pub struct FailsCreate(Mean);

impl OnlineModel for FailsCreate {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }
    fn output_dim(&self) -> usize {
        self.0.output_dim()
    }
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.0.predict(x, mean, var)
    }
    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        self.0.update(x, y, t_secs, noise_var)
    }
    fn stats(&self) -> ModelStats {
        self.0.stats()
    }
}

impl Plugin for FailsCreate {
    fn create(_config: &Value, input_dim: usize, output_dim: usize) -> Result<Self, ModelError> {
        // Build the model first and fail afterwards, as a late validation step would: the
        // live-model counter shows that the error path releases it.
        let _model = Mean::new(input_dim, output_dim);
        Err(ModelError::Config(
            "fails_create refuses every configuration (failure double)".into(),
        ))
    }
    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        self.0.save_state()
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        self.0.load_state(bytes)
    }
}

gpn_plugin_api::export_plugin!(
    FailsCreate,
    name = "fails_create",
    version = env!("CARGO_PKG_VERSION"),
    description = "Failure double: create always fails",
);
gpn_double_common::export_counters!();
