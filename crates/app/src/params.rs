//! The node's parameter file: ROS 2 parameter YAML (`gp_learning_node: ros__parameters: …`;
//! the one top-level key may also be `/**` or a node's full name) holding the robot, model,
//! control, learning, simulator and run settings. Every section and key is optional;
//! defaults are the main job's default scenario.

use std::path::{Path, PathBuf};

use gpn_control::control::ControlParams;
use gpn_control::learn::LearnParams;
use gpn_embedded_sim::SimParams;

use super::reference::ReferenceParams;
use super::ros_params::RosParams;

/// The robot description.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RobotParams {
    /// URDF file; a relative path is taken from the parameter file's folder (or the working
    /// directory without a file). Empty (the default): `gp-node sim` uses the built-in Panda,
    /// `gp-node run` reads the `robot_description` topic.
    pub urdf: PathBuf,
    /// The movable joints the node controls (URDF names); empty: all. The others are locked
    /// and merged into their parent body (a reduced model, as Pinocchio's
    /// `buildReducedModel`), at `locked_positions` or 0 clamped to their limits.
    pub joints: Vec<String>,
    /// Positions of locked joints, `"name=value"` (rad, m for prismatic joints).
    pub locked_positions: Vec<String>,
}

impl Default for RobotParams {
    fn default() -> Self {
        Self {
            urdf: PathBuf::new(),
            joints: Vec::new(),
            locked_positions: Vec::new(),
        }
    }
}

impl RobotParams {
    /// The joints kept and the positions of the locked ones; an entry of `locked_positions`
    /// that is not `name=number` is an error naming it.
    pub fn selection(&self) -> Result<gpn_dynamics::JointSelection, String> {
        let locked_at = self
            .locked_positions
            .iter()
            .map(|entry| {
                entry
                    .split_once('=')
                    .and_then(|(name, value)| {
                        Some((name.trim().to_owned(), value.trim().parse::<f64>().ok()?))
                    })
                    .ok_or_else(|| {
                        format!("robot.locked_positions: {entry:?} is not \"joint=value\"")
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(gpn_dynamics::JointSelection {
            controlled: self.joints.clone(),
            locked_at,
        })
    }
}

/// The learning model.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelParams {
    /// Plugin name.
    pub plugin: String,
    /// Plugin configuration (JSON object; YAML in the file). A `hyper` key fixes the
    /// hyperparameters (raw N·m targets) and skips the fit.
    pub config: serde_json::Value,
    /// Directories searched for plugins first (then `GPN_PLUGIN_PATH`, then beside the
    /// executable); a relative one is taken from the parameter file's folder. Set at start
    /// only (the file or `--plugin-path`), never over the network.
    pub plugin_path: Vec<PathBuf>,
    /// Where the plugin's model runs.
    pub isolation: Isolation,
    /// A model file to start from (`gp-node learn`, `~/save_model`): adopted before the
    /// first fit, its plugin and configuration replacing `plugin` and `config`. Empty: learn
    /// from scratch. A relative path is taken from the parameter file's folder.
    pub file: PathBuf,
}

/// Where a plugin's model runs (`model.isolation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In the node's process: the fastest; a plugin that crashes ends the node.
    #[default]
    InProcess,
    /// In a process of its own (`gp-node plugin-server`, shared memory): a plugin that
    /// crashes ends its process and the node falls back to the nominal law; each call
    /// crosses processes (docs/results/plugin-process.md).
    Process,
}

impl Default for ModelParams {
    fn default() -> Self {
        Self {
            plugin: "skygp".into(),
            config: serde_json::json!({"variant": "dense"}),
            plugin_path: Vec::new(),
            isolation: Isolation::InProcess,
            file: PathBuf::new(),
        }
    }
}

impl ModelParams {
    /// Selects `plugin` (the command line's `--plugin`): another plugin than the configured
    /// one starts from its own defaults (`config` = `{}`), since a configuration is one
    /// plugin's (another refuses its keys); the same plugin keeps its configuration. Returns
    /// whether the configuration was reset.
    pub fn select_plugin(&mut self, plugin: &str) -> bool {
        if plugin == self.plugin {
            return false;
        }
        self.plugin = plugin.to_owned();
        self.config = serde_json::json!({});
        true
    }

    /// Puts `dirs` (the command line's `--plugin-path`) before `plugin_path`.
    pub fn search_first(&mut self, dirs: Vec<PathBuf>) {
        let from_file = std::mem::take(&mut self.plugin_path);
        self.plugin_path = dirs.into_iter().chain(from_file).collect();
    }
}

/// One model of the swap cycle.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwapTarget {
    /// Plugin name.
    pub plugin: String,
    /// Its configuration (without `hyper`: the running model's hyperparameters are used).
    #[serde(default)]
    pub config: serde_json::Value,
}

/// The simulated run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunParams {
    /// Duration, s.
    pub duration_s: f64,
    /// Reference trajectory.
    pub reference: ReferenceParams,
    /// Pace the run to the wall clock at the tick rate (background work then takes real
    /// time, as on a robot); otherwise run as fast as possible.
    pub realtime: bool,
    /// Hot-swap the model every this many seconds of the learned run (0: never).
    pub swap_every_s: f64,
    /// Models to cycle through after the configured one (plugin + config).
    pub swap_to: Vec<SwapTarget>,
    /// Announce the scenario's payload step to the learner when it happens, as a gripper's
    /// "payload changed" event would (`~/payload_changed` on the ROS node).
    pub announce_changes: bool,
}

impl Default for RunParams {
    fn default() -> Self {
        Self {
            duration_s: 30.0,
            reference: ReferenceParams::default(),
            realtime: false,
            swap_every_s: 0.0,
            swap_to: Vec::new(),
            announce_changes: false,
        }
    }
}

/// Everything under `ros__parameters`.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NodeParams {
    /// `gp-node run`: the node's clock is ROS time from `/clock` (ROS 2's `use_sim_time`).
    pub use_sim_time: bool,
    /// Robot description.
    pub robot: RobotParams,
    /// Learning model.
    pub model: ModelParams,
    /// Control law, bounds, supervisor.
    pub control: ControlParams,
    /// Learning pipeline.
    pub learn: LearnParams,
    /// Embedded simulator (the true robot).
    pub sim: SimParams,
    /// Simulated run.
    pub run: RunParams,
    /// The ROS 2 node (`gp-node run`).
    pub ros: RosParams,
    /// The control thread's scheduling and memory locking (`gp-node run`, `gp-node sim
    /// --realtime`).
    pub realtime: super::RealtimeParams,
}

/// Why a parameter file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    /// The file could not be read.
    #[error("cannot read parameter file: {error}: {}", path.display())]
    Io {
        /// OS error.
        error: std::io::Error,
        /// The file.
        path: PathBuf,
    },
    /// Not valid YAML, or a key/value is wrong.
    #[error("invalid parameter file: {message}: {}", path.display())]
    Invalid {
        /// The parser's message (names the key and line).
        message: String,
        /// The file.
        path: PathBuf,
    },
}

/// `text`'s parameters over those of the default file (`config/sim_default.yaml`): a key
/// absent from `text` has the default file's value. `model.config` is the plugin's and is
/// taken whole: from `text` when it names the plugin or its configuration, else the default.
fn with_default_file_values(text: &str) -> Result<NodeParams, String> {
    fn inner(text: &str) -> Result<serde_json::Value, String> {
        let value: serde_json::Value = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        Ok(value
            .as_object()
            .and_then(|nodes| nodes.values().next())
            .and_then(|node| node.get("ros__parameters"))
            .filter(|parameters| !parameters.is_null())
            .cloned()
            .unwrap_or_else(|| serde_json::json!({})))
    }
    fn merge(base: &mut serde_json::Value, over: serde_json::Value) {
        match (base, over) {
            (serde_json::Value::Object(base), serde_json::Value::Object(over)) => {
                for (key, value) in over {
                    match base.get_mut(&key) {
                        Some(slot) => merge(slot, value),
                        None => {
                            base.insert(key, value);
                        }
                    }
                }
            }
            (slot, value) => *slot = value,
        }
    }
    let mut merged = inner(super::DEFAULT_PARAMS_YAML)?;
    let user = inner(text)?;
    let model = user.get("model");
    let own_plugin = model.is_some_and(|m| m.get("plugin").is_some() || m.get("config").is_some());
    if own_plugin && let Some(model) = merged.get_mut("model").and_then(|m| m.as_object_mut()) {
        model.insert("config".into(), serde_json::json!({}));
    }
    merge(&mut merged, user);
    serde_json::from_value(merged).map_err(|e| e.to_string())
}

/// The file's one top-level key: `gp_learning_node` (what this project writes), `/**` or a
/// node's full name (what `ros2 param dump` writes). It is not matched against the node's
/// name: the file is given to this node (`--params`), whatever the node is called.
type Wrapper = std::collections::BTreeMap<String, Inner>;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Inner {
    #[serde(rename = "ros__parameters")]
    ros_parameters: NodeParams,
}

impl NodeParams {
    /// Reads a parameter file; resolves a relative URDF path against the file's folder.
    pub fn from_file(path: &Path) -> Result<Self, ParamsError> {
        let text = std::fs::read_to_string(path).map_err(|error| ParamsError::Io {
            error,
            path: path.to_owned(),
        })?;
        let mut params = Self::from_yaml(&text).map_err(|message| ParamsError::Invalid {
            message,
            path: path.to_owned(),
        })?;
        if params.robot.urdf.is_relative()
            && !params.robot.urdf.as_os_str().is_empty()
            && let Some(dir) = path.parent()
        {
            params.robot.urdf = dir.join(&params.robot.urdf);
        }
        if params.model.file.is_relative()
            && !params.model.file.as_os_str().is_empty()
            && let Some(dir) = path.parent()
        {
            params.model.file = dir.join(&params.model.file);
        }
        if let Some(dir) = path.parent() {
            for plugin_dir in &mut params.model.plugin_path {
                if plugin_dir.is_relative() {
                    *plugin_dir = dir.join(&*plugin_dir);
                }
            }
        }
        Ok(params)
    }

    /// Parses the YAML text of a parameter file; every number must lie in its range
    /// ([`super::param_ranges`]).
    pub fn from_yaml(text: &str) -> Result<Self, String> {
        let wrapper: Wrapper = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        let keys: Vec<String> = wrapper.keys().cloned().collect();
        let mut nodes = wrapper.into_values();
        let (Some(inner), None) = (nodes.next(), nodes.next()) else {
            return Err(format!(
                "a parameter file holds one node's parameters under one key \
                 (`gp_learning_node:`, `/**:` or the node's full name, then `ros__parameters:`); \
                 this one has {} top-level keys {keys:?}",
                keys.len()
            ));
        };
        // Parsed strictly first (errors name the line); then the keys it leaves out take the
        // default file's values, not the structs' defaults (which are the libraries').
        let mut params = inner.ros_parameters;
        params.check_ranges()?;
        if text != super::DEFAULT_PARAMS_YAML {
            params = with_default_file_values(text)?;
            params.check_ranges()?;
        }
        Ok(params)
    }

    /// Checks every number against its range (after a change from the command line, say).
    pub fn check_ranges(&self) -> Result<(), String> {
        let json = serde_json::to_value(self).map_err(|e| e.to_string())?;
        super::param_ranges::check_json(&json)
    }

    /// The YAML text of these parameters, in the parameter-file layout.
    pub fn to_yaml(&self) -> Result<String, String> {
        let value = serde_json::json!({"gp_learning_node": {"ros__parameters": self}});
        serde_norway::to_string(&value).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::NodeParams;

    #[test]
    fn the_top_level_key_may_be_any_one_node_key() {
        let default = crate::DEFAULT_PARAMS_YAML;
        assert!(
            default.starts_with("gp_learning_node:") || default.contains("\ngp_learning_node:")
        );
        let want = NodeParams::from_yaml(default).expect("the default file");
        for key in ["\"/**\"", "/arm1/arm_learner", "arm_learner"] {
            let text = default.replacen("gp_learning_node:", &format!("{key}:"), 1);
            let params = NodeParams::from_yaml(&text).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(params.to_yaml(), want.to_yaml(), "{key}");
        }
    }

    #[test]
    fn a_key_left_out_has_the_default_files_value() {
        let default = NodeParams::from_yaml(crate::DEFAULT_PARAMS_YAML).expect("default");
        let empty = NodeParams::from_yaml("gp_learning_node:\n  ros__parameters: {}\n")
            .expect("an empty file");
        assert_eq!(empty.to_yaml(), default.to_yaml());
        let one = NodeParams::from_yaml(
            "gp_learning_node:\n  ros__parameters:\n    learn:\n      fit_max_points: 40\n",
        )
        .expect("one key");
        assert_eq!(one.learn.fit_max_points, 40);
        assert_eq!(one.learn.fit_samples, default.learn.fit_samples);
        assert_eq!(one.model.config, default.model.config);
        assert!(one.robot.urdf.as_os_str().is_empty(), "the built-in robot");
        // Another plugin named: its configuration is the file's (here none), not SkyGP's.
        let other = NodeParams::from_yaml(
            "gp_learning_node:\n  ros__parameters:\n    model:\n      plugin: rcagp\n",
        )
        .expect("another plugin");
        assert_eq!(other.model.config, serde_json::json!({}));
        // Strict parsing still names a wrong key.
        let err = NodeParams::from_yaml(
            "gp_learning_node:\n  ros__parameters:\n    learn:\n      fit_max_pionts: 40\n",
        )
        .expect_err("misspelt key");
        assert!(err.contains("fit_max_pionts"), "{err}");
    }

    #[test]
    fn two_node_keys_or_none_are_refused() {
        let two = "a:\n  ros__parameters: {}\nb:\n  ros__parameters: {}\n";
        let err = NodeParams::from_yaml(two).expect_err("two keys");
        assert!(err.contains("2 top-level keys"), "{err}");
        let err = NodeParams::from_yaml("{}").expect_err("no key");
        assert!(err.contains("0 top-level keys"), "{err}");
        let err = NodeParams::from_yaml("gp_learning_node:\n  ros__params: {}\n")
            .expect_err("misspelt ros__parameters");
        assert!(err.contains("ros__params"), "{err}");
    }
}
