//! The trait a Rust model implements to become a plugin with [`crate::export_plugin!`].

use gpn_online_model::{ModelError, OnlineModel};

use crate::config_schema::ConfigSchema;

/// A streaming model that can be exported through the C ABI.
///
/// Update, predict and stats come from [`OnlineModel`]; this trait adds construction from
/// the JSON config and the learned-state round trip. None of these may assume which thread
/// calls them (the host creates a model on a background thread and then drives it from the
/// control thread), hence the `Send` bound inherited from `OnlineModel`.
///
/// ```
/// use gpn_online_model::{ModelError, ModelStats, OnlineModel};
/// use gpn_plugin_api::Plugin;
///
/// /// Predicts the running mean of each output.
/// struct RunningMean { d: usize, sum: Vec<f64>, n: u64 }
///
/// impl OnlineModel for RunningMean {
///     fn input_dim(&self) -> usize { self.d }
///     fn output_dim(&self) -> usize { self.sum.len() }
///     fn predict(&mut self, _x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
///         for (o, m) in mean.iter_mut().enumerate() { *m = self.sum[o] / self.n.max(1) as f64; }
///         var.fill(1.0);
///         Ok(())
///     }
///     fn update(&mut self, _x: &[f64], y: &[f64], _t: f64, _nv: &[f64]) -> Result<(), ModelError> {
///         self.sum.iter_mut().zip(y).for_each(|(s, y)| *s += y);
///         self.n += 1;
///         Ok(())
///     }
///     fn stats(&self) -> ModelStats { ModelStats { samples_seen: self.n, experts: 1, ..Default::default() } }
/// }
///
/// impl Plugin for RunningMean {
///     fn create(_config: &serde_json::Value, d: usize, p: usize) -> Result<Self, ModelError> {
///         Ok(RunningMean { d, sum: vec![0.0; p], n: 0 })
///     }
///     fn save_state(&self) -> Result<Vec<u8>, ModelError> {
///         Err(ModelError::Other("running_mean keeps no state worth saving".into()))
///     }
///     fn load_state(&mut self, _bytes: &[u8]) -> Result<(), ModelError> {
///         Err(ModelError::Other("running_mean keeps no state worth loading".into()))
///     }
/// }
///
/// // In the plugin crate's lib.rs (with `crate-type = ["cdylib", "rlib"]`):
/// // gpn_plugin_api::export_plugin!(RunningMean, name = "running_mean",
/// //     version = env!("CARGO_PKG_VERSION"), description = "Running mean of each output");
/// ```
pub trait Plugin: OnlineModel + Sized + 'static {
    /// Build a model for inputs of dimension `input_dim` and `output_dim` outputs from its
    /// configuration (`{}` when the user gave none). The model's `input_dim()` and
    /// `output_dim()` must then return exactly these.
    fn create(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError>;

    /// Serialise the learned state (everything `load_state` needs to reproduce predictions
    /// bit for bit on a model created with the same config and dimensions).
    fn save_state(&self) -> Result<Vec<u8>, ModelError>;

    /// Replace the learned state with bytes from `save_state`; on error the model must be
    /// left as it was (or at least usable).
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError>;

    /// Model-specific diagnostics as a JSON object (learned hyperparameters, a kernel
    /// belief, counters…), for tools such as `gp-node eval`. `None` (the default) means the
    /// model has nothing to report; the ABI's `describe` then returns `UNSUPPORTED`. Not
    /// called on the control thread; may allocate.
    fn describe(&self) -> Option<serde_json::Value> {
        None
    }

    /// The configuration keys this plugin accepts, with type, default, unit and meaning:
    /// what the host checks a configuration against before `create`, what the parameter
    /// loader starts from and what the documentation prints. `None` (the default) declares
    /// none; the ABI's `config_schema` then returns `UNSUPPORTED` and the plugin alone
    /// checks its configuration.
    fn config_schema() -> Option<ConfigSchema> {
        None
    }
}
