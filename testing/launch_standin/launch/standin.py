"""What the stand-in adds to launch's API: load a launch file, resolve it for given arguments.

    from launch.standin import load_launch_file, resolve
    ld = load_launch_file("launch/gp_learning_node.launch.py")
    r = resolve(ld, {"plugin": "rcagp"}, ament_prefix_path=[...], tmp_dir=tmp)
    r.processes[0].cmd    # the argv ros2 launch would run

`resolve` executes the actions in order, depth first (as ros2 launch visits entities):
declared arguments take the given value or their default; an OpaqueFunction's returned
entities are executed where it stands; every ExecuteProcess / Node becomes a
`launch.actions.ResolvedProcess`. Nothing is started.
"""

import importlib.util
import sys
from pathlib import Path

from . import LaunchContext, LaunchDescription


class UndeclaredLaunchArgument(ValueError):
    """An argument the launch file does not declare.

    Stricter than ros2 launch on purpose: ros2 launch (IncludeLaunchDescription in launch 3.4)
    only checks that required arguments are given and that values are among `choices`; an
    undeclared `name:=value` becomes a launch configuration nobody reads. Here it is refused, so
    a misspelt argument in a test or a command line of the README fails loudly.
    """


class Resolution:
    """The outcome of `resolve`: processes, launch configurations in force, warnings."""

    def __init__(self, context):
        self.processes = list(context.processes)
        self.configurations = dict(context.launch_configurations)
        self.warnings = list(context.warnings)

    def process(self, name):
        """The one process called `name` (ResolvedProcess.name)."""
        found = [p for p in self.processes if p.name == name]
        if len(found) != 1:
            raise LookupError(
                f"{len(found)} processes named {name!r}; have {[p.name for p in self.processes]}"
            )
        return found[0]


def load_launch_file(path):
    """`generate_launch_description()` of a Python launch file, loaded by path as ros2 launch
    loads it (a module from the file, `__file__` set)."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"launch_file_{path.stem.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    # No __pycache__ beside the launch files (colcon would install it with them).
    dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = dont_write
    ld = module.generate_launch_description()
    if not isinstance(ld, LaunchDescription):
        raise TypeError(f"{path}: generate_launch_description() returned {type(ld).__name__}")
    return ld


def declared_arguments(launch_description):
    """{name: DeclareLaunchArgument} of the arguments the launch file declares."""
    return {a.name: a for a in launch_description.get_launch_arguments()}


def resolve(launch_description, arguments=None, *, ament_prefix_path, tmp_dir=None, strict=True):
    """Runs the launch description's actions for `arguments` ({name: str}, as
    `name:=value` on the ros2 launch command line) and returns a `Resolution`.

    `ament_prefix_path`: the install prefixes FindPackageShare / the Node's executable are
    looked up in (AMENT_PREFIX_PATH order); `tmp_dir`: where parameter files made from
    dicts are written (default: the system's temporary directory, as launch_ros);
    `strict`: refuse undeclared arguments (see UndeclaredLaunchArgument).
    """
    arguments = dict(arguments or {})
    for name, value in arguments.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError(f"launch arguments are strings: {name!r}:={value!r}")
    if strict:
        declared = declared_arguments(launch_description)
        unknown = sorted(set(arguments) - set(declared))
        if unknown:
            raise UndeclaredLaunchArgument(
                f"launch argument(s) {', '.join(unknown)} not declared by this launch file "
                f"(declared: {', '.join(sorted(declared))})"
            )
    context = LaunchContext(arguments, ament_prefix_path=ament_prefix_path, tmp_dir=tmp_dir)
    _visit([launch_description], context)
    return Resolution(context)


def _visit(entities, context):
    for entity in entities or []:
        if entity is None:
            continue
        if not hasattr(entity, "execute"):
            raise TypeError(f"not a launch entity: {entity!r}")
        _visit(entity.execute(context), context)


__all__ = [
    "Resolution",
    "UndeclaredLaunchArgument",
    "declared_arguments",
    "load_launch_file",
    "resolve",
]
