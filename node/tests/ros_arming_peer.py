"""Arming from a real ROS 2 client (rclpy, Jazzy) for node/tests/ros_arming.rs:

    ros_arming_peer.py DOMAIN_ID

Streams joint states of a robot at rest at a fixed pose (100 Hz, stamped, no effort) on
/joint_states and listens on /effort_controller/commands:
1. for 1.5 s while the node is inactive (it was started without --autostart): counts commands;
2. sets the parameter ros.active to true through /gp_learning_node/set_parameters;
3. streams 1.5 s more: counts commands and keeps the first one;
4. sets ros.active back to false, streams 1 s, then counts the commands of 1 s more;
5. prints a JSON report on stdout.
"""

import json
import sys
import time

import rclpy
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

NODE = "/gp_learning_node"
JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
POSE = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8]


def main():
    rclpy.init(args=["--ros-args"], domain_id=int(sys.argv[1]))
    node = rclpy.create_node("arming_peer")
    states = node.create_publisher(JointState, "/joint_states", 10)
    commands = []
    node.create_subscription(Float64MultiArray, "/effort_controller/commands", lambda m: commands.append(list(m.data)), 10)
    client = node.create_client(SetParameters, f"{NODE}/set_parameters")

    def stream(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            msg = JointState()
            msg.header.stamp = node.get_clock().now().to_msg()
            msg.name = JOINTS
            msg.position = POSE
            msg.velocity = [0.0] * 7
            states.publish(msg)
            rclpy.spin_once(node, timeout_sec=0.01)

    report = {}
    if not client.wait_for_service(timeout_sec=60.0):
        print(json.dumps({"error": "no set_parameters service"}))
        return
    stream(1.5)
    report["commands_while_inactive"] = len(commands)
    value = ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=True)
    future = client.call_async(SetParameters.Request(parameters=[Parameter(name="ros.active", value=value)]))
    rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)
    result = future.result()
    report["activation_accepted"] = bool(result and result.results[0].successful)
    before = len(commands)
    stream(1.5)
    report["commands_after_activation"] = len(commands) - before
    report["first_command"] = commands[before] if len(commands) > before else None
    report["last_command"] = commands[-1] if commands else None
    report["pose"] = POSE
    value = ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=False)
    future = client.call_async(SetParameters.Request(parameters=[Parameter(name="ros.active", value=value)]))
    rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)
    result = future.result()
    report["deactivation_accepted"] = bool(result and result.results[0].successful)
    stream(1.0)
    report["command_after_deactivation"] = commands[-1] if commands else None
    before = len(commands)
    stream(1.0)
    report["commands_once_inactive"] = len(commands) - before
    print(json.dumps(report))
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
