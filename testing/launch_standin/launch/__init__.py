"""A small stand-in of ROS 2's `launch` package, written for the tests of `launch/*.launch.py`.

PyPI has no ROS 2 `launch` (PyPI's `launch` is an unrelated package), so the launch files are
tested against this: only the API they use, with the behaviour of launch / launch_ros Jazzy
(launch 3.4.x, launch_ros 0.26.x) where it decides the processes and their command lines.
Put `testing/launch_standin` first on `sys.path`; `launch.standin.resolve()` then runs a
LaunchDescription's actions for given launch arguments and returns the processes that
`ros2 launch` would start (nothing is started). Where the stand-in differs from ros2 launch on
purpose, it says so (`resolve(strict=True)` refuses undeclared arguments; ros2 launch ignores
them).

Modules: `launch` (this file: LaunchDescription, LaunchContext, Substitution, Action,
SubstitutionFailure), `launch.actions`, `launch.substitutions`, `launch.standin` (resolve,
load_launch_file), `launch_ros.actions` (Node), `launch_ros.substitutions` (FindPackageShare,
FindPackagePrefix, ExecutableInPackage), `launch_ros.parameter_descriptions` (ParameterValue).
"""

import os


class SubstitutionFailure(RuntimeError):
    """A substitution could not be performed (as launch.substitutions.SubstitutionFailure)."""


class LaunchContext:
    """What the actions of one resolution share.

    `launch_configurations`: launch arguments and configurations by name (strings);
    `ament_prefix_path`: the install prefixes searched for packages, first match wins (the
    entries of AMENT_PREFIX_PATH); `tmp_dir`: where parameter files made from dicts are
    written; `processes`: what the executed process actions resolved to, in order;
    `warnings`: what ros2 launch would log as a warning and go on.
    """

    def __init__(self, launch_configurations=None, *, ament_prefix_path=(), tmp_dir=None):
        self.launch_configurations = dict(launch_configurations or {})
        self.ament_prefix_path = [str(p) for p in ament_prefix_path]
        self.tmp_dir = tmp_dir
        self.processes = []
        self.warnings = []
        self.environment = dict(os.environ)

    def perform_substitution(self, substitution):
        return substitution.perform(self)


class Substitution:
    """Base of the substitutions: `perform(context)` returns a string."""

    def perform(self, context):  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self):
        return type(self).__name__


class Action:
    """Base of the actions: `execute(context)` returns the entities to visit next, or None."""

    def execute(self, context):  # pragma: no cover - abstract
        raise NotImplementedError


def normalize_to_list_of_substitutions(value):
    """A string, a Substitution, or a sequence of both, as a list of Substitutions."""
    from .substitutions import TextSubstitution

    if isinstance(value, str):
        return [TextSubstitution(text=value)]
    if isinstance(value, Substitution):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"expected a string, a Substitution or a list of them, got {value!r}")
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(TextSubstitution(text=item))
        elif isinstance(item, Substitution):
            out.append(item)
        else:
            raise TypeError(f"expected a string or a Substitution, got {item!r}")
    return out


def perform_substitutions(context, substitutions):
    """The concatenation of the performed substitutions (launch's perform_substitutions)."""
    return "".join(s.perform(context) for s in substitutions)


class LaunchDescription:
    """The entities of a launch file, in order."""

    def __init__(self, initial_entities=None):
        self.entities = list(initial_entities or [])

    def add_action(self, action):
        self.entities.append(action)

    def add_entity(self, entity):
        self.entities.append(entity)

    def get_launch_arguments(self):
        """The DeclareLaunchArgument actions, nested LaunchDescriptions included.

        As ros2 launch, it cannot see into an OpaqueFunction: arguments must be declared at
        the top level to be listed by `ros2 launch --show-args` (and to pass the strict check).
        """
        from .actions import DeclareLaunchArgument

        found = []
        for entity in self.entities:
            if isinstance(entity, DeclareLaunchArgument):
                found.append(entity)
            elif isinstance(entity, LaunchDescription):
                found.extend(entity.get_launch_arguments())
        return found

    def execute(self, context):
        return list(self.entities)


__all__ = [
    "Action",
    "LaunchContext",
    "LaunchDescription",
    "Substitution",
    "SubstitutionFailure",
    "normalize_to_list_of_substitutions",
    "perform_substitutions",
]
