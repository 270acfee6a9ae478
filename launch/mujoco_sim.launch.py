"""gp_learning_node controlling the MuJoCo robot of mujoco_driver/ (no ros2_control needed).

    ros2 launch gp_learning_node mujoco_sim.launch.py python:=/path/to/.venv/bin/python \
        [params_file:=FILE] [plugin:=rcagp] [urdf:=FILE]

Starts two processes on the same DDS domain ($ROS_DOMAIN_ID), both kept on the loopback
interface:
- the MuJoCo driver (`<python> <share>/mujoco_driver/mujoco_driver.py --params FILE --urdf
  URDF --publish-reference --localhost-only`): the robot. It publishes /joint_states and the
  reference trajectory on /gp_learning_node/reference, applies the effort commands of
  /effort_controller/commands in lock-step, and ends after the parameter file's
  `run.duration_s` of simulated time; the launch then shuts down (the node gets SIGINT).
  `python` must be a Python with the PyPI packages mujoco and cyclonedds (the repo's .venv:
  `python3 -m venv .venv && .venv/bin/pip install -r ci/requirements.txt`); the driver needs
  no ROS installation. See mujoco_driver/README.md.
- the node (`gp_learning_node run --params FILE`), in control mode, in the root namespace (the
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


def _node(context):
    parameters = {
        "use_sim_time": False,
        "ros.mode": "control",
        "robot.urdf": ParameterValue(LaunchConfiguration("urdf"), value_type=str),
    }
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
    driver = ExecuteProcess(
        cmd=[
            LaunchConfiguration("python"),
            PathJoinSubstitution([share, "mujoco_driver", "mujoco_driver.py"]),
            "--params", LaunchConfiguration("params_file"),
            "--urdf", LaunchConfiguration("urdf"),
            "--publish-reference",
            "--localhost-only",
        ],
        name="mujoco_driver",
        output="screen",
        on_exit=[Shutdown(reason="the MuJoCo driver ended")],
    )
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
            description="the node's model plugin (skygp, rcagp, vbks) with its default "
            "configuration; '' = the params file's (shipped: skygp)",
        ),
        DeclareLaunchArgument(
            "urdf",
            default_value=PathJoinSubstitution([share, "urdf", "panda.urdf"]),
            description="URDF of the robot, for the driver (--urdf) and the node (robot.urdf)",
        ),
        driver,
        OpaqueFunction(function=_node),
    ])
