"""A small stand-in of ROS 2's `launch_ros` (Jazzy, 0.26.x) for the tests of `launch/`.

`launch_ros.actions.Node` composes the command line as launch_ros's Node does;
`launch_ros.substitutions` finds packages through the ament index of the context's prefixes;
`launch_ros.parameter_descriptions.ParameterValue` types a substitution's result. See the
`launch` stand-in beside this package.
"""
