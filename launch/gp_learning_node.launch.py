"""ros2 launch file for gp-learning-node beside a robot's ros2_control stack.

    ros2 launch launch/gp_learning_node.launch.py params:=/path/to/params.yaml [mode:=learn]

`gp-node` is a plain executable (built with `--features ros`; not yet installed as a colcon
package, so no `Node` action: the packaging issue), started with ExecuteProcess; arguments
after `--ros-args` go to rcl. The robot's ros2_control must run an effort controller that reads
std_msgs/Float64MultiArray on the node's `ros.topics.command` (default
/effort_controller/commands), e.g. `effort_controllers/JointGroupEffortController` named
`effort_controller`, with the joints in URDF order. Untested here: PyPI has no `launch`
package of ROS 2 (see the README).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.substitutions import LaunchConfiguration


def generate_launch_description():
    params = LaunchConfiguration("params")
    mode = LaunchConfiguration("mode")
    gp_node = LaunchConfiguration("gp_node")
    return LaunchDescription([
        DeclareLaunchArgument("params", description="parameter YAML (gp_learning_node: ros__parameters: ...)"),
        DeclareLaunchArgument("mode", default_value="control", description="control | learn"),
        DeclareLaunchArgument("gp_node", default_value="gp-node", description="path of the gp-node executable"),
        ExecuteProcess(
            cmd=[gp_node, "run", "--params", params, "--mode", mode],
            output="screen",
            sigterm_timeout="5",
        ),
    ])
