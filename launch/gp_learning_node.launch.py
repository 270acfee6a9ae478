"""gp_learning_node beside a robot's own ros2_control stack.

    ros2 launch gp_learning_node gp_learning_node.launch.py \
        [params_file:=FILE] [plugin:=rcagp] [namespace:=/robot1] [use_sim_time:=true] \
        [urdf:=/path/robot.urdf] [mode:=learn] [autostart:=true] [rerun:='save run.rrd']

Starts one process: the node (`gp_learning_node run`, package gp_learning_node). The robot's
stack runs everything else: ros2_control, its controllers and its robot_state_publisher.

The robot must run
- joint_state_broadcaster/JointStateBroadcaster → sensor_msgs/JointState on /joint_states
  (with effort where the hardware has an effort state interface; `ros.torque_source`), and
- forward_command_controller/ForwardCommandController named `effort_controller`, with
  `interface_name: effort` and `joints:` in URDF order: it reads std_msgs/Float64MultiArray
  on /effort_controller/commands, the node's command. Not
  effort_controllers/JointGroupEffortController, which recent ros2_controllers replaced by
  this forward command controller.

        controller_manager:
          ros__parameters:
            joint_state_broadcaster: {type: joint_state_broadcaster/JointStateBroadcaster}
            effort_controller: {type: forward_command_controller/ForwardCommandController}
        effort_controller:
          ros__parameters:
            joints: [joint1, joint2, ...]     # URDF order
            interface_name: effort

(`mode:=learn`: the node commands nothing and learns from the commands another controller
publishes on that topic.)

Arguments (each one left empty leaves the parameter file's value; the shipped file's are
skygp, control, use_sim_time false, robot.urdf '' and ros.active false)
- params_file: the node's parameter file (default: the installed config/sim_default.yaml).
- plugin: the model plugin: skygp, rcagp, vbks or loggp (package gp_learning_node_plugins). Given, it sets
  `model.plugin` and resets `model.config` to `{}`, the plugin's own defaults: the file's
  `model.config` is its own plugin's (an rcagp node refuses skygp's keys). To configure the
  plugin, put `model.plugin` and `model.config` in a parameter file and leave plugin empty
  (config/sim_rcagp_gating_limits_only.yaml is one for rcagp).
- namespace: the node's namespace ('' = the root namespace). Its own names (~/reference,
  ~/residual, its services, `robot_description`) move under it; the shipped parameter file's
  /joint_states and /effort_controller/commands are absolute and do not: for a namespaced
  robot, set `ros.topics.joint_states: joint_states` and
  `ros.topics.command: effort_controller/commands` (relative) in your parameter file.
- use_sim_time: true | false (`use_sim_time`): the node's clock follows /clock.
- urdf: a URDF file (`robot.urdf`), made absolute against the directory ros2 launch runs in.
  Empty: the parameter file's `robot.urdf`; '' there (the shipped file) makes the node wait
  for the robot description on `robot_description` (std_msgs/String, transient local;
  /robot_description without a namespace), which the robot's robot_state_publisher
  publishes, xacro already expanded. No robot_state_publisher is started either way: the
  robot's stack has one. A .xacro file is refused rather than expanded here: run
  `xacro robot.urdf.xacro > robot.urdf` and pass the result, or leave urdf empty and let the
  node read the description the robot publishes.
- mode: control (publish the effort command) | learn (estimates only) (`ros.mode`).
- autostart: true | false (`ros.active`, as the node's `--autostart`): command the robot from
  the start. Without it (and with the shipped file's `ros.active: false`) the node starts
  inactive: it reads the joint states and publishes diagnostics, but commands nothing until
  activated at run time with `ros2 param set /gp_learning_node ros.active true` (the node's
  full name: `/robot1/gp_learning_node` with namespace:=/robot1). Activated, it starts from
  the gravity-holding torque at the current pose and holds that pose until a reference
  arrives; `ros.active false` deactivates it again.
- rerun: log the run to rerun (`ros.rerun`, as the node's `--rerun`): `spawn`, `connect`,
  `connect HOST:PORT` or `save FILE.rrd` (relative to the directory ros2 launch runs in).

Parameters: the file goes to the node's own reader (`run --params FILE`), the arguments given
go to rcl as parameter overrides (`parameters=[{...}]`), which the node applies over the file
(see _node below for why).
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = "gp_learning_node"


def _urdf_file(path):
    """The absolute path of the URDF file `path`; a clear error for a .xacro or a missing file."""
    if path.endswith(".xacro"):
        raise RuntimeError(
            f"urdf:={path}: the node reads a URDF file, not xacro. Expand it first "
            f"(xacro {path} > robot.urdf) and pass robot.urdf, or leave urdf empty: the node "
            "then reads robot_description, which the robot's robot_state_publisher publishes"
        )
    absolute = os.path.abspath(path)
    if not os.path.isfile(absolute):
        raise RuntimeError(f"urdf:={path}: no such file ({absolute})")
    return absolute


def plugin_overrides(plugin):
    """`model.plugin` and, since the file's `model.config` is for the file's plugin, an empty
    `model.config` (the plugin's defaults); nothing for an empty `plugin`."""
    return {"model.plugin": plugin, "model.config": "{}"} if plugin else {}


def _node(context):
    # Why the file goes to `--params` and the launch arguments to `parameters=[dict]`:
    # - rcl applies a `--params-file` section only to the node it names, and the node's rcl
    #   layer (r2r 0.9) matches a section key exactly: `/**`, the full name or the bare name.
    #   The shipped file's key `gp_learning_node:` stops matching as soon as the node is
    #   renamed, and its values would then be dropped without a word. `run --params FILE` is
    #   the node's own reader: it takes the file (one top-level key: `gp_learning_node`, `/**`
    #   or a full node name, then `ros__parameters:`) whatever the node is called, and
    #   resolves the file's relative paths (robot.urdf, model.plugin_path) against the file's
    #   folder, as the other commands do.
    # - launch_ros writes a dict to a temporary `--params-file` under the node's full name
    #   when name and namespace are given (as here), e.g. `/robot1/gp_learning_node:`, so the
    #   overrides follow any namespace (launch_ros jazzy, Node._create_params_file_from_dict).
    #   The node applies rcl's overrides after reading the file: they win over it.
    # - Launch arguments are strings: ParameterValue(value_type=...) types them (a bare
    #   substitution would be typed by YAML rules: plugin `1` would become an integer).
    # - An empty argument sets nothing, so a parameter file's own choice is not overridden by a
    #   launch default it never asked for.
    def given(name):
        return LaunchConfiguration(name).perform(context) != ""

    overrides = {}
    if given("use_sim_time"):
        overrides["use_sim_time"] = ParameterValue(
            LaunchConfiguration("use_sim_time"), value_type=bool
        )
    overrides.update(plugin_overrides(LaunchConfiguration("plugin").perform(context)))
    if given("mode"):
        overrides["ros.mode"] = ParameterValue(LaunchConfiguration("mode"), value_type=str)
    if given("urdf"):
        overrides["robot.urdf"] = _urdf_file(LaunchConfiguration("urdf").perform(context))
    if given("autostart"):
        overrides["ros.active"] = ParameterValue(LaunchConfiguration("autostart"), value_type=bool)
    if given("rerun"):
        overrides["ros.rerun"] = ParameterValue(LaunchConfiguration("rerun"), value_type=str)
    return [
        Node(
            package=PACKAGE,
            executable="gp_learning_node",
            name="gp_learning_node",
            namespace=LaunchConfiguration("namespace"),
            arguments=["run", "--params", LaunchConfiguration("params_file")],
            parameters=[overrides] if overrides else [],
            output="screen",
        )
    ]


def generate_launch_description():
    default_params = PathJoinSubstitution([FindPackageShare(PACKAGE), "config", "sim_default.yaml"])
    return LaunchDescription([
        DeclareLaunchArgument(
            "params_file",
            default_value=default_params,
            description="the node's parameter file (gp_learning_node: ros__parameters: ...)",
        ),
        DeclareLaunchArgument(
            "plugin",
            default_value="",
            description="model plugin: skygp, rcagp, vbks or loggp, with its default configuration "
            "(model.plugin, model.config {}); '' = the params file's (shipped: skygp)",
        ),
        DeclareLaunchArgument(
            "namespace",
            default_value="",
            description="the node's namespace ('' = root); its ~/ names and robot_description follow it",
        ),
        DeclareLaunchArgument(
            "use_sim_time",
            default_value="",
            description="true | false: the node's clock follows /clock; '' = the params file's "
            "(shipped: false)",
        ),
        DeclareLaunchArgument(
            "urdf",
            default_value="",
            description="URDF file (robot.urdf); '' = the params file's robot.urdf, and '' there "
            "(shipped): read the robot_description topic. Not xacro: expand it first",
        ),
        DeclareLaunchArgument(
            "mode",
            default_value="",
            choices=["", "control", "learn"],
            description="control: publish the effort command | learn: estimates only "
            "(ros.mode); '' = the params file's (shipped: control)",
        ),
        DeclareLaunchArgument(
            "autostart",
            default_value="",
            description="true | false: command the robot from the start (ros.active); '' = the "
            "params file's (shipped: false: the node commands nothing until "
            "`ros2 param set <node> ros.active true`)",
        ),
        DeclareLaunchArgument(
            "rerun",
            default_value="",
            description="log to rerun (ros.rerun): spawn | connect [HOST:PORT] | save FILE.rrd; "
            "'' = the params file's (shipped: off)",
        ),
        OpaqueFunction(function=_node),
    ])
