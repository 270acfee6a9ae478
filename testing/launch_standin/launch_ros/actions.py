"""Stand-in of `launch_ros.actions.Node`: the command line launch_ros (Jazzy) runs for a node.

Mirrors launch_ros/launch_ros/actions/node.py of the `jazzy` branch (0.26.x; read for this:
`Node.__init__`, `_perform_substitutions`, `_create_params_file_from_dict`, `execute`), and
launch_ros/utilities/{normalize_parameters,evaluate_parameters,namespace_utils}.py:

    <prefix>/lib/<package>/<executable> <arguments...> [--ros-args <ros_arguments...>]
        --ros-args [-r __node:=NAME] [-r __ns:=NS] [--params-file FILE ...] [-r FROM:=TO ...]

- `name` given → `-r __node:=NAME`. `namespace` given (or a `ros_namespace` launch
  configuration from PushRosNamespace) → `-r __ns:=NS`, NS made absolute: `''` → `/`,
  `robot1` → `/robot1`.
- `parameters`, in order: a path (string / substitutions) → `--params-file PATH` (a path that
  is not a file is skipped with a warning, as launch_ros does); a dict → flattened (nested dicts
  joined with '.'), values typed (a substitution's string by YAML rules, or by
  ParameterValue's value_type), written with `yaml.dump(..., default_flow_style=False)` to a
  temporary file `launch_params_*` under the top-level key `<node's full name>` when name and
  namespace are both given, else `/**`, as `{KEY: {'ros__parameters': {...}}}` →
  `--params-file TMPFILE`.
- `remappings` → `-r FROM:=TO` each, last.
Not modelled (NotImplementedError): launch_ros.parameter_descriptions.Parameter and
ParameterFile objects, list values in parameter dicts, global parameters (SetParameter) and
global remaps (SetRemap).
"""

import os
import re
from collections.abc import Mapping
from tempfile import NamedTemporaryFile

import yaml

from launch import Substitution, normalize_to_list_of_substitutions, perform_substitutions
from launch.actions import ExecuteProcess

from .parameter_descriptions import ParameterValue
from .substitutions import ExecutableInPackage

# launch_ros's placeholders for a name / namespace not given to the Node action.
UNSPECIFIED_NODE_NAME = "<node_name_unspecified>"
UNSPECIFIED_NODE_NAMESPACE = "<node_namespace_unspecified>"

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NS_TOKEN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def prefix_namespace(base_ns, ns):
    """`ns` under `base_ns` unless `ns` is absolute; None if both are None; trailing '/'
    stripped except from the root namespace (launch_ros.utilities.prefix_namespace)."""
    if base_ns is None and ns is None:
        return None
    if ns is None:
        combined = base_ns
    elif not base_ns or ns.startswith("/"):
        combined = ns
    else:
        combined = ("" if base_ns == "/" else base_ns) + "/" + ns
    if combined != "/":
        combined = combined.rstrip("/")
    return combined


def make_namespace_absolute(ns):
    if ns is None:
        return None
    return ns if ns.startswith("/") else "/" + ns


def _validate_node_name(name):
    if not _NAME.match(name):
        raise ValueError(f"invalid node name {name!r}")


def _validate_namespace(ns):
    if ns == "/":
        return
    tokens = ns.split("/")
    if not ns.startswith("/") or ns.endswith("/") or not all(_NS_TOKEN.match(t) for t in tokens[1:]):
        raise ValueError(f"invalid namespace {ns!r}")


def _flatten(params, prefix=""):
    """launch_ros's normalize_parameter_dict: nested dicts become dotted names."""
    out = {}
    for key, value in params.items():
        if isinstance(key, str):
            name = key
        else:
            raise NotImplementedError("the launch stand-in models string parameter names only")
        name = f"{prefix}.{name}" if prefix else name
        if isinstance(value, Mapping):
            out.update(_flatten(value, name))
        else:
            out[name] = value
    return out


def _evaluate_value(context, name, value):
    """A dict parameter's value as launch_ros's evaluate_parameter_dict types it."""
    if isinstance(value, ParameterValue):
        return value.evaluate(context)
    if isinstance(value, (bool, int, float, bytes)):
        return value
    if isinstance(value, str):
        # normalize_parameter_dict turns a plain string into the substitution yaml.dump(value),
        # which evaluates back to the same string.
        subs = normalize_to_list_of_substitutions(yaml.dump(value))
    elif isinstance(value, Substitution) or (
        isinstance(value, (list, tuple)) and value and isinstance(value[0], Substitution)
    ):
        subs = normalize_to_list_of_substitutions(value)
    else:
        raise NotImplementedError(
            f"the launch stand-in does not model the value {value!r} of parameter {name}"
        )
    text = perform_substitutions(context, subs)
    if len(text) == 0:
        text = "''"  # launch_ros: yaml.safe_load('') would be None
    loaded = yaml.safe_load(text)
    if type(loaded) in (bool, int, float, str, bytes):
        return loaded
    raise TypeError(
        f"Allowed value types are bytes, bool, int, float, str, ...; got {type(loaded)} for "
        f'"{name}" (wrap a string in ParameterValue(value, value_type=str))'
    )


class Node(ExecuteProcess):
    """A ROS 2 node process: launch_ros's Node, resolved instead of started."""

    def __init__(
        self,
        *,
        executable,
        package=None,
        name=None,
        namespace=None,
        exec_name=None,
        parameters=None,
        remappings=None,
        ros_arguments=None,
        arguments=None,
        **kwargs,
    ):
        head = (
            [ExecutableInPackage(package=package, executable=executable)]
            if package is not None
            else [executable]
        )
        cmd = head + list(arguments or [])
        cmd += [] if ros_arguments is None else ["--ros-args"] + list(ros_arguments)
        cmd += ["--ros-args"]
        super().__init__(cmd=cmd, name=exec_name, **kwargs)
        self.package = package
        self.node_executable = executable
        self.node_name_given = None if name is None else normalize_to_list_of_substitutions(name)
        self.node_namespace_given = (
            None if namespace is None else normalize_to_list_of_substitutions(namespace)
        )
        if parameters is not None and not isinstance(parameters, list):
            raise TypeError("Node: parameters must be a list")
        self.parameters = list(parameters or [])
        for p in self.parameters:
            if not (isinstance(p, (Mapping, str, Substitution, os.PathLike)) or isinstance(p, list)):
                raise NotImplementedError(f"the launch stand-in does not model parameters {p!r}")
        self.remappings = [
            (normalize_to_list_of_substitutions(a), normalize_to_list_of_substitutions(b))
            for a, b in (remappings or [])
        ]
        self._resolved_node_name = None
        self._parameter_arguments = []

    def _command(self, context):
        cmd = super()._command(context)
        expanded_name = UNSPECIFIED_NODE_NAME
        if self.node_name_given is not None:
            expanded_name = perform_substitutions(context, self.node_name_given)
            _validate_node_name(expanded_name)
            cmd += ["-r", f"__node:={expanded_name}"]
        ns = None
        if self.node_namespace_given is not None:
            ns = perform_substitutions(context, self.node_namespace_given)
        ns = make_namespace_absolute(
            prefix_namespace(context.launch_configurations.get("ros_namespace"), ns)
        )
        expanded_ns = UNSPECIFIED_NODE_NAMESPACE
        if ns is not None:
            expanded_ns = ns
            _validate_namespace(ns)
            cmd += ["-r", f"__ns:={ns}"]
        final_name = prefix_namespace(expanded_ns, expanded_name)
        fully_specified = all(
            x not in final_name for x in (UNSPECIFIED_NODE_NAME, UNSPECIFIED_NODE_NAMESPACE)
        )
        if "global_params" in context.launch_configurations or (
            "ros_remaps" in context.launch_configurations
        ):
            raise NotImplementedError("the launch stand-in does not model SetParameter/SetRemap")

        arguments = []
        for params in self.parameters:
            if isinstance(params, Mapping):
                evaluated = {
                    name: _evaluate_value(context, name, value)
                    for name, value in _flatten(params).items()
                }
                key = final_name if fully_specified else "/**"
                with NamedTemporaryFile(
                    mode="w", prefix="launch_params_", delete=False, dir=context.tmp_dir
                ) as h:
                    yaml.dump({key: {"ros__parameters": evaluated}}, h, default_flow_style=False)
                    path = h.name
            else:
                path = (
                    os.fspath(params)
                    if isinstance(params, os.PathLike)
                    else perform_substitutions(context, normalize_to_list_of_substitutions(params))
                )
            if not os.path.isfile(path):
                context.warnings.append(f"Parameter file path is not a file: {path}")
                continue
            arguments.append((path, True))
            cmd += ["--params-file", path]
        for src, dst in self.remappings:
            cmd += [
                "-r",
                f"{perform_substitutions(context, src)}:={perform_substitutions(context, dst)}",
            ]
        self._resolved_node_name = final_name
        self._parameter_arguments = arguments
        return cmd

    def _resolve(self, context):
        resolved = super()._resolve(context)
        resolved.node_name = self._resolved_node_name
        resolved.parameter_arguments = list(self._parameter_arguments)
        return resolved


__all__ = ["Node"]
