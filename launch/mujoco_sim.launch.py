"""gp_learning_node controlling the MuJoCo robot of mujoco_driver/ (no ros2_control needed).

    ros2 launch gp_learning_node mujoco_sim.launch.py python:=/path/to/.venv/bin/python \
        [params_file:=FILE] [plugin:=rcagp] [urdf:=FILE] [autostart:=false] \
        [on_command_timeout:=hold]

Starts two processes on the same DDS domain ($ROS_DOMAIN_ID), both kept on the loopback
interface:
- the MuJoCo driver (`<python> <share>/mujoco_driver/mujoco_driver.py --params FILE --urdf
  URDF --publish-reference --localhost-only [--on-command-timeout stop|hold]`): the robot.
  It publishes /joint_states and the reference trajectory on /gp_learning_node/reference,
  applies the effort commands of /effort_controller/commands in lock-step, and ends after
  the parameter file's `run.duration_s` of simulated time; the launch then shuts down (the
  node gets SIGINT).
  `python` must be a Python with the PyPI packages mujoco and cyclonedds (the repo's .venv:
  `python3 -m venv .venv && .venv/bin/pip install -r ci/requirements.txt`); the driver needs
  no ROS installation. See mujoco_driver/README.md.
- the node (`gp_learning_node run --params FILE`), in control mode and active (`ros.active`
  true: it commands the robot from the start; see autostart), in the root namespace (the
  driver's topics are absolute), with `use_sim_time` false (the driver publishes no /clock;
  its states carry simulated-time stamps, as in node/tests/ros_mujoco.rs) and
  `robot.urdf` = the driver's URDF, so both load the same robot (the driver publishes no
  robot_description). ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST keeps the node's discovery on
  loopback, where the driver's `--localhost-only` discovery looks for it.

Arguments
- python: the driver's Python (mujoco + cyclonedds); default python3.
- params_file: shared by the driver (scenario: payload, friction, noise, duration, reference)
  and the node (default: the installed config/sim_default.yaml).
- plugin: the node's model plugin, with its default configuration (model.plugin, and
  model.config `{}`: the file's is its own plugin's); '' = the parameter file's (shipped:
  skygp with its recommended configuration).
- urdf: the robot, for the driver (--urdf) and the node (robot.urdf); default: the installed
  urdf/panda.urdf. A relative path is taken from the directory ros2 launch runs in.
- autostart: true | false: the node's `ros.active`; default true (the simulated robot is
  commanded from the start: the driver's lock-step waits for every command); '' = the
  parameter file's (shipped: false). Inactive, the node commands nothing until
  `ros2 param set /gp_learning_node ros.active true`; meanwhile the driver's commands time
  out (see on_command_timeout).
- on_command_timeout: stop | hold, the driver's `--on-command-timeout` (mujoco_driver/README.md,
  "The command timeout"): what the driver does when the node's commands stop (the node died
  or is inactive): stop ends the run (exit 1, and the launch shuts down); hold holds the arm
  with gravity compensation and damping, in real time, until commands come again. '' (default)
  passes nothing: the driver's default, stop.
Parameters reach the node as in gp_learning_node.launch.py (the file through `--params`,
the rest as rcl overrides; see the comment there).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = "gp_learning_node"


def _driver(context):
    # An OpaqueFunction, as _node: an empty on_command_timeout must add no argument at all
    # (a substitution in cmd is always one argv item, an empty one too).
    share = FindPackageShare(PACKAGE)
    on_timeout = LaunchConfiguration("on_command_timeout").perform(context)
    return [
        ExecuteProcess(
            cmd=[
                LaunchConfiguration("python"),
                PathJoinSubstitution([share, "mujoco_driver", "mujoco_driver.py"]),
                "--params", LaunchConfiguration("params_file"),
                "--urdf", LaunchConfiguration("urdf"),
                "--publish-reference",
                "--localhost-only",
            ]
            + (["--on-command-timeout", on_timeout] if on_timeout else []),
            name="mujoco_driver",
            output="screen",
            on_exit=[Shutdown(reason="the MuJoCo driver ended")],
        )
    ]


def _node(context):
    parameters = {
        "use_sim_time": False,
        "ros.mode": "control",
        "robot.urdf": ParameterValue(LaunchConfiguration("urdf"), value_type=str),
    }
    if LaunchConfiguration("autostart").perform(context):  # '' = the parameter file's
        parameters["ros.active"] = ParameterValue(
            LaunchConfiguration("autostart"), value_type=bool
        )
    plugin = LaunchConfiguration("plugin").perform(context)
    if plugin:  # as gp_learning_node.launch.py's plugin argument
        parameters.update({"model.plugin": plugin, "model.config": "{}"})
    return [
        Node(
            package=PACKAGE,
            executable="gp_learning_node",
            name="gp_learning_node",
            namespace="/",  # pinned: the driver's topics are absolute
            arguments=["run", "--params", LaunchConfiguration("params_file")],
            parameters=[parameters],
            additional_env={"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"},
            output="screen",
        )
    ]


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument(
            "python",
            default_value="python3",
            description="Python for the MuJoCo driver, with the PyPI packages mujoco and cyclonedds",
        ),
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution([share, "config", "sim_default.yaml"]),
            description="parameter file shared by the driver (scenario) and the node",
        ),
        DeclareLaunchArgument(
            "plugin",
            default_value="",
            description="the node's model plugin (skygp, rcagp, vbks, loggp) with its default "
            "configuration; '' = the params file's (shipped: skygp)",
        ),
        DeclareLaunchArgument(
            "urdf",
            default_value=PathJoinSubstitution([share, "urdf", "panda.urdf"]),
            description="URDF of the robot, for the driver (--urdf) and the node (robot.urdf)",
        ),
        DeclareLaunchArgument(
            "autostart",
            default_value="true",
            description="true | false: the node commands the robot from the start (ros.active); "
            "'' = the params file's (shipped: false: inactive until "
            "`ros2 param set /gp_learning_node ros.active true`)",
        ),
        DeclareLaunchArgument(
            "on_command_timeout",
            default_value="",
            choices=["", "stop", "hold"],
            description="the driver's --on-command-timeout when the node's commands stop: stop = "
            "end the run | hold = hold the arm (gravity compensation + damping) until commands "
            "resume; '' = pass nothing (the driver's default: stop)",
        ),
        OpaqueFunction(function=_driver),
        OpaqueFunction(function=_node),
    ])
