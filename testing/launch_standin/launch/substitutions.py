"""Stand-in of `launch.substitutions`: TextSubstitution, LaunchConfiguration,
PathJoinSubstitution (the ones the launch files use)."""

import os

from . import Substitution, SubstitutionFailure, normalize_to_list_of_substitutions
from . import perform_substitutions


class TextSubstitution(Substitution):
    """A fixed string."""

    def __init__(self, *, text=""):
        if not isinstance(text, str):
            raise TypeError(f"TextSubstitution: text must be a str, got {text!r}")
        self.text = text

    def perform(self, context):
        return self.text

    def describe(self):
        return repr(self.text)


class LaunchConfiguration(Substitution):
    """The value of a launch configuration (a launch argument's value, or its default)."""

    def __init__(self, variable_name, *, default=None):
        self.variable_name = normalize_to_list_of_substitutions(variable_name)
        self.default = None if default is None else normalize_to_list_of_substitutions(default)

    def perform(self, context):
        name = perform_substitutions(context, self.variable_name)
        if name in context.launch_configurations:
            return context.launch_configurations[name]
        if self.default is not None:
            return perform_substitutions(context, self.default)
        # The message of launch's LaunchConfiguration.
        raise SubstitutionFailure(f"launch configuration '{name}' does not exist")

    def describe(self):
        return "LaunchConfig('{}')".format(" + ".join(s.describe() for s in self.variable_name))


class PathJoinSubstitution(Substitution):
    """os.path.join of its performed parts (each a string, a Substitution or a list of them)."""

    def __init__(self, substitutions):
        self.parts = [normalize_to_list_of_substitutions(part) for part in substitutions]

    def perform(self, context):
        return os.path.join(*[perform_substitutions(context, part) for part in self.parts])

    def describe(self):
        return "PathJoin({})".format(
            ", ".join(" + ".join(s.describe() for s in part) for part in self.parts)
        )


__all__ = [
    "LaunchConfiguration",
    "PathJoinSubstitution",
    "SubstitutionFailure",
    "TextSubstitution",
]
