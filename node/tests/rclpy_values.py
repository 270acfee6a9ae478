"""rcl_interfaces/msg/ParameterValue as plain Python, for the rclpy peers of node/tests."""

from rcl_interfaces.msg import ParameterType, ParameterValue


def value_repr(v: ParameterValue):
    """The value a ParameterValue holds (None when not set or of a type the node has none of)."""
    return {
        ParameterType.PARAMETER_BOOL: lambda: v.bool_value,
        ParameterType.PARAMETER_INTEGER: lambda: v.integer_value,
        ParameterType.PARAMETER_DOUBLE: lambda: v.double_value,
        ParameterType.PARAMETER_STRING: lambda: v.string_value,
        ParameterType.PARAMETER_DOUBLE_ARRAY: lambda: list(v.double_array_value),
    }.get(v.type, lambda: None)()
