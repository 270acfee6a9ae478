//! What both jobs build from the parameters: the robot model and the model factory.

use gpn_control::learn::{Learner, ModelFactory};
use gpn_dynamics::{Model, RobotError};
use gpn_online_model::OnlineModel;
use std::time::Duration;

use gpn_plugin_host::process::{ProcessModel, ProcessOptions};
use gpn_plugin_host::{ModelFile, Plugin, SearchPath};

use super::params::{Isolation, NodeParams};

/// The plugin search path of a parameter set: `model.plugin_path`, then `GPN_PLUGIN_PATH`,
/// then beside the executable ([`SearchPath::standard`]).
pub fn plugin_search(params: &NodeParams) -> SearchPath {
    SearchPath::standard(&params.model.plugin_path)
}

/// Builds the model factory for `plugin`, found on `search`: merges the fitted `"hyper"`
/// into the plugin config and creates a model of the dimensions asked (off the control
/// thread), in the node's process.
pub fn model_factory(
    search: &SearchPath,
    plugin: &str,
    config: &serde_json::Value,
) -> ModelFactory {
    hosted_model_factory(&ModelHost::InProcess, search, plugin, config)
}

/// Where the models of a run are created (`model.isolation`).
#[derive(Debug, Clone)]
pub enum ModelHost {
    /// In the node's process.
    InProcess,
    /// Each in a plugin process.
    Process(ProcessOptions),
}

impl ModelHost {
    /// The host `params` ask for. `call_timeout`: how long the control thread waits for a
    /// plugin process's answer (on a robot, the supervisor's budget; in the simulator, where
    /// the simulated robot waits for the model, long). The server is this executable
    /// (`gp-node plugin-server`), at the control thread's real-time priority.
    pub fn of(params: &NodeParams, call_timeout: Duration) -> Result<Self, String> {
        match params.model.isolation {
            Isolation::InProcess => Ok(ModelHost::InProcess),
            Isolation::Process => Ok(ModelHost::Process(ProcessOptions {
                server: std::env::current_exe().map_err(|e| {
                    format!("model.isolation process: cannot find this executable ({e})")
                })?,
                call_timeout,
                create_timeout: Duration::from_secs(60),
                priority: (params.realtime.thread_priority > 0)
                    .then_some(params.realtime.thread_priority),
            })),
        }
    }
}

/// [`model_factory`] creating each model where `host` says.
pub fn hosted_model_factory(
    host: &ModelHost,
    search: &SearchPath,
    plugin: &str,
    config: &serde_json::Value,
) -> ModelFactory {
    let plugin = plugin.to_owned();
    let config = config.clone();
    let search = search.clone();
    let host = host.clone();
    Box::new(
        move |hyper: &serde_json::Value,
              d: usize,
              p: usize|
              -> Result<Box<dyn OnlineModel>, String> {
            let mut cfg = config.clone();
            if let Some(obj) = cfg.as_object_mut() {
                obj.insert("hyper".into(), hyper.clone());
            }
            match &host {
                ModelHost::InProcess => {
                    gpn_plugin_host::create_model_in(&plugin, &cfg, d, p, &search)
                        .map_err(|e| e.to_string())
                }
                ModelHost::Process(options) => {
                    // Only the file is looked up here: the library is loaded, checked and
                    // configured in the plugin process.
                    let library = search.find(&plugin).map_err(|e| e.to_string())?;
                    let model = ProcessModel::spawn(options, &library, &cfg.to_string(), d, p)?;
                    Ok(Box::new(model) as Box<dyn OnlineModel>)
                }
            }
        },
    )
}

/// Checks every model configuration of a parameter set (`model.config`, each
/// `run.swap_to` entry) against the schema its plugin declares, so that a mistyped key
/// fails at start-up, naming the nearest key, rather than when the first model is built
/// after the first fit. Ranges and relations between keys stay the plugin's to check.
pub fn check_model_configs(params: &NodeParams) -> Result<(), String> {
    let search = plugin_search(params);
    let swaps = params.run.swap_to.iter().map(|t| (&t.plugin, &t.config));
    for (plugin, config) in
        std::iter::once((&params.model.plugin, &params.model.config)).chain(swaps)
    {
        Plugin::find(plugin, &search)
            .and_then(|found| found.check_config(config))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The configuration the model runs with: the plugin's defaults (its configuration schema)
/// with `model.config`'s keys over them.
pub fn effective_model_config(params: &NodeParams) -> Result<serde_json::Value, String> {
    let plugin =
        Plugin::find(&params.model.plugin, &plugin_search(params)).map_err(|e| e.to_string())?;
    Ok(plugin.effective_config(&params.model.config))
}

/// `model.file` of `params`, read, with `model.plugin` and `model.config` set to the
/// file's, so that the run's later fits and swaps continue with the model it starts from.
/// None without a file.
pub fn read_start_model(params: &mut NodeParams) -> Result<Option<ModelFile>, String> {
    if params.model.file.as_os_str().is_empty() {
        return Ok(None);
    }
    let file = ModelFile::read(&params.model.file).map_err(|e| format!("model.file: {e}"))?;
    params.model.plugin = file.header.plugin.clone();
    params.model.config = file.header.config.clone();
    Ok(Some(file))
}

/// Hands the model of `model.file` (if set) to `learner` to start from: read and built here,
/// off the control thread (the plugin and its state loaded on `host`), adopted by the loop at
/// its first ticks. Call [`read_start_model`] first, so that the plugin and configuration are
/// the file's. Returns what it started from, for the log.
pub fn start_from_model_file(
    learner: &mut Learner,
    params: &NodeParams,
    host: &ModelHost,
) -> Result<Option<String>, String> {
    let path = &params.model.file;
    if path.as_os_str().is_empty() {
        return Ok(None);
    }
    let file = ModelFile::read(path).map_err(|e| format!("model.file: {e}"))?;
    // Read again here (the run's API carries parameters, not files): a file replaced since
    // [`read_start_model`] set the run's plugin and configuration is refused, not mixed in.
    if file.header.plugin != params.model.plugin || file.header.config != params.model.config {
        return Err(format!(
            "model.file: {} changed since it was read at start (its plugin or configuration \
             is no longer the run's); start again",
            path.display()
        ));
    }
    let process = match host {
        ModelHost::InProcess => None,
        ModelHost::Process(options) => Some(options),
    };
    let inputs = params.learn.input_layout(learner.nv());
    let ready = file
        .build_in(&plugin_search(params), inputs, path, process)
        .map_err(|e| format!("model.file: {e}"))?;
    learner
        .start_from(Box::new(ready))
        .map_err(|why| format!("model.file: {}", why.message()))?;
    let h = &file.header;
    Ok(Some(format!(
        "{} {} ({} samples learned) from {}",
        h.plugin,
        h.plugin_version,
        h.samples_seen,
        path.display()
    )))
}

/// Loads the robot of a parameter set: the built-in Panda when `robot.urdf` is empty (`gp-node
/// sim`; `gp-node run` reads the `robot_description` topic then, [`load_robot_description`]).
/// Every movable joint gets an effort limit, from `control.effort_limits_nm` or else from the
/// URDF; a movable joint without one is an error naming it
/// ([`Model::from_urdf_file_with_effort_limits`]).
pub fn load_robot(params: &NodeParams) -> Result<Model, RobotError> {
    if params.robot.urdf.as_os_str().is_empty() {
        load_robot_description(params, super::DEFAULT_URDF, "built-in urdf/panda.urdf")
    } else {
        Model::from_urdf_file_selected(
            &params.robot.urdf,
            params.control.given_effort_limits_nm(),
            &selection(params, &params.robot.urdf.display().to_string())?,
        )
    }
}

/// The joint selection of `robot.joints` and `robot.locked_positions`.
fn selection(
    params: &NodeParams,
    source: &str,
) -> Result<gpn_dynamics::JointSelection, RobotError> {
    params
        .robot
        .selection()
        .map_err(|reason| RobotError::InvalidArgument {
            argument: "robot.locked_positions".into(),
            reason,
            file: source.to_owned(),
        })
}

/// Loads the robot from a URDF text (`source` names it in errors: a file, a topic), with the
/// effort limits of [`load_robot`].
pub fn load_robot_description(
    params: &NodeParams,
    urdf: &str,
    source: &str,
) -> Result<Model, RobotError> {
    Model::from_urdf_str_selected(
        urdf,
        source,
        params.control.given_effort_limits_nm(),
        &selection(params, source)?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_plugin_host::ModelFileHeader;

    fn model_file(plugin: &str) -> ModelFile {
        ModelFile {
            header: ModelFileHeader {
                plugin: plugin.to_owned(),
                plugin_version: "0.1.0".to_owned(),
                config: serde_json::json!({"blocks": 8}),
                hyper: serde_json::json!([]),
                output_mean: vec![0.0],
                output_std: vec![1.0],
                input_dim: 3,
                friction_feature_velocity: 0.0,
                output_dim: 1,
                samples_seen: 10,
                accel_range: Vec::new(),
            },
            state: vec![1, 2, 3],
        }
    }

    /// The run's plugin and configuration come from the first read; a file replaced before
    /// the model is built from it is refused with the reason, not mixed into the run.
    #[test]
    fn a_model_file_replaced_after_it_was_read_is_refused() {
        let dir = std::env::temp_dir().join(format!("gpn_app_model_file_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("start.gpnmodel");
        model_file("first_plugin").write_atomic(&path).unwrap();
        let mut params = NodeParams::default();
        params.model.file = path.clone();
        let read = read_start_model(&mut params).unwrap().unwrap();
        assert_eq!(read.header.plugin, "first_plugin");
        assert_eq!(params.model.plugin, "first_plugin");
        assert_eq!(params.model.config, serde_json::json!({"blocks": 8}));

        model_file("second_plugin").write_atomic(&path).unwrap();
        let robot = load_robot(&params).unwrap();
        let factory: ModelFactory = Box::new(|_, _, _| Err("never created".to_owned()));
        let mut learner = Learner::new(&robot, params.learn.clone(), None, factory).unwrap();
        let err = start_from_model_file(&mut learner, &params, &ModelHost::InProcess).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(err.contains("changed since it was read"), "{err}");
    }
}
