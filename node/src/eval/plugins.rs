//! Model resolution by plugin name.
//!
//! For now the models are linked in and resolved in-process; the plugin host will replace
//! [`create_model`] (the one place that maps names to models) with shared-library loading.

use gpn_gp_core::model::OnlineModel;
use serde_json::Value;

use super::EvalError;

/// Names [`create_model`] knows.
pub const AVAILABLE: &[&str] = &["skygp"];

/// Creates the model `name` from its JSON `config` for input dimension `d` and p outputs.
/// An unknown name is an error listing [`AVAILABLE`].
pub fn create_model(
    name: &str,
    config: &Value,
    d: usize,
    p: usize,
) -> Result<Box<dyn OnlineModel>, EvalError> {
    match name {
        "skygp" => Ok(Box::new(
            gpn_skygp::SkyGp::from_json(config, d, p).map_err(|e| EvalError::ModelCreate {
                plugin: name.into(),
                source: e,
            })?,
        )),
        _ => Err(EvalError::UnknownPlugin {
            name: name.into(),
            available: AVAILABLE.join(", "),
        }),
    }
}
