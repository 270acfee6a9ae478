//! `RosParams`: the `ros:` section of the parameter file — node name and namespace, domain,
//! mode, topic names, QoS depth, the joint-state watchdog, what is learned from, publishing
//! rates, the service framing and the model directory. Units in the key names; defaults
//! documented per field.

use std::path::PathBuf;

/// What the node does with the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Run the compensated computed-torque law and publish its effort command.
    Control,
    /// Learn from another controller's commanded torques; publish estimates, never commands.
    Learn,
}

/// Where the torque of a learning sample (the torque that acted over the last interval)
/// comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TorqueSource {
    /// `effort` of `/joint_states` (a joint-torque sensor or the drive's estimate); when a
    /// message has no efforts, the commanded torque is used instead.
    Measured,
    /// The commanded torque: the node's own last command (control mode) or the other
    /// controller's (learn mode).
    Commanded,
}

pub use gpn_control::control_loop::WatchdogAction;

/// Topic names. A name starting with `/` is absolute; `~/x` is private to the node
/// (`<namespace>/<node_name>/x`); anything else is relative to the namespace.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TopicNames {
    /// sensor_msgs/JointState in (sensor-data QoS); joints matched by name.
    pub joint_states: String,
    /// trajectory_msgs/JointTrajectory reference in (reliable; a volatile and a
    /// transient-local reader, so that writers of either durability match).
    pub reference: String,
    /// std_msgs/Float64MultiArray effort command: published in control mode, read (the
    /// other controller's command) in learn mode. One value per joint, URDF joint order.
    pub command: String,
    /// gp_learning_node_msgs/ResidualEstimate out.
    pub residual: String,
    /// diagnostic_msgs/DiagnosticArray out.
    pub diagnostics: String,
    /// control_msgs/action/FollowJointTrajectory server (control mode).
    pub follow_joint_trajectory: String,
}

impl Default for TopicNames {
    fn default() -> Self {
        Self {
            joint_states: "/joint_states".into(),
            reference: "~/reference".into(),
            command: "/effort_controller/commands".into(),
            residual: "~/residual".into(),
            diagnostics: "/diagnostics".into(),
            follow_joint_trajectory: "~/follow_joint_trajectory".into(),
        }
    }
}

/// The `ros:` section.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RosParams {
    /// Node name.
    pub node_name: String,
    /// Namespace ("" or "/" for the root).
    pub namespace: String,
    /// DDS domain; negative: `$ROS_DOMAIN_ID`, else 0.
    pub domain_id: i32,
    /// Keep DDS traffic on this host (loopback only, unicast discovery); also switched on by
    /// `ROS_LOCALHOST_ONLY=1` or `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`.
    pub localhost_only: bool,
    /// `control` or `learn`.
    pub mode: Mode,
    /// Whether the node commands the robot (control mode). False (the default): it starts
    /// inactive — reading states, publishing diagnostics, commanding nothing — until set true
    /// (`ros2 param set <node> ros.active true`, or `--autostart`); activation starts from
    /// the torque that holds the arm at its current pose and holds that pose until a
    /// reference arrives. Setting it false commands the safe output (rate-limited) and then nothing.
    pub active: bool,
    /// Topic names.
    pub topics: TopicNames,
    /// Source of the learning torque.
    pub torque_source: TorqueSource,
    /// No valid joint state for this long → the watchdog's safe output, s.
    pub watchdog_timeout_s: f64,
    /// The safe output.
    pub watchdog_action: WatchdogAction,
    /// Publish `~/residual` every n-th tick (0: never).
    pub residual_every: u32,
    /// Period of `/diagnostics`, s (ROS convention: about 1 Hz).
    pub diagnostics_period_s: f64,
    /// The only directory `~/save_model` and `~/load_model` write and read: their `path` is
    /// a file name (or a relative path without `..`) inside it; absolute paths, `..` and
    /// symbolic links leading out are refused. Created on the first save. "" (the default):
    /// `$ROS_HOME/gp_learning_node/models`, where `$ROS_HOME` defaults to `~/.ros` as in
    /// ROS 2; a relative directory is relative to the node's working directory. Read-only
    /// (set at start), so that a peer cannot move it.
    pub model_dir: String,
    /// Log the node to rerun (set at start): "" (off, the default), `spawn` (a new viewer,
    /// the `rerun` executable on `PATH`), `connect` or `connect HOST:PORT` (a running viewer,
    /// default 127.0.0.1:9876), `save FILE.rrd` (a file). From a thread the control loop
    /// never waits on; ticks it cannot take are dropped and counted.
    pub rerun: String,
    /// Record the run to this rosbag2 folder (set at start; "" off, the default): MCAP and a
    /// Jazzy `metadata.yaml`, with the joint states and references received, and the
    /// command, residual estimates, diagnostics and events sent. The folder must not exist.
    /// Written from a thread the control loop never waits on; messages it cannot take are
    /// dropped and counted.
    pub record: String,
    /// Default tolerances of `FollowJointTrajectory` goals (a goal's own tolerances
    /// override them), as ros2_control's joint trajectory controller names them.
    pub constraints: TrajectoryConstraints,
    /// Goals may name a subset of the joints; the others hold the reference in force.
    pub allow_partial_joints_goal: bool,
    /// Rate of the action's feedback, Hz.
    pub action_monitor_rate: f64,
}

/// Default tolerances of `FollowJointTrajectory` goals (0: not checked). Per joint either as
/// arrays in the node's joint order (`trajectory`, `goal`) or, as ros2_control's joint
/// trajectory controller names them, `<joint>: {trajectory, goal}` (which win).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TrajectoryConstraints {
    /// How long after the trajectory's end the goal tolerances may take to be met, s
    /// (0: no limit).
    pub goal_time: f64,
    /// Largest joint speed at the goal, rad/s or m/s (unless the goal gives a velocity
    /// tolerance).
    pub stopped_velocity_tolerance: f64,
    /// Path position tolerance per joint (one value for all, or one per joint; []: none).
    pub trajectory: Vec<f64>,
    /// Goal position tolerance per joint (one value for all, or one per joint; []: none).
    pub goal: Vec<f64>,
    /// `<joint>: {trajectory, goal}`: the tolerances of one joint by name (every other key).
    #[serde(flatten)]
    pub joints: std::collections::BTreeMap<String, JointConstraint>,
}

/// One joint's tolerances by name (`constraints.<joint>.trajectory` / `.goal`).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JointConstraint {
    /// Path position tolerance (0: not checked).
    pub trajectory: f64,
    /// Goal position tolerance (0: not checked).
    pub goal: f64,
}

impl Default for TrajectoryConstraints {
    fn default() -> Self {
        // The joint trajectory controller's defaults.
        Self {
            goal_time: 0.0,
            stopped_velocity_tolerance: 0.01,
            trajectory: Vec::new(),
            goal: Vec::new(),
            joints: std::collections::BTreeMap::new(),
        }
    }
}

impl TrajectoryConstraints {
    /// The path and goal position tolerances of joint `j`, named `name`: its entry by name,
    /// else the arrays.
    pub fn of_joint(&self, j: usize, name: &str) -> (f64, f64) {
        if let Some(c) = self.joints.get(name) {
            return (c.trajectory, c.goal);
        }
        let pick = |v: &[f64]| match v {
            [] => 0.0,
            [one] => *one,
            many => many.get(j).copied().unwrap_or(0.0),
        };
        (pick(&self.trajectory), pick(&self.goal))
    }

    /// Checks the per-joint entries name joints of `joints`.
    pub fn check_joints(&self, joints: &[String]) -> Result<(), String> {
        match self.joints.keys().find(|k| !joints.contains(k)) {
            Some(unknown) => Err(format!(
                "ros.constraints.{unknown}: the robot has no joint {unknown:?} (joints: {})",
                joints.join(", ")
            )),
            None => Ok(()),
        }
    }

    /// `ros.constraints.<joint>.trajectory` or `.goal` as (joint, field).
    pub fn per_joint_key(name: &str) -> Option<(&str, &str)> {
        let rest = name.strip_prefix("ros.constraints.")?;
        let (joint, field) = rest.rsplit_once('.')?;
        (matches!(field, "trajectory" | "goal") && !joint.is_empty()).then_some((joint, field))
    }

    /// Sets `field` ("trajectory" or "goal") of `joint` to `value` (≥ 0, finite).
    pub fn set_per_joint(&mut self, joint: &str, field: &str, value: f64) -> Result<(), String> {
        if !(value.is_finite() && value >= 0.0) {
            return Err(format!(
                "ros.constraints.{joint}.{field} must be ≥ 0 (0: not checked), found {value}"
            ));
        }
        let entry = self.joints.entry(joint.to_owned()).or_default();
        match field {
            "trajectory" => entry.trajectory = value,
            "goal" => entry.goal = value,
            other => return Err(format!("ros.constraints.{joint}.{other}: not a tolerance")),
        }
        Ok(())
    }
}

impl Default for RosParams {
    fn default() -> Self {
        Self {
            node_name: "gp_learning_node".into(),
            namespace: String::new(),
            domain_id: -1,
            localhost_only: false,
            mode: Mode::Control,
            active: false,
            topics: TopicNames::default(),
            torque_source: TorqueSource::Measured,
            watchdog_timeout_s: 0.1,
            watchdog_action: WatchdogAction::HoldGravity,
            residual_every: 1,
            diagnostics_period_s: 1.0,
            model_dir: String::new(),
            rerun: String::new(),
            record: String::new(),
            constraints: TrajectoryConstraints::default(),
            allow_partial_joints_goal: false,
            action_monitor_rate: 20.0,
        }
    }
}

impl RosParams {
    /// Checks values a type cannot (names are checked by the transport when it builds them).
    pub fn check(&self) -> Result<(), String> {
        if !(self.watchdog_timeout_s.is_finite() && self.watchdog_timeout_s > 0.0) {
            return Err(format!(
                "ros.watchdog_timeout_s must be > 0, found {}",
                self.watchdog_timeout_s
            ));
        }
        if !(self.diagnostics_period_s.is_finite() && self.diagnostics_period_s > 0.0) {
            return Err(format!(
                "ros.diagnostics_period_s must be > 0, found {}",
                self.diagnostics_period_s
            ));
        }
        let c = &self.constraints;
        for (name, value) in [
            ("goal_time", c.goal_time),
            ("stopped_velocity_tolerance", c.stopped_velocity_tolerance),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("ros.constraints.{name} must be ≥ 0, found {value}"));
            }
        }
        for (joint, t) in &c.joints {
            for (field, value) in [("trajectory", t.trajectory), ("goal", t.goal)] {
                if !(value.is_finite() && value >= 0.0) {
                    return Err(format!(
                        "ros.constraints.{joint}.{field} must be ≥ 0 (0: not checked), found {value}"
                    ));
                }
            }
        }
        for (name, values) in [("trajectory", &c.trajectory), ("goal", &c.goal)] {
            if let Some(v) = values.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                return Err(format!(
                    "ros.constraints.{name} must be ≥ 0 (0: not checked), found {v}"
                ));
            }
        }
        if !(self.action_monitor_rate.is_finite() && self.action_monitor_rate > 0.0) {
            return Err(format!(
                "ros.action_monitor_rate must be > 0, found {}",
                self.action_monitor_rate
            ));
        }
        if self.domain_id > 232 {
            return Err(format!(
                "ros.domain_id must be ≤ 232 (or negative for $ROS_DOMAIN_ID), found {}",
                self.domain_id
            ));
        }
        Ok(())
    }

    /// Whether DDS stays on loopback: `localhost_only`, or the ROS 2 environment variables
    /// (`ROS_LOCALHOST_ONLY=1`, Humble; `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`, Jazzy) as
    /// `env` returns them.
    pub fn resolved_localhost_only(&self, env: impl Fn(&str) -> Option<String>) -> bool {
        self.localhost_only
            || env("ROS_LOCALHOST_ONLY").is_some_and(|v| v.trim() == "1")
            || env("ROS_AUTOMATIC_DISCOVERY_RANGE")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("localhost"))
    }

    /// The model directory: `model_dir`, else `$ROS_HOME/gp_learning_node/models`, else
    /// `$HOME/.ros/gp_learning_node/models` (`env` returns the environment variables).
    pub fn resolved_model_dir(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<PathBuf, String> {
        if !self.model_dir.trim().is_empty() {
            return Ok(PathBuf::from(&self.model_dir));
        }
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let ros_home = match (set("ROS_HOME"), set("HOME")) {
            (Some(ros_home), _) => PathBuf::from(ros_home),
            (None, Some(home)) => PathBuf::from(home).join(".ros"),
            (None, None) => {
                return Err(
                    "ros.model_dir is empty and neither ROS_HOME nor HOME is set: set ros.model_dir"
                        .into(),
                );
            }
        };
        Ok(ros_home.join("gp_learning_node").join("models"))
    }

    /// The DDS domain: `domain_id`, else `$ROS_DOMAIN_ID` (`env`), else 0.
    pub fn resolved_domain_id(&self, env: Option<&str>) -> Result<u16, String> {
        if self.domain_id >= 0 {
            return Ok(self.domain_id as u16);
        }
        match env.map(str::trim).filter(|s| !s.is_empty()) {
            None => Ok(0),
            Some(text) => match text.parse::<u16>() {
                Ok(id) if id <= 232 => Ok(id),
                _ => Err(format!(
                    "ROS_DOMAIN_ID must be an integer in 0..=232, found {text:?}"
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_dir_defaults_under_ros_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let params = RosParams::default();
        assert_eq!(
            params.resolved_model_dir(env(&[("ROS_HOME", "/r"), ("HOME", "/h")])),
            Ok(PathBuf::from("/r/gp_learning_node/models"))
        );
        assert_eq!(
            params.resolved_model_dir(env(&[("ROS_HOME", ""), ("HOME", "/h")])),
            Ok(PathBuf::from("/h/.ros/gp_learning_node/models"))
        );
        let err = params.resolved_model_dir(env(&[])).expect_err("no home");
        assert!(err.contains("set ros.model_dir"), "{err}");
        let set = RosParams {
            model_dir: "/data/models".into(),
            ..RosParams::default()
        };
        assert_eq!(
            set.resolved_model_dir(env(&[("ROS_HOME", "/r")])),
            Ok(PathBuf::from("/data/models"))
        );
    }

    #[test]
    fn trajectory_tolerances_by_joint_name_win_over_the_arrays() {
        let params = crate::NodeParams::from_yaml(
            "gp_learning_node:\n  ros__parameters:\n    ros:\n      constraints:\n        \
             goal_time: 0.5\n        trajectory: [0.1]\n        panda_joint2: {trajectory: 0.2, goal: 0.03}\n",
        )
        .expect("a joint trajectory controller's constraints");
        let c = &params.ros.constraints;
        assert_eq!(c.goal_time, 0.5);
        assert_eq!(c.of_joint(0, "panda_joint1"), (0.1, 0.0));
        assert_eq!(c.of_joint(1, "panda_joint2"), (0.2, 0.03));
        let joints: Vec<String> = ["panda_joint1", "panda_joint2"].map(String::from).to_vec();
        assert_eq!(c.check_joints(&joints), Ok(()));
        let err = c.check_joints(&joints[..1]).expect_err("unknown joint");
        assert!(err.contains("ros.constraints.panda_joint2"), "{err}");
        let typo = crate::NodeParams::from_yaml(
            "gp_learning_node:\n  ros__parameters:\n    ros:\n      constraints:\n        goal_tme: 0.5\n",
        );
        assert!(typo.is_err(), "a misspelt key is not a joint entry either");
        assert_eq!(
            TrajectoryConstraints::per_joint_key("ros.constraints.elbow.goal"),
            Some(("elbow", "goal"))
        );
        assert_eq!(
            TrajectoryConstraints::per_joint_key("ros.constraints.goal"),
            None
        );
        assert_eq!(
            TrajectoryConstraints::per_joint_key("ros.constraints.goal_time"),
            None
        );
        let mut c = TrajectoryConstraints::default();
        c.set_per_joint("elbow", "trajectory", 0.4).unwrap();
        assert_eq!(c.of_joint(3, "elbow"), (0.4, 0.0));
        assert!(c.set_per_joint("elbow", "goal", -1.0).is_err());
    }
}
