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

use gpn_double_common::serde_json::Value;
use gpn_double_common::{Fault, Faulty};
use gpn_online_model::ModelError;

/// Overwrites the last output's mean or variance with NaN after each prediction.
#[derive(Debug)]
pub struct NanInPrediction {
    in_variance: bool,
}

impl Fault for NanInPrediction {
    fn from_config(config: &Value) -> Result<Self, ModelError> {
        let in_variance = match config.get("nan_in").and_then(Value::as_str) {
            None | Some("mean") => false,
            Some("variance") => true,
            Some(other) => {
                return Err(ModelError::Config(format!(
                    "nan_in must be \"mean\" or \"variance\", got \"{other}\""
                )));
            }
        };
        Ok(NanInPrediction { in_variance })
    }

    fn after_predict(&self, mean: &mut [f64], var: &mut [f64]) {
        let target = if self.in_variance { var } else { mean };
        if let Some(last) = target.last_mut() {
            *last = f64::NAN;
        }
    }
}

/// Predictions with a NaN in them.
pub type ReturnsNan = Faulty<NanInPrediction>;

gpn_plugin_api::export_plugin!(
    ReturnsNan,
    name = "returns_nan",
    version = env!("CARGO_PKG_VERSION"),
    description = "Failure double: predict returns NaN",
);
gpn_double_common::export_counters!();
