//! The node's ROS 2 parameters, declared once: name, type, unit, description, constraint and
//! how a change takes effect. The same table validates `ros2 param set`, feeds the README's
//! parameter table (`gp-node run --list-params`) and is checked against the parameter YAML
//! (`config/sim_default.yaml`) by a test. Names are the YAML paths under `ros__parameters`
//! joined with dots, as ROS 2 flattens a parameter file. `model.config` is the plugin's
//! configuration as one JSON string, since its keys depend on the plugin.
//!
//! Values move as [`ParamValue`] (no ROS type here); the ROS layer converts.

use serde_json::Value;

use super::param_ranges;
use super::params::NodeParams;

/// A parameter value (the ROS 2 types the node uses).
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// bool
    Bool(bool),
    /// integer
    Integer(i64),
    /// double
    Double(f64),
    /// double array
    DoubleArray(Vec<f64>),
    /// string
    String(String),
}

/// A parameter's ROS 2 type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// bool
    Bool,
    /// integer
    Integer,
    /// double
    Double,
    /// double array (one value for all joints, or one per joint)
    JointDoubles,
    /// string
    String,
}

impl ParamKind {
    fn name(self) -> &'static str {
        match self {
            ParamKind::Bool => "bool",
            ParamKind::Integer => "integer",
            ParamKind::Double => "double",
            ParamKind::JointDoubles => "double[] (1 or one per joint)",
            ParamKind::String => "string",
        }
    }
}

/// What a value must satisfy besides its type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Constraint {
    /// Anything of the type.
    None,
    /// Finite and > 0 (every element of an array).
    Positive,
    /// An empty array, or every element finite and > 0.
    PositiveOrEmpty,
    /// An empty array, or every element finite and ≥ 0.
    NonNegativeOrEmpty,
    /// Finite and ≥ the value.
    AtLeast(f64),
    /// Finite, lo < x ≤ hi.
    LeftOpen(f64, f64),
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A JSON object.
    JsonObject,
    /// A non-empty plugin name or path (checked further by the node: it must load).
    PluginName,
}

impl Constraint {
    fn describe(self) -> String {
        match self {
            Constraint::None => String::new(),
            Constraint::Positive => "> 0".into(),
            Constraint::PositiveOrEmpty => "> 0, or empty".into(),
            Constraint::NonNegativeOrEmpty => "≥ 0, or empty".into(),
            Constraint::AtLeast(v) => format!("≥ {v}"),
            Constraint::LeftOpen(lo, hi) => format!("in ({lo}, {hi}]"),
            Constraint::OneOf(options) => options.join(" \\| "),
            Constraint::JsonObject => "JSON object".into(),
            Constraint::PluginName => "a plugin that loads".into(),
        }
    }
}

/// How a change takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Apply {
    /// Read-only: set at start (from the parameter file or the command line).
    ReadOnly,
    /// The model is hot-swapped (built and warmed off the control thread).
    Model,
    /// A new control law (gains, effort limits) is built off the control thread and put in
    /// force at a tick boundary.
    Law,
    /// The learned residual is used in the law or not, from the next tick.
    UseModel,
    /// Supervisor settings, from the next tick.
    Supervisor,
    /// Learning-sample gate, from the next tick.
    Gate,
    /// Sample decimation, from the next tick.
    AdmitEvery,
    /// The joint-state watchdog, from the next tick.
    Watchdog,
    /// Activation (command the robot or not), from the next state.
    Activation,
    /// Publishing rate of `~/residual`.
    Publishing,
}

impl Apply {
    fn describe(self) -> &'static str {
        match self {
            Apply::ReadOnly => "read-only (restart)",
            Apply::Model => "hot swap",
            Apply::Law => "next tick (new law)",
            Apply::UseModel
            | Apply::Supervisor
            | Apply::Gate
            | Apply::AdmitEvery
            | Apply::Watchdog
            | Apply::Activation => "next tick",
            Apply::Publishing => "next message",
        }
    }
}

/// One declared parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Dotted name.
    pub name: &'static str,
    /// Type.
    pub kind: ParamKind,
    /// Unit ("" when none).
    pub unit: &'static str,
    /// What it does.
    pub description: &'static str,
    /// Constraint.
    pub constraint: Constraint,
    /// How a change takes effect.
    pub apply: Apply,
}

const fn spec(
    name: &'static str,
    kind: ParamKind,
    unit: &'static str,
    description: &'static str,
    constraint: Constraint,
    apply: Apply,
) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        unit,
        description,
        constraint,
        apply,
    }
}

use Apply as A;
use Constraint as C;
use ParamKind as K;

/// Every parameter of the node, one per line:
/// `spec(name, type, unit, description, constraint, how a change applies)`.
#[rustfmt::skip]
pub const SCHEMA: &[ParamSpec] = &[
    spec("use_sim_time", K::Bool, "", "the node's clock follows /clock (simulation time) instead of the system clock", C::None, A::ReadOnly),
    spec("robot.urdf", K::String, "", "URDF file of the robot (empty: gp-node run reads the robot_description topic, gp-node sim uses the built-in Panda)", C::None, A::ReadOnly),
    spec("model.plugin", K::String, "", "model plugin name, found on the plugin search path (a path is refused)", C::PluginName, A::Model),
    spec("model.config", K::String, "", "plugin configuration as JSON: the keys its schema declares (gp-node plugins NAME, docs/plugins/)", C::JsonObject, A::Model),
    spec("model.file", K::String, "", "model file to start from (gp-node learn, ~/save_model): its plugin, configuration and learned state, adopted before the first fit (empty: learn from scratch)", C::None, A::ReadOnly),
    spec("model.isolation", K::String, "", "where the model runs: in_process, or process (a process of its own: a plugin that crashes ends in the nominal law, not the node; each call crosses processes)", C::OneOf(&["in_process", "process"]), A::ReadOnly),
    spec("control.kp_per_s2", K::JointDoubles, "1/s²", "proportional gain K_p (empty: derived from the robot at start)", C::PositiveOrEmpty, A::Law),
    spec("control.kd_per_s", K::JointDoubles, "1/s", "derivative gain K_d (empty: derived from the robot at start)", C::PositiveOrEmpty, A::Law),
    spec("control.epsilon", K::Double, "", "ε of the robustifying term (larger is gentler; 0: derived from the robot at start)", C::AtLeast(0.0), A::Law),
    spec("control.effort_limit_fraction", K::Double, "", "command saturates at this fraction of the URDF effort limits", C::LeftOpen(0.0, 1.0), A::Law),
    spec("control.effort_limits_nm", K::JointDoubles, "N·m", "effort limits replacing the URDF's (empty: the URDF's, required on every movable joint)", C::PositiveOrEmpty, A::ReadOnly),
    spec("control.use_model", K::Bool, "", "use the learned residual in the law (false: nominal law)", C::None, A::UseModel),
    spec("control.supervisor.budget_micros", K::Double, "µs", "model work per tick before its answer is discarded", C::Positive, A::Supervisor),
    spec("control.supervisor.max_consecutive_faults", K::Integer, "", "faults in a row before the model is quarantined", C::AtLeast(1.0), A::Supervisor),
    spec("control.supervisor.quarantine_ticks", K::Integer, "ticks", "length of a quarantine", C::AtLeast(0.0), A::Supervisor),
    spec("control.command_convention", K::String, "", "what the command includes: full (gravity too) or gravity_compensated_by_robot (the robot adds g(q): libfranka)", C::OneOf(&["full", "gravity_compensated_by_robot"]), A::ReadOnly),
    spec("control.effort_convention", K::String, "", "what the measured effort includes (same choices)", C::OneOf(&["full", "gravity_compensated_by_robot"]), A::ReadOnly),
    spec("control.handover_s", K::Double, "s", "blend time of every switch between laws or models", C::AtLeast(0.0), A::ReadOnly),
    spec("control.torque_rate_limits_nm_per_s", K::JointDoubles, "N·m/s", "largest command change per second (empty: 50 × the effort limit)", C::PositiveOrEmpty, A::ReadOnly),
    spec("control.fallback.tracking_ratio", K::Double, "", "learned law falls back when its tracking error exceeds this multiple of the nominal law's (+ floor)", C::AtLeast(1.0), A::ReadOnly),
    spec("control.fallback.tracking_floor_rad", K::Double, "rad", "tracking errors below this never count as worse", C::AtLeast(0.0), A::ReadOnly),
    spec("control.fallback.velocity_fraction", K::Double, "", "learned law falls back above this fraction of the URDF velocity limit", C::Positive, A::ReadOnly),
    spec("control.fallback.saturation_ticks", K::Integer, "ticks", "learned law falls back after this many saturated ticks in a row", C::AtLeast(1.0), A::ReadOnly),
    spec("control.fallback.probation_s", K::Double, "s", "shadow time before a model that fell back is re-adopted (doubles per fallback)", C::AtLeast(0.0), A::ReadOnly),
    spec("control.plausibility.position_margin_rad", K::Double, "rad", "a joint state this far beyond its limits gets the safe output", C::AtLeast(0.0), A::ReadOnly),
    spec("control.plausibility.velocity_factor", K::Double, "", "a joint state faster than this multiple of its velocity limit gets the safe output", C::AtLeast(1.0), A::ReadOnly),
    spec("control.plausibility.reference_accel_rad_s2", K::Double, "rad/s²", "largest reference acceleration accepted", C::Positive, A::ReadOnly),
    spec("learn.admit_every", K::Integer, "", "learn every n-th sample that passes the gate", C::AtLeast(1.0), A::AdmitEvery),
    spec("learn.gate.position_margin_rad", K::Double, "rad", "allowed excursion beyond the URDF position limits", C::AtLeast(0.0), A::Gate),
    spec("learn.gate.velocity_factor", K::Double, "", "velocities up to this multiple of the URDF limit pass", C::Positive, A::Gate),
    spec("learn.gate.effort_factor", K::Double, "", "torques up to this multiple of the URDF limit pass", C::Positive, A::Gate),
    spec("learn.gate.check_jumps", K::Bool, "", "refuse position jumps the velocity does not explain", C::None, A::Gate),
    spec("learn.gate.jump_tolerance_rad", K::Double, "rad", "largest unexplained position change", C::Positive, A::Gate),
    spec("learn.gate.check_accel", K::Bool, "", "refuse implausible accelerations", C::None, A::Gate),
    spec("learn.gate.max_accel_rad_s2", K::Double, "rad/s²", "largest plausible acceleration", C::Positive, A::Gate),
    spec("learn.gate.check_innovation", K::Bool, "", "refuse isolated outliers against the prediction", C::None, A::Gate),
    spec("learn.gate.innovation_sigmas", K::Double, "", "outlier threshold in predictive standard deviations", C::Positive, A::Gate),
    spec("learn.gate.innovation_limit_nm", K::Double, "N·m", "outlier threshold floor", C::AtLeast(0.0), A::Gate),
    spec("learn.gate.max_consecutive_outliers", K::Integer, "", "outliers in a row after which samples are learned again", C::AtLeast(0.0), A::Gate),
    spec("ros.node_name", K::String, "", "node name", C::None, A::ReadOnly),
    spec("ros.namespace", K::String, "", "namespace", C::None, A::ReadOnly),
    spec("ros.domain_id", K::Integer, "", "DDS domain (negative: $ROS_DOMAIN_ID)", C::None, A::ReadOnly),
    spec("ros.localhost_only", K::Bool, "", "keep DDS traffic on 127.0.0.1", C::None, A::ReadOnly),
    spec("ros.mode", K::String, "", "control or learn", C::OneOf(&["control", "learn"]), A::ReadOnly),
    spec("ros.active", K::Bool, "", "command the robot (false: inactive, commanding nothing; --autostart sets it); activation holds the current pose, bumpless", C::None, A::Activation),
    spec("ros.topics.joint_states", K::String, "", "sensor_msgs/JointState in", C::None, A::ReadOnly),
    spec("ros.topics.reference", K::String, "", "trajectory_msgs/JointTrajectory in", C::None, A::ReadOnly),
    spec("ros.topics.command", K::String, "", "std_msgs/Float64MultiArray out (control) or in (learn)", C::None, A::ReadOnly),
    spec("ros.topics.residual", K::String, "", "gp_learning_node_msgs/ResidualEstimate out", C::None, A::ReadOnly),
    spec("ros.topics.diagnostics", K::String, "", "diagnostic_msgs/DiagnosticArray out", C::None, A::ReadOnly),
    spec("ros.topics.follow_joint_trajectory", K::String, "", "control_msgs/action/FollowJointTrajectory server (control mode)", C::None, A::ReadOnly),
    spec("ros.torque_source", K::String, "", "torque of a learning sample", C::OneOf(&["measured", "commanded"]), A::ReadOnly),
    spec("ros.watchdog_timeout_s", K::Double, "s", "no valid joint state for this long: the safe output", C::Positive, A::Watchdog),
    spec("ros.watchdog_action", K::String, "", "the safe output", C::OneOf(&["hold_gravity", "zero_torque", "stop_publishing"]), A::Watchdog),
    spec("ros.residual_every", K::Integer, "", "publish ~/residual every n-th tick (0: never)", C::AtLeast(0.0), A::Publishing),
    spec("ros.diagnostics_period_s", K::Double, "s", "period of /diagnostics", C::Positive, A::ReadOnly),
    spec("ros.constraints.goal_time", K::Double, "s", "FollowJointTrajectory: time after the trajectory's end to meet the goal tolerances (0: no limit)", C::AtLeast(0.0), A::ReadOnly),
    spec("ros.constraints.stopped_velocity_tolerance", K::Double, "rad/s", "FollowJointTrajectory: largest joint speed at the goal (unless the goal gives one)", C::AtLeast(0.0), A::ReadOnly),
    spec("ros.constraints.trajectory", K::JointDoubles, "rad", "FollowJointTrajectory: default path position tolerance (0 or empty: not checked)", C::NonNegativeOrEmpty, A::ReadOnly),
    spec("ros.constraints.goal", K::JointDoubles, "rad", "FollowJointTrajectory: default goal position tolerance (0 or empty: not checked)", C::NonNegativeOrEmpty, A::ReadOnly),
    spec("ros.allow_partial_joints_goal", K::Bool, "", "FollowJointTrajectory goals may name a subset of the joints (the others hold)", C::None, A::ReadOnly),
    spec("ros.action_monitor_rate", K::Double, "Hz", "FollowJointTrajectory feedback rate", C::Positive, A::ReadOnly),
    spec("ros.model_dir", K::String, "", "the only directory ~/save_model and ~/load_model use (empty: $ROS_HOME/gp_learning_node/models)", C::None, A::ReadOnly),
    spec("ros.record", K::String, "", "record the run to this rosbag2 folder (MCAP, Jazzy metadata.yaml; must not exist): joint states, references, command, residual, diagnostics, events (same as --record; \"\": off)", C::None, A::ReadOnly),
    spec("ros.rerun", K::String, "", "log to rerun: \"\" (off), spawn, connect [HOST:PORT] or save FILE.rrd (same as --rerun)", C::None, A::ReadOnly),
    spec("realtime.thread_priority", K::Integer, "", "SCHED_FIFO priority of the control thread, 1–99 (0: normal scheduling; without the right: a warning, normal priority)", C::AtLeast(0.0), A::ReadOnly),
    spec("realtime.lock_memory", K::Bool, "", "lock the process's memory (mlockall; without the right: a warning)", C::None, A::ReadOnly),
    spec("realtime.heap_reserve_mb", K::Integer, "MiB", "with lock_memory: heap faulted in at start and kept for the run (0: none; the summary's heap says what was used)", C::AtLeast(0.0), A::ReadOnly),
];

/// The spec of `name`.
pub fn find(name: &str) -> Option<&'static ParamSpec> {
    SCHEMA.iter().find(|s| s.name == name)
}

fn pointer(name: &str) -> String {
    format!("/{}", name.replace('.', "/"))
}

/// The value of `spec` in `params` (None if the parameters do not have it: a schema bug the
/// tests catch).
pub fn value_of(params: &NodeParams, spec: &ParamSpec) -> Option<ParamValue> {
    let json = serde_json::to_value(params).ok()?;
    let v = json.pointer(&pointer(spec.name))?;
    Some(match spec.kind {
        ParamKind::Bool => ParamValue::Bool(v.as_bool()?),
        ParamKind::Integer => ParamValue::Integer(v.as_i64()?),
        ParamKind::Double => ParamValue::Double(v.as_f64()?),
        ParamKind::JointDoubles => ParamValue::DoubleArray(match v {
            Value::Array(items) => items.iter().map(Value::as_f64).collect::<Option<_>>()?,
            other => vec![other.as_f64()?],
        }),
        ParamKind::String => ParamValue::String(match v {
            Value::String(s) => s.clone(),
            Value::Object(_) => v.to_string(),
            _ => return None,
        }),
    })
}

/// Checks `value` against `spec` for a robot of `nv` joints (type and constraint; read-only
/// parameters are refused by the caller once the node runs).
pub fn validate(spec: &ParamSpec, value: &ParamValue, nv: usize) -> Result<(), String> {
    let name = spec.name;
    let check_number = |x: f64| -> Result<(), String> {
        let ok = match spec.constraint {
            Constraint::Positive | Constraint::PositiveOrEmpty => x.is_finite() && x > 0.0,
            Constraint::NonNegativeOrEmpty => x.is_finite() && x >= 0.0,
            Constraint::AtLeast(lo) => x.is_finite() && x >= lo,
            Constraint::LeftOpen(lo, hi) => x.is_finite() && x > lo && x <= hi,
            _ => x.is_finite(),
        };
        if ok {
            // Within the type's constraint: also within the key's usable range.
            match param_ranges::range_of(name) {
                Some(range) if !range.contains(x) => {
                    Err(format!("{name} must be {}, got {x}", range.describe()))
                }
                _ => Ok(()),
            }
        } else {
            Err(format!(
                "{name} must be {}, got {x}",
                spec.constraint.describe()
            ))
        }
    };
    match (spec.kind, value) {
        (ParamKind::Bool, ParamValue::Bool(_)) => Ok(()),
        (ParamKind::Integer, ParamValue::Integer(i)) => check_number(*i as f64),
        (ParamKind::Double, ParamValue::Double(x)) => check_number(*x),
        (ParamKind::Double, ParamValue::Integer(i)) => check_number(*i as f64),
        (ParamKind::JointDoubles, ParamValue::DoubleArray(xs))
            if xs.is_empty()
                && matches!(
                    spec.constraint,
                    Constraint::PositiveOrEmpty | Constraint::NonNegativeOrEmpty
                ) =>
        {
            Ok(())
        }
        (ParamKind::JointDoubles, ParamValue::DoubleArray(xs)) => {
            if xs.len() != 1 && xs.len() != nv {
                return Err(format!(
                    "{name} needs one value or {nv} (one per joint), got {}",
                    xs.len()
                ));
            }
            xs.iter().try_for_each(|x| check_number(*x))
        }
        (ParamKind::JointDoubles, ParamValue::Double(x)) => check_number(*x),
        (ParamKind::String, ParamValue::String(s)) => match spec.constraint {
            Constraint::OneOf(options) if !options.contains(&s.as_str()) => Err(format!(
                "{name} must be one of {}, got {s:?}",
                options.join(", ")
            )),
            Constraint::JsonObject => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(_)) => Ok(()),
                Ok(_) => Err(format!("{name} must be a JSON object, got {s}")),
                Err(e) => Err(format!("{name} is not JSON: {e}")),
            },
            Constraint::PluginName if s.trim().is_empty() => {
                Err(format!("{name} must name a plugin"))
            }
            _ => Ok(()),
        },
        (kind, other) => Err(format!(
            "{name} is a {} parameter, got {other:?}",
            kind.name()
        )),
    }
}

/// `params` with `spec` set to `value` (already validated); the result is checked by
/// deserialising it, so a value the parameter structs refuse is an error here too.
pub fn with_value(
    params: &NodeParams,
    spec: &ParamSpec,
    value: &ParamValue,
) -> Result<NodeParams, String> {
    let mut json = serde_json::to_value(params).map_err(|e| e.to_string())?;
    let new = match value {
        ParamValue::Bool(b) => Value::from(*b),
        ParamValue::Integer(i) => Value::from(*i),
        ParamValue::Double(x) => Value::from(*x),
        ParamValue::DoubleArray(xs) if xs.len() == 1 => Value::from(xs[0]),
        ParamValue::DoubleArray(xs) => Value::from(xs.clone()),
        ParamValue::String(s) if spec.constraint == Constraint::JsonObject => {
            serde_json::from_str(s).map_err(|e| format!("{}: {e}", spec.name))?
        }
        ParamValue::String(s) => Value::from(s.clone()),
    };
    let slot = json
        .pointer_mut(&pointer(spec.name))
        .ok_or_else(|| format!("{} is not a parameter of this node", spec.name))?;
    *slot = new;
    param_ranges::check_json(&json)?;
    serde_json::from_value(json).map_err(|e| format!("{}: {e}", spec.name))
}

/// The constraint of `spec` in words: its numeric range, else its constraint ("in (0, 3600]",
/// "control | learn"; `|` escaped for markdown tables).
pub fn constraint_text(spec: &ParamSpec) -> String {
    match param_ranges::range_of(spec.name) {
        Some(range) => range.describe(),
        None => spec.constraint.describe(),
    }
}

/// The README's parameter table (markdown).
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| parameter | type | unit | constraint | change takes effect | description |\n|---|---|---|---|---|---|\n",
    );
    for s in SCHEMA {
        let constraint = constraint_text(s);
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            s.name,
            s.kind.name(),
            s.unit,
            constraint,
            s.apply.describe(),
            s.description
        ));
    }
    out
}
