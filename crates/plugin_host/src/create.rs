//! A model by plugin name: find the plugin on a search path, check the configuration
//! against its schema and create the model. The one place that maps a name to a model;
//! the model factory of the jobs (`gpn_app`) and the evaluator (`gpn_eval`) both call it.

use gpn_online_model::OnlineModel;
use serde_json::Value;

use super::error::Result;
use super::instance::PluginModel;
use super::library::Plugin;
use super::search::SearchPath;

/// Creates the model `name` from its JSON `config` for input dimension `d` and `p` outputs,
/// finding the plugin on `search` (e.g. `SearchPath::standard(dirs)` with the
/// `--plugin-path` directories).
pub fn create_model_in(
    name: &str,
    config: &Value,
    d: usize,
    p: usize,
    search: &SearchPath,
) -> Result<Box<dyn OnlineModel>> {
    Ok(Box::new(create_plugin_model_in(
        name, config, d, p, search,
    )?))
}

/// [`create_model_in`] returning the plugin model itself, so that the caller can also ask
/// it for [`PluginModel::describe`] (model-specific diagnostics) after the run.
pub fn create_plugin_model_in(
    name: &str,
    config: &Value,
    d: usize,
    p: usize,
    search: &SearchPath,
) -> Result<PluginModel> {
    Plugin::find(name, search)?.create_json(config, d, p)
}
