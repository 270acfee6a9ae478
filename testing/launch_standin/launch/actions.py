"""Stand-in of `launch.actions`: DeclareLaunchArgument, ExecuteProcess, OpaqueFunction, Shutdown.

Executing an ExecuteProcess here starts nothing: it performs its substitutions and appends a
`ResolvedProcess` (the argv, working directory, extra environment) to `context.processes`.
"""

import os

from . import Action, normalize_to_list_of_substitutions
from . import perform_substitutions


class DeclareLaunchArgument(Action):
    """A launch argument: its default (None: required), description and allowed values.

    As launch's: the value given on the command line wins; else the default is performed
    into the launch configuration; a value outside `choices` is an error; a required
    argument without a value is an error.
    """

    def __init__(self, name, *, default_value=None, description=None, choices=None, **kwargs):
        if kwargs:
            raise TypeError(f"DeclareLaunchArgument: unexpected arguments {sorted(kwargs)}")
        if not isinstance(name, str):
            raise TypeError("DeclareLaunchArgument: name must be a str")
        self.name = name
        self.default_value = (
            None if default_value is None else normalize_to_list_of_substitutions(default_value)
        )
        # launch's default description.
        self.description = "no description given" if description is None else description
        self.choices = None if choices is None else list(choices)
        if self.choices is not None and not all(isinstance(c, str) for c in self.choices):
            raise TypeError("DeclareLaunchArgument: choices must be strings")

    def execute(self, context):
        if self.name not in context.launch_configurations:
            if self.default_value is None:
                raise RuntimeError(f'Required launch argument "{self.name}" was not provided.')
            context.launch_configurations[self.name] = perform_substitutions(
                context, self.default_value
            )
        if self.choices is not None:
            value = context.launch_configurations[self.name]
            if value not in self.choices:
                raise RuntimeError(
                    f'Argument "{self.name}" provided value "{value}" is not valid. '
                    f"Valid options are: {self.choices}"
                )
        return None


class OpaqueFunction(Action):
    """Calls `function(context, *args, **kwargs)`; the entities it returns are executed next."""

    def __init__(self, *, function, args=None, kwargs=None):
        if not callable(function):
            raise TypeError("OpaqueFunction: function must be callable")
        self.function = function
        self.args = list(args or [])
        self.kwargs = dict(kwargs or {})

    def execute(self, context):
        return self.function(context, *self.args, **self.kwargs)


class Shutdown(Action):
    """Ends the launch (recorded only: nothing runs here)."""

    def __init__(self, *, reason="reason not given"):
        self.reason = reason

    def execute(self, context):
        context.shutdown_reason = self.reason
        return None


class ResolvedProcess:
    """A process as ros2 launch would start it (nothing here starts it).

    `cmd`: the argv; `cwd`: None (the launch's working directory) or a path;
    `additional_env`: variables set on top of the launch's environment; `name`: the process
    name launch logs with; `action`: the action; `on_exit`: its on_exit entities. A Node adds
    `node_name` (its fully qualified name, or launch_ros's placeholder when not fully
    specified) and `parameter_arguments` ([(file or rule, is_file)]).
    """

    def __init__(self, *, action, cmd, cwd, additional_env, name, output, on_exit):
        self.action = action
        self.cmd = cmd
        self.cwd = cwd
        self.additional_env = additional_env
        self.name = name
        self.output = output
        self.on_exit = on_exit
        self.node_name = None
        self.parameter_arguments = []

    def env(self, base):
        """The process's environment: `base` with `additional_env` on top."""
        env = dict(base)
        env.update(self.additional_env)
        return env

    def __repr__(self):
        return f"ResolvedProcess(name={self.name!r}, cmd={self.cmd!r})"


# The keyword arguments of launch's ExecuteProcess (Jazzy), so that a misspelt one fails here
# as it would under ros2 launch.
_EXECUTE_PROCESS_KWARGS = {
    "prefix",
    "prefix_filter",
    "name",
    "cwd",
    "env",
    "additional_env",
    "shell",
    "sigterm_timeout",
    "sigkill_timeout",
    "emulate_tty",
    "output",
    "output_format",
    "cached_output",
    "log_cmd",
    "on_exit",
    "respawn",
    "respawn_delay",
    "respawn_max_retries",
}


class ExecuteProcess(Action):
    """A process: each `cmd` item (a string, a Substitution or a list of them) is one argv item."""

    def __init__(self, *, cmd, **kwargs):
        unknown = set(kwargs) - _EXECUTE_PROCESS_KWARGS
        if unknown:
            raise TypeError(f"ExecuteProcess: unexpected arguments {sorted(unknown)}")
        for unsupported in ("prefix", "env", "shell"):
            if kwargs.get(unsupported):
                raise NotImplementedError(f"the launch stand-in does not model {unsupported}=")
        self.cmd = [normalize_to_list_of_substitutions(item) for item in cmd]
        self.process_name = kwargs.get("name")
        cwd = kwargs.get("cwd")
        self.process_cwd = None if cwd is None else normalize_to_list_of_substitutions(cwd)
        self.additional_env = [
            (normalize_to_list_of_substitutions(k), normalize_to_list_of_substitutions(v))
            for k, v in (kwargs.get("additional_env") or {}).items()
        ]
        self.output = kwargs.get("output", "log")
        on_exit = kwargs.get("on_exit")
        self.on_exit = [] if on_exit is None else (
            list(on_exit) if isinstance(on_exit, (list, tuple)) else [on_exit]
        )
        self.kwargs = kwargs

    def _command(self, context):
        """The argv (a subclass may extend the command first, as launch_ros's Node does)."""
        return [perform_substitutions(context, item) for item in self.cmd]

    def _resolve(self, context):
        cmd = self._command(context)
        if self.process_name is None:
            name = os.path.basename(cmd[0])
        else:
            name = perform_substitutions(
                context, normalize_to_list_of_substitutions(self.process_name)
            )
        return ResolvedProcess(
            action=self,
            cmd=cmd,
            cwd=(
                None
                if self.process_cwd is None
                else perform_substitutions(context, self.process_cwd)
            ),
            additional_env={
                perform_substitutions(context, k): perform_substitutions(context, v)
                for k, v in self.additional_env
            },
            name=name,
            output=self.output,
            on_exit=self.on_exit,
        )

    def execute(self, context):
        context.processes.append(self._resolve(context))
        return None


__all__ = [
    "DeclareLaunchArgument",
    "ExecuteProcess",
    "OpaqueFunction",
    "ResolvedProcess",
    "Shutdown",
]
