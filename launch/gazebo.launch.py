"""gp_learning_node controlling a robot in Gazebo (gz sim Harmonic) through ros2_control.

    ros2 launch gp_learning_node gazebo.launch.py [urdf:=/path/robot.urdf] [world:=FILE] \
        [params_file:=FILE] [plugin:=rcagp] [autostart:=true]

Needs (not installed by this package; Debian packages of ROS 2 Jazzy):
ros-jazzy-ros-gz-sim, ros-jazzy-ros-gz-bridge, ros-jazzy-gz-ros2-control,
ros-jazzy-robot-state-publisher, ros-jazzy-controller-manager,
ros-jazzy-joint-state-broadcaster, ros-jazzy-forward-command-controller, ros-jazzy-xacro.

What it starts:
1. `gp_learning_node ros2-control` (at launch time) derives from the robot the joints the node
   commands and writes the controllers YAML (controller manager at 1 kHz,
   joint_state_broadcaster, effort_controller: a ForwardCommandController on the effort
   interface of those joints, in the node's order) into a temporary folder;
2. the robot description: urdf/ros2_control.urdf.xacro expanded (xacro) around the URDF, with
   the `<ros2_control>` block of those joints on gz_ros2_control/GazeboSimSystem and the
   gz_ros2_control system plugin reading that controllers YAML;
3. gz sim running `world` (default: the installed config/gazebo/empty.sdf, 1 ms steps);
4. robot_state_publisher publishing that description on /robot_description (and TF);
5. ros_gz_sim `create` spawning the robot from /robot_description;
6. ros_gz_bridge bridging gz's clock to /clock;
7. the controller manager's spawners for joint_state_broadcaster and effort_controller
   (the controller manager itself runs inside gz sim, in gz_ros2_control);
8. the node (`gp_learning_node run --params FILE`) with `use_sim_time` true and `robot.urdf`
   the URDF, active from the start by default (autostart): a robot in Gazebo whose effort
   controller gets no command falls.
Every process uses simulated time. Gazebo itself cannot run on the machines that test this
package; the tests check everything up to it (testing/launch_tests/test_gazebo_launch.py).

Arguments
- urdf: the robot (a URDF file; default: the installed urdf/panda.urdf). Links need
  inertials and collisions for Gazebo; a URDF that already has a `<ros2_control>` block gets
  a second one (see `gp-node ros2-control`'s warning): remove its own first.
- world: the SDF world (default: the installed config/gazebo/empty.sdf).
- params_file: the node's parameter file (default: the installed config/sim_default.yaml).
- plugin: the node's model plugin, with its default configuration; '' = the file's.
- autostart: true | false: the node's `ros.active` (default true).
"""

import os
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import ExecutableInPackage, FindPackageShare

PACKAGE = "gp_learning_node"
CONTROLLERS = ("joint_state_broadcaster", "effort_controller")


def _ros2_control(executable, params_file, urdf, what):
    """`gp_learning_node ros2-control --print WHAT` for the robot; a clear error if it fails."""
    done = subprocess.run(
        [executable, "ros2-control", "--params", params_file, "--urdf", urdf, "--print", what],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{executable} ros2-control --urdf {urdf} failed ({done.returncode}): {done.stderr.strip()}"
        )
    return done.stdout


def _description(share, urdf, joints, controllers, name):
    """The robot description: the URDF with the node's ros2_control block for Gazebo."""
    import xacro  # ros-jazzy-xacro (PyPI: xacro)

    doc = xacro.process_file(
        os.path.join(share, "urdf", "ros2_control.urdf.xacro"),
        mappings={
            "urdf": urdf,
            "joints": joints,
            "plugin": "gz_ros2_control/GazeboSimSystem",
            "controllers": controllers,
            "name": name,
        },
    )
    return doc.toxml()


def _everything(context):
    share = FindPackageShare(PACKAGE).perform(context)
    executable = ExecutableInPackage(package=PACKAGE, executable=PACKAGE).perform(context)
    params_file = LaunchConfiguration("params_file").perform(context)
    urdf = os.path.abspath(LaunchConfiguration("urdf").perform(context))
    if not os.path.isfile(urdf):
        raise RuntimeError(f"urdf:={urdf}: no such file")
    world = os.path.abspath(LaunchConfiguration("world").perform(context))
    if not os.path.isfile(world):
        raise RuntimeError(f"world:={world}: no such file")
    world_name = ET.parse(world).getroot().find("world").get("name")
    robot_name = ET.parse(urdf).getroot().get("name") or "robot"

    joints = _ros2_control(executable, params_file, urdf, "joints").strip()
    folder = tempfile.mkdtemp(prefix="gp_learning_node_gazebo_")
    controllers = os.path.join(folder, "ros2_controllers.yaml")
    with open(controllers, "w") as f:
        f.write(_ros2_control(executable, params_file, urdf, "controllers"))
    description = _description(share, urdf, joints, controllers, robot_name)

    sim_time = {"use_sim_time": True}
    node_overrides = {"use_sim_time": True, "robot.urdf": urdf}
    autostart = LaunchConfiguration("autostart").perform(context)
    if autostart:
        node_overrides["ros.active"] = ParameterValue(LaunchConfiguration("autostart"), value_type=bool)
    plugin = LaunchConfiguration("plugin").perform(context)
    if plugin:
        node_overrides.update({"model.plugin": plugin, "model.config": "{}"})
    spawners = [
        Node(
            package="controller_manager",
            executable="spawner",
            arguments=[c, "--controller-manager", "/controller_manager"],
            parameters=[sim_time],
            output="screen",
        )
        for c in CONTROLLERS
    ]
    return [
        ExecuteProcess(cmd=["gz", "sim", "-r", world], name="gz_sim", output="screen"),
        Node(
            package="robot_state_publisher",
            executable="robot_state_publisher",
            parameters=[{"robot_description": ParameterValue(description, value_type=str), **sim_time}],
            output="screen",
        ),
        Node(
            package="ros_gz_sim",
            executable="create",
            arguments=["-world", world_name, "-topic", "robot_description", "-name", robot_name],
            output="screen",
        ),
        Node(
            package="ros_gz_bridge",
            executable="parameter_bridge",
            arguments=["/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock"],
            output="screen",
        ),
        *spawners,
        Node(
            package=PACKAGE,
            executable="gp_learning_node",
            name="gp_learning_node",
            arguments=["run", "--params", params_file],
            parameters=[node_overrides],
            output="screen",
        ),
    ]


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument(
            "urdf",
            default_value=PathJoinSubstitution([share, "urdf", "panda.urdf"]),
            description="the robot's URDF (Gazebo needs inertials and collisions)",
        ),
        DeclareLaunchArgument(
            "world",
            default_value=PathJoinSubstitution([share, "config", "gazebo", "empty.sdf"]),
            description="the SDF world gz sim runs",
        ),
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution([share, "config", "sim_default.yaml"]),
            description="the node's parameter file",
        ),
        DeclareLaunchArgument(
            "plugin",
            default_value="",
            description="model plugin with its default configuration; '' = the params file's",
        ),
        DeclareLaunchArgument(
            "autostart",
            default_value="true",
            description="true | false: the node commands the robot from the start (ros.active)",
        ),
        OpaqueFunction(function=_everything),
    ])
