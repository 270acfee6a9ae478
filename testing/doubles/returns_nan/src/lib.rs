//! Failure double for the plugin host: `predict` reports success but writes NaN into the
//! mean (config `{"nan_in": "mean"}`, the default) or the variance (`"variance"`) of the
//! last output. Exports the live-model counter.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
//!
//! ```
//! use gpn_online_model::OnlineModel;
//! use gpn_plugin_api::Plugin;
//! let mut m = gpn_double_returns_nan::ReturnsNan::create(&gpn_double_common::serde_json::json!({}), 1, 2).unwrap();
//! let (mut mean, mut var) = ([0.0; 2], [0.0; 2]);
//! m.predict(&[0.0], &mut mean, &mut var).unwrap();
//! assert!(mean[1].is_nan() && var[1].is_finite());
//! ```
#![warn(missing_docs)]

use gpn_double_common::Mean;
use gpn_double_common::serde_json::Value;
use gpn_online_model::{ModelError, ModelStats, OnlineModel};
use gpn_plugin_api::Plugin;

/// Predictions with a NaN in them.
pub struct ReturnsNan {
    inner: Mean,
    nan_in_variance: bool,
}

impl OnlineModel for ReturnsNan {
    fn input_dim(&self) -> usize {
        self.inner.input_dim()
    }
    fn output_dim(&self) -> usize {
        self.inner.output_dim()
    }
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.inner.predict(x, mean, var)?;
        let target = if self.nan_in_variance { var } else { mean };
        if let Some(last) = target.last_mut() {
            *last = f64::NAN;
        }
        Ok(())
    }
    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        self.inner.update(x, y, t_secs, noise_var)
    }
    fn stats(&self) -> ModelStats {
        self.inner.stats()
    }
}

impl Plugin for ReturnsNan {
    fn create(config: &Value, input_dim: usize, output_dim: usize) -> Result<Self, ModelError> {
        let nan_in_variance = match config.get("nan_in").and_then(Value::as_str) {
            None | Some("mean") => false,
            Some("variance") => true,
            Some(other) => {
                return Err(ModelError::Config(format!(
                    "nan_in must be \"mean\" or \"variance\", got \"{other}\""
                )));
            }
        };
        Ok(ReturnsNan {
            inner: Mean::new(input_dim, output_dim),
            nan_in_variance,
        })
    }
    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        self.inner.save_state()
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        self.inner.load_state(bytes)
    }
}

gpn_plugin_api::export_plugin!(
    ReturnsNan,
    name = "returns_nan",
    version = env!("CARGO_PKG_VERSION"),
    description = "Failure double: predict returns NaN",
);
gpn_double_common::export_counters!();
