//! Model resolution by plugin name for the evaluator: the plugin host's
//! [`gpn_plugin_host::create_model_in`] with [`EvalError`].
//!
//! Models are shared libraries loaded through the plugin host ([`gpn_plugin_host`]): the name
//! is looked up on a [`SearchPath`] (`--plugin-path`, `GPN_PLUGIN_PATH`, then the
//! executable's directory, where cargo builds `libgpn_skygp.so` next to `gp-node`), the
//! library's ABI is checked, and the model comes back as a [`PluginModel`] driven through
//! the `OnlineModel` trait like any in-process crate. There is no in-process fallback: a
//! name that is not found is an error listing the plugins that are. A name is never a path:
//! one is refused (names may come from the network; see [`SearchPath::find`]).
//!
//! [`PluginModel`]: gpn_plugin_host::PluginModel

use gpn_gp_core::model::OnlineModel;
use gpn_plugin_host::{PluginModel, SearchPath};
use serde_json::Value;

use super::EvalError;

/// Creates the model `name` from its JSON `config` for input dimension `d` and p outputs,
/// finding the plugin on the standard search path (no `--plugin-path` directories).
pub fn create_model(
    name: &str,
    config: &Value,
    d: usize,
    p: usize,
) -> Result<Box<dyn OnlineModel>, EvalError> {
    create_model_in(
        name,
        config,
        d,
        p,
        &SearchPath::standard(Vec::<&str>::new()),
    )
}

/// [`create_model`] with an explicit search path (e.g. with the `--plugin-path`
/// directories: `SearchPath::standard(dirs)`); [`gpn_plugin_host::create_model_in`] with
/// the evaluator's error.
pub fn create_model_in(
    name: &str,
    config: &Value,
    d: usize,
    p: usize,
    search: &SearchPath,
) -> Result<Box<dyn OnlineModel>, EvalError> {
    Ok(gpn_plugin_host::create_model_in(
        name, config, d, p, search,
    )?)
}

/// [`create_model_in`] returning the plugin model itself, so that the caller can also ask
/// it for [`PluginModel::describe`] (model-specific diagnostics) after the run.
pub fn create_plugin_model_in(
    name: &str,
    config: &Value,
    d: usize,
    p: usize,
    search: &SearchPath,
) -> Result<PluginModel, EvalError> {
    Ok(gpn_plugin_host::create_plugin_model_in(
        name, config, d, p, search,
    )?)
}
