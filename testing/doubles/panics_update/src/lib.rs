//! Failure double for the plugin host: the first two `update`s work, every later one
//! panics (inside the plugin, where the export shim must catch it). Exports the live-model
//! counter.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
//!
//! ```
//! use gpn_online_model::OnlineModel;
//! use gpn_plugin_api::Plugin;
//! let mut m = gpn_double_panics_update::PanicsUpdate::create(&gpn_double_common::serde_json::json!({}), 1, 1).unwrap();
//! m.update(&[0.0], &[1.0], 0.0, &[0.1]).unwrap();
//! m.update(&[0.0], &[1.0], 0.0, &[0.1]).unwrap();
//! let third = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.update(&[0.0], &[1.0], 0.0, &[0.1])));
//! assert!(third.is_err());
//! ```
#![warn(missing_docs)]

use gpn_double_common::Mean;
use gpn_double_common::serde_json::Value;
use gpn_online_model::{ModelError, ModelStats, OnlineModel};
use gpn_plugin_api::Plugin;

/// Updates that work twice, then panic.
pub struct PanicsUpdate(Mean);

impl OnlineModel for PanicsUpdate {
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
        let seen = self.0.stats().samples_seen;
        assert!(
            seen < 2,
            "panics_update: deliberate panic in update after {seen} samples (failure double)"
        );
        self.0.update(x, y, t_secs, noise_var)
    }
    fn stats(&self) -> ModelStats {
        self.0.stats()
    }
}

impl Plugin for PanicsUpdate {
    fn create(config: &Value, input_dim: usize, output_dim: usize) -> Result<Self, ModelError> {
        Mean::create(config, input_dim, output_dim).map(PanicsUpdate)
    }
    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        self.0.save_state()
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        self.0.load_state(bytes)
    }
}

gpn_plugin_api::export_plugin!(
    PanicsUpdate,
    name = "panics_update",
    version = env!("CARGO_PKG_VERSION"),
    description = "Failure double: panics in update after two samples",
);
gpn_double_common::export_counters!();
