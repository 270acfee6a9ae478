//! The node's ROS 2 parameters over rcl: the overrides rcl parsed from the command line
//! (`-p`, `--params-file` in any form `ros2 param dump` writes, `/**` wildcards) applied to
//! the parameter set, and the six parameter services of a ROS 2 node answered from the
//! schema (`gpn_app::param_schema`).
//!
//! Why not r2r's parameter handler: its descriptors carry only a description (no ranges, no
//! read-only flag, so `ros2 param describe` would not tell the truth), and it applies a set
//! inside the spin thread, while a set here can mean loading a plugin and warming a model.
//! So: list, get, get-types and describe are answered on the spin thread from a snapshot of
//! the parameters; set and set-atomically go to the operations thread, which validates with
//! the same code as the parameter files (`Ops::set_param`) and answers once the change took
//! effect or was refused. Every change that took effect is announced on `/parameter_events`,
//! as ROS 2 nodes do (rqt_reconfigure and `ros2 param` watchers listen there).

use std::sync::{Arc, Mutex};

use futures::StreamExt as _;
use gpn_app::NodeParams;
use gpn_app::param_ranges;
use gpn_app::param_schema::{self, Apply, ParamKind, ParamSpec, ParamValue};
use r2r::rcl_interfaces::msg::{
    FloatingPointRange, IntegerRange, ListParametersResult, Parameter, ParameterDescriptor,
    ParameterEvent, ParameterValue as ValueMsg, SetParametersResult,
};
use r2r::rcl_interfaces::srv::{
    DescribeParameters, GetParameterTypes, GetParameters, ListParameters, SetParameters,
    SetParametersAtomically,
};

use super::transport::{NodeClock, Requests, RosError, Transport, ros_now};

// rcl_interfaces/msg/ParameterType.
const NOT_SET: u8 = 0;
const BOOL: u8 = 1;
const INTEGER: u8 = 2;
const DOUBLE: u8 = 3;
const STRING: u8 = 4;
const INTEGER_ARRAY: u8 = 7;
const DOUBLE_ARRAY: u8 = 8;

/// The parameters in force, shared by the spin thread (reads) and the operations thread
/// (writes after a set took effect).
pub(crate) type ParamSnapshot = Arc<Mutex<NodeParams>>;

/// A parameter set from a service call, for the operations thread.
pub(crate) enum SetRequest {
    /// `~/set_parameters`: each parameter on its own.
    Each(r2r::ServiceRequest<SetParameters::Service>),
    /// `~/set_parameters_atomically`: all or none.
    Atomically(r2r::ServiceRequest<SetParametersAtomically::Service>),
}

/// A parameter value of the node from an rcl one; None for types the node has none of.
/// Integer arrays become double arrays (a YAML `[100, 100]` is one).
pub(crate) fn from_rcl(value: &r2r::ParameterValue) -> Option<ParamValue> {
    Some(match value {
        r2r::ParameterValue::Bool(b) => ParamValue::Bool(*b),
        r2r::ParameterValue::Integer(i) => ParamValue::Integer(*i),
        r2r::ParameterValue::Double(x) => ParamValue::Double(*x),
        r2r::ParameterValue::String(s) => ParamValue::String(s.clone()),
        r2r::ParameterValue::DoubleArray(xs) => ParamValue::DoubleArray(xs.clone()),
        r2r::ParameterValue::IntegerArray(xs) => {
            ParamValue::DoubleArray(xs.iter().map(|&i| i as f64).collect())
        }
        _ => return None,
    })
}

fn from_msg(msg: &ValueMsg) -> Option<ParamValue> {
    Some(match msg.type_ {
        BOOL => ParamValue::Bool(msg.bool_value),
        INTEGER => ParamValue::Integer(msg.integer_value),
        DOUBLE => ParamValue::Double(msg.double_value),
        STRING => ParamValue::String(msg.string_value.clone()),
        DOUBLE_ARRAY => ParamValue::DoubleArray(msg.double_array_value.clone()),
        INTEGER_ARRAY => {
            ParamValue::DoubleArray(msg.integer_array_value.iter().map(|&i| i as f64).collect())
        }
        _ => return None,
    })
}

fn to_msg(value: Option<ParamValue>) -> ValueMsg {
    let mut msg = ValueMsg::default();
    match value {
        None => msg.type_ = NOT_SET,
        Some(ParamValue::Bool(b)) => (msg.type_, msg.bool_value) = (BOOL, b),
        Some(ParamValue::Integer(i)) => (msg.type_, msg.integer_value) = (INTEGER, i),
        Some(ParamValue::Double(x)) => (msg.type_, msg.double_value) = (DOUBLE, x),
        Some(ParamValue::String(s)) => (msg.type_, msg.string_value) = (STRING, s),
        Some(ParamValue::DoubleArray(xs)) => {
            (msg.type_, msg.double_array_value) = (DOUBLE_ARRAY, xs);
        }
    }
    msg
}

fn type_of(kind: ParamKind) -> u8 {
    match kind {
        ParamKind::Bool => BOOL,
        ParamKind::Integer => INTEGER,
        ParamKind::Double => DOUBLE,
        ParamKind::JointDoubles => DOUBLE_ARRAY,
        ParamKind::String => STRING,
    }
}

/// The value of `spec` in `params`, typed as the parameter is declared (a gain given as one
/// number is a one-element array).
fn declared_value(params: &NodeParams, spec: &ParamSpec) -> Option<ParamValue> {
    match (spec.kind, param_schema::value_of(params, spec)?) {
        (ParamKind::JointDoubles, ParamValue::Double(x)) => Some(ParamValue::DoubleArray(vec![x])),
        (ParamKind::Double, ParamValue::Integer(i)) => Some(ParamValue::Double(i as f64)),
        (_, value) => Some(value),
    }
}

/// What `ros2 param describe` shows: type, description with unit, the constraint in words,
/// the numeric range (rcl ranges are closed: an open lower end is in the words), read-only.
pub(crate) fn descriptor(spec: &ParamSpec) -> ParameterDescriptor {
    let mut d = ParameterDescriptor {
        name: spec.name.to_owned(),
        type_: type_of(spec.kind),
        description: if spec.unit.is_empty() {
            spec.description.to_owned()
        } else {
            format!("{} [{}]", spec.description, spec.unit)
        },
        additional_constraints: param_schema::constraint_text(spec).replace("\\|", "|"),
        read_only: spec.apply == Apply::ReadOnly,
        ..Default::default()
    };
    if let Some(range) = param_ranges::range_of(spec.name) {
        if spec.kind == ParamKind::Integer {
            let lo = if range.lo_open {
                range.lo.floor() + 1.0
            } else {
                range.lo.ceil()
            };
            d.integer_range = vec![IntegerRange {
                from_value: lo as i64,
                to_value: range.hi as i64,
                step: 1,
            }];
        } else {
            d.floating_point_range = vec![FloatingPointRange {
                from_value: range.lo,
                to_value: range.hi,
                step: 0.0,
            }];
        }
    }
    d
}

/// Parameters rcl has used before it reads any override (the node's name and namespace, the
/// DDS domain and discovery range), with what sets them instead.
const BEFORE_RCL: &[(&str, &str)] = &[
    ("ros.node_name", "use --ros-args -r __node:=NAME"),
    ("ros.namespace", "use --ros-args -r __ns:=/NS"),
    (
        "ros.domain_id",
        "use ROS_DOMAIN_ID, --domain-id or the --params file",
    ),
    (
        "ros.localhost_only",
        "use ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST or the --params file",
    ),
];

/// Applies the parameter overrides rcl read for this node (`--ros-args -p …`,
/// `--params-file …`) to `params`, each validated as a parameter file's value (read-only
/// ones included: this is start-up). Returns the overrides not applied, each with why: not
/// a parameter of this node (as a ROS 2 node ignores undeclared overrides), or one rcl used
/// before reading overrides (applying it would make `ros2 param get` report a value not in
/// force). The caller warns.
pub(crate) fn apply_overrides(
    node: &r2r::Node,
    params: &mut NodeParams,
) -> Result<Vec<(String, String)>, RosError> {
    let overrides: Vec<(String, r2r::ParameterValue)> = node
        .params
        .lock()
        .map_err(|_| RosError::Param("the parameter overrides are poisoned".into()))?
        .iter()
        .map(|(name, p)| (name.clone(), p.value.clone()))
        .collect();
    let mut ignored = Vec::new();
    for (name, value) in overrides {
        if let Some((joint, field)) = gpn_app::TrajectoryConstraints::per_joint_key(&name) {
            // ros2_control's `constraints.<joint>.trajectory` names (read at start).
            let x = match from_rcl(&value) {
                Some(ParamValue::Double(x)) => x,
                Some(ParamValue::Integer(i)) => i as f64,
                _ => {
                    return Err(RosError::Param(format!(
                        "--ros-args parameter {name}: a {} is not a tolerance (a double)",
                        value.type_name()
                    )));
                }
            };
            params
                .ros
                .constraints
                .set_per_joint(joint, field, x)
                .map_err(|e| RosError::Param(format!("--ros-args parameter: {e}")))?;
            continue;
        }
        let Some(spec) = param_schema::find(&name) else {
            ignored.push((name, "not a parameter of this node".to_owned()));
            continue;
        };
        if let Some((_, instead)) = BEFORE_RCL.iter().find(|(key, _)| *key == name) {
            ignored.push((name, format!("rcl has already used it; {instead}")));
            continue;
        }
        let value = from_rcl(&value).ok_or_else(|| {
            RosError::Param(format!(
                "--ros-args parameter {name}: a {} is not a value of this parameter",
                value.type_name()
            ))
        })?;
        // The robot is not loaded yet: a per-joint array is checked against its own length
        // here, and against the joint count when the law is built.
        let nv = match &value {
            ParamValue::DoubleArray(xs) => xs.len(),
            _ => 1,
        };
        param_schema::validate(spec, &value, nv)
            .map_err(|e| RosError::Param(format!("--ros-args parameter: {e}")))?;
        *params = param_schema::with_value(params, spec, &value)
            .map_err(|e| RosError::Param(format!("--ros-args parameter: {e}")))?;
    }
    Ok(ignored)
}

/// The parameter services' request streams, created on the node.
pub(crate) struct ParamServices {
    list: Requests<ListParameters::Service>,
    get: Requests<GetParameters::Service>,
    types: Requests<GetParameterTypes::Service>,
    describe: Requests<DescribeParameters::Service>,
    pub(crate) set: Requests<SetParameters::Service>,
    pub(crate) set_atomically: Requests<SetParametersAtomically::Service>,
}

impl ParamServices {
    /// Creates `~/list_parameters`, `~/get_parameters`, `~/get_parameter_types`,
    /// `~/describe_parameters`, `~/set_parameters` and `~/set_parameters_atomically`.
    pub(crate) fn open(transport: &mut Transport) -> Result<Self, RosError> {
        Ok(Self {
            list: transport.server::<ListParameters::Service>("~/list_parameters")?,
            get: transport.server::<GetParameters::Service>("~/get_parameters")?,
            types: transport.server::<GetParameterTypes::Service>("~/get_parameter_types")?,
            describe: transport.server::<DescribeParameters::Service>("~/describe_parameters")?,
            set: transport.server::<SetParameters::Service>("~/set_parameters")?,
            set_atomically: transport
                .server::<SetParametersAtomically::Service>("~/set_parameters_atomically")?,
        })
    }

    /// The reading services, answered from `snapshot` (run on the spin thread); the set
    /// services' requests are handed to `forward` (to the operations thread).
    pub(crate) async fn serve(self, snapshot: ParamSnapshot, forward: impl Fn(SetRequest)) {
        let Self {
            list,
            get,
            types,
            describe,
            set,
            set_atomically,
        } = self;
        let list = list.for_each(|req| {
            let result = list_result(&req.message.prefixes, req.message.depth);
            let _ = req.respond(ListParameters::Response { result });
            futures::future::ready(())
        });
        let get = get.for_each(|req| {
            let values = match snapshot.lock() {
                Ok(params) => req
                    .message
                    .names
                    .iter()
                    .map(|n| to_msg(param_schema::find(n).and_then(|s| declared_value(&params, s))))
                    .collect(),
                Err(_) => Vec::new(),
            };
            let _ = req.respond(GetParameters::Response { values });
            futures::future::ready(())
        });
        let types = types.for_each(|req| {
            let types = req
                .message
                .names
                .iter()
                .map(|n| param_schema::find(n).map_or(NOT_SET, |s| type_of(s.kind)))
                .collect();
            let _ = req.respond(GetParameterTypes::Response { types });
            futures::future::ready(())
        });
        let describe = describe.for_each(|req| {
            let descriptors = req
                .message
                .names
                .iter()
                .map(|n| match param_schema::find(n) {
                    Some(spec) => descriptor(spec),
                    None => ParameterDescriptor {
                        name: n.clone(),
                        ..Default::default()
                    },
                })
                .collect();
            let _ = req.respond(DescribeParameters::Response { descriptors });
            futures::future::ready(())
        });
        let set = set.for_each(|req| {
            forward(SetRequest::Each(req));
            futures::future::ready(())
        });
        let set_atomically = set_atomically.for_each(|req| {
            forward(SetRequest::Atomically(req));
            futures::future::ready(())
        });
        futures::join!(list, get, types, describe, set, set_atomically);
    }
}

/// Answers a set that found the operations thread's queue full.
pub(crate) fn refuse_busy(request: SetRequest) {
    let refused = |reason: &str| SetParametersResult {
        successful: false,
        reason: reason.to_owned(),
    };
    let busy = "busy: other parameter changes are being applied; try again";
    match request {
        SetRequest::Each(req) => {
            let results = req
                .message
                .parameters
                .iter()
                .map(|_| refused(busy))
                .collect();
            let _ = req.respond(SetParameters::Response { results });
        }
        SetRequest::Atomically(req) => {
            let _ = req.respond(SetParametersAtomically::Response {
                result: refused(busy),
            });
        }
    }
}

/// `ros2 param list`: names under `prefixes` (all when empty) down to `depth` dots below
/// them (0: any depth), and the prefixes of the names listed.
fn list_result(prefixes: &[String], depth: u64) -> ListParametersResult {
    let within = |rest: &str| depth == 0 || (rest.matches('.').count() as u64) < depth;
    let mut result = ListParametersResult::default();
    for spec in param_schema::SCHEMA {
        let name = spec.name;
        let listed = if prefixes.is_empty() {
            within(name)
        } else {
            prefixes.iter().any(|p| {
                name == p
                    || name
                        .strip_prefix(p.as_str())
                        .and_then(|r| r.strip_prefix('.'))
                        .is_some_and(within)
            })
        };
        if listed {
            result.names.push(name.to_owned());
            if let Some((prefix, _)) = name.rsplit_once('.')
                && !result.prefixes.iter().any(|p| p == prefix)
            {
                result.prefixes.push(prefix.to_owned());
            }
        }
    }
    result
}

/// Applies one parameter of a set through `apply` (the operations thread's
/// `Ops::set_param`), which validates it as the parameter files are and refuses read-only
/// ones.
pub(crate) fn set_one(
    name: &str,
    value: &ValueMsg,
    apply: &mut dyn FnMut(&str, &ParamValue) -> Result<(), String>,
) -> SetParametersResult {
    let outcome = match from_msg(value) {
        None if param_schema::find(name).is_none() => Err(format!("unknown parameter {name}")),
        None => Err(format!(
            "{name}: unsupported parameter type {}",
            value.type_
        )),
        Some(value) => apply(name, &value),
    };
    match outcome {
        Ok(()) => SetParametersResult {
            successful: true,
            reason: String::new(),
        },
        Err(reason) => SetParametersResult {
            successful: false,
            reason,
        },
    }
}

/// Whether every parameter of an atomic set would be accepted by `check` (the operations'
/// `Ops::check_param`) before any is applied; the first refusal's reason otherwise.
pub(crate) fn check_all(
    params: &[r2r::rcl_interfaces::msg::Parameter],
    check: impl Fn(&str, &ParamValue) -> Result<(), String>,
) -> Result<(), String> {
    for p in params {
        let value = from_msg(&p.value).ok_or_else(|| match param_schema::find(&p.name) {
            None => format!("unknown parameter {}", p.name),
            Some(_) => format!("{}: unsupported parameter type {}", p.name, p.value.type_),
        })?;
        check(&p.name, &value)?;
    }
    Ok(())
}

/// `/parameter_events`: the changes that took effect, with their new values.
pub(crate) struct ParamEvents {
    publisher: r2r::Publisher<ParameterEvent>,
    node: String,
    clock: NodeClock,
}

impl ParamEvents {
    /// The publisher of the node `node` (its fully qualified name), stamped by `clock`.
    pub(crate) fn open(transport: &mut Transport) -> Result<Self, RosError> {
        Ok(Self {
            publisher: transport.rcl_publisher::<ParameterEvent>(
                "/parameter_events",
                r2r::QosProfile::parameter_events(),
            )?,
            node: transport.fully_qualified_name(),
            clock: transport.clock(),
        })
    }

    /// Announces that `names` changed; their values are those of `params`.
    pub(crate) fn changed(&self, params: &NodeParams, names: &[String]) {
        let changed_parameters: Vec<Parameter> = names
            .iter()
            .filter_map(|name| {
                let spec = param_schema::find(name)?;
                Some(Parameter {
                    name: name.clone(),
                    value: to_msg(declared_value(params, spec)),
                })
            })
            .collect();
        if changed_parameters.is_empty() {
            return;
        }
        let _ = self.publisher.publish(&ParameterEvent {
            stamp: ros_now(&self.clock),
            node: self.node.clone(),
            changed_parameters,
            ..Default::default()
        });
    }
}
