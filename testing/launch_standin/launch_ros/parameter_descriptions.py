"""Stand-in of `launch_ros.parameter_descriptions.ParameterValue` (scalar types only).

A parameter value given as a substitution is a string once performed; launch_ros then types it:
without `value_type` by YAML rules (`"true"` → bool, `""` → `''`, `"1.0"` → float ...), with
`value_type` by launch's `coerce_to_type` (launch/utilities/type_utils.py, launch 3.4): `str`
keeps the string as it is, `bool` accepts `1`/`0` and YAML booleans and refuses anything else,
`int`/`float` convert with int()/float(). Lists are not modelled (NotImplementedError).
"""

import yaml

from launch import Substitution, normalize_to_list_of_substitutions, perform_substitutions

_SCALARS = (bool, int, float, str)


def coerce_to_type(value, value_type):
    """A performed substitution's string typed as launch's coerce_to_type types it."""
    if value_type is None:
        if not value:
            return value
        out = yaml.safe_load(value)
        if not isinstance(out, _SCALARS):
            raise ValueError(f"Failed to convert '{value}' using yaml rules: got {type(out)}")
        return out
    if value_type is str:
        return value
    if value_type in (int, float):
        return value_type(value)
    if value_type is bool:
        text = {"1": "true", "0": "false"}.get(value, value)
        out = yaml.safe_load(text) if text else text
        if isinstance(out, bool):
            return out
        raise ValueError(f"Cannot convert value '{value}' to '{bool}'")
    raise NotImplementedError(f"the launch stand-in does not model value_type={value_type!r}")


def _is_substitution(value):
    """launch's is_substitution: a Substitution, or a non-empty list of strings and
    Substitutions with at least one Substitution (a plain string is a value, not one)."""
    if isinstance(value, Substitution):
        return True
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(v, (str, Substitution)) for v in value)
        and any(isinstance(v, Substitution) for v in value)
    )


class ParameterValue:
    """A parameter value, or a substitution that is performed and typed (`value_type`)."""

    def __init__(self, value, *, value_type=None):
        if value_type not in (None,) + _SCALARS:
            raise NotImplementedError(
                f"the launch stand-in does not model value_type={value_type!r}"
            )
        self.value_type = value_type
        if _is_substitution(value):
            self.substitutions = normalize_to_list_of_substitutions(value)
            self.plain = None
        else:
            if value_type is not None and not isinstance(value, value_type):
                raise TypeError(f"ParameterValue: {value!r} is not a {value_type.__name__}")
            if not isinstance(value, _SCALARS):
                raise NotImplementedError(f"the launch stand-in does not model value {value!r}")
            self.substitutions = None
            self.plain = value

    def evaluate(self, context):
        if self.substitutions is None:
            return self.plain
        return coerce_to_type(perform_substitutions(context, self.substitutions), self.value_type)


__all__ = ["ParameterValue", "coerce_to_type"]
