"""What a ROS 2 robot feeds `gp-node run`, from an rclpy peer (ROS 2 Jazzy, rmw_fastrtps), for
node/tests/ros_inputs.rs:

    ros_inputs_peer.py DOMAIN_ID URDF READY_FILE [bad-first]

1. publishes the URDF on /robot_description as robot_state_publisher does (std_msgs/String,
   reliable, transient local, depth 1) and then writes READY_FILE: the test starts the node
   only after that, so the node gets the description from the writer's history;
2. waits for the node's /diagnostics, then streams joint states at 100 Hz with, between valid
   ones, messages the node must refuse, each kind a known number of times;
3. publishes references on ~/reference: a valid one from a transient-local writer (both of
   the node's readers get it: counted once), a valid one from a default (volatile) writer,
   and one of each refused kind from the volatile writer;
4. reads /diagnostics once more and prints a JSON report (what was sent, the key/values of
   the node's statuses) on stdout.

With `bad-first`, step 1 publishes a description that is not a URDF, waits 3 s (the node
refuses it and keeps waiting), then publishes the URDF, waits for the node's /diagnostics
and prints {"joints": n}.
"""

import json
import math
import pathlib
import sys
import time
import xml.etree.ElementTree as ET

import rclpy
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

NODE = "/gp_learning_node"

# Refused joint states sent, by the node's reason key (each between valid states).
BAD_STATES = {"missing_joint": 2, "duplicate_joint": 1, "length": 3, "non_finite": 4, "stamp": 1, "out_of_order": 2}
# Refused references sent, by reason key.
BAD_REFERENCES = ["empty", "joint_names", "length", "non_finite", "time_not_increasing", "stamp", "beyond_limits"]


def movable_joints(urdf_text):
    """(name, lower, upper) of the movable joints in file order (a serial chain's order)."""
    joints = []
    for j in ET.fromstring(urdf_text).iter("joint"):
        if j.get("type") in ("revolute", "prismatic", "continuous"):
            limit = j.find("limit")
            lower = float(limit.get("lower", "-3.14")) if limit is not None else -3.14
            upper = float(limit.get("upper", "3.14")) if limit is not None else 3.14
            joints.append((j.get("name"), lower, upper))
    return joints


def stamp_of(secs):
    ns = round(secs * 1e9)
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def main():
    domain, urdf_path, ready = int(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    urdf = urdf_path.read_text()
    joints = movable_joints(urdf)
    names = [j[0] for j in joints]
    mid = [(lo + hi) / 2 for _, lo, hi in joints]
    n = len(names)

    rclpy.init(domain_id=domain)
    node = rclpy.create_node("ros_inputs_peer")
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    description = node.create_publisher(String, "/robot_description", latched)
    bad_first = sys.argv[4:] == ["bad-first"]
    description.publish(String(data="<robot name='half' >" if bad_first else urdf))
    ready.write_text("published\n")

    diagnostics = []
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    if bad_first:
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
        description.publish(String(data=urdf))
    states = node.create_publisher(JointState, "/joint_states", 10)
    reference_latched = node.create_publisher(JointTrajectory, f"{NODE}/reference", latched)
    reference_volatile = node.create_publisher(JointTrajectory, f"{NODE}/reference", 10)

    deadline = time.monotonic() + 60.0
    while not diagnostics and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.1)
    if not diagnostics:
        print(json.dumps({"error": "no /diagnostics from the node within 60 s"}))
        return
    if bad_first:
        print(json.dumps({"joints": n}))
        return

    t = [1.0]

    def state(names_=None, position=None, velocity=None, stamp=None):
        msg = JointState()
        msg.header.stamp = stamp_of(t[0] if stamp is None else stamp)
        msg.name = list(names if names_ is None else names_)
        msg.position = list(mid if position is None else position)
        msg.velocity = list([0.0] * n if velocity is None else velocity)
        msg.effort = [0.0] * len(msg.name)
        return msg

    def good():
        t[0] += 0.01
        states.publish(state())
        rclpy.spin_once(node, timeout_sec=0.01)

    def bad(kind):
        if kind == "missing_joint":
            msg = state(names_=names[:-1], position=mid[:-1], velocity=[0.0] * (n - 1))
        elif kind == "duplicate_joint":
            msg = state(names_=names[:-1] + [names[0]])
        elif kind == "length":
            msg = state(position=mid[:-1])
        elif kind == "non_finite":
            msg = state(velocity=[math.nan] + [0.0] * (n - 1))
        elif kind == "stamp":
            msg = state()
            msg.header.stamp = Time(sec=int(t[0]), nanosec=1_500_000_000)
        elif kind == "out_of_order":
            msg = state(stamp=t[0] - 0.5)
        states.publish(msg)

    for _ in range(50):
        good()
    sent_states = {}
    for kind, count in BAD_STATES.items():
        for _ in range(count):
            bad(kind)
            sent_states[kind] = sent_states.get(kind, 0) + 1
            for _ in range(3):
                good()

    def trajectory(positions=None, names_=None, times=(0.5, 1.0)):
        msg = JointTrajectory()
        msg.joint_names = list(names if names_ is None else names_)
        for k, secs in enumerate(times):
            point = JointTrajectoryPoint()
            point.positions = list(mid if positions is None else positions[k])
            point.time_from_start = Duration(sec=int(secs), nanosec=int(round((secs % 1) * 1e9)))
            msg.points.append(point)
        return msg

    reference_latched.publish(trajectory())
    for _ in range(20):
        good()
    shifted = [m + 0.01 for m in mid]
    reference_volatile.publish(trajectory(positions=[shifted, shifted]))
    for _ in range(20):
        good()
    for kind in BAD_REFERENCES:
        if kind == "empty":
            msg = JointTrajectory(joint_names=names)
        elif kind == "joint_names":
            msg = trajectory(names_=names[:-1] + ["not_a_joint_of_the_robot"])
        elif kind == "length":
            msg = trajectory(positions=[mid[:-1], mid[:-1]])
        elif kind == "non_finite":
            msg = trajectory(positions=[mid, [math.inf] + mid[1:]])
        elif kind == "time_not_increasing":
            msg = trajectory(times=(1.0, 0.5))
        elif kind == "stamp":
            msg = trajectory()
            msg.header.stamp = Time(sec=0, nanosec=1_560_281_588)  # not a time (found by fuzzing)
        else:
            msg = trajectory(positions=[mid, [joints[0][2] + 0.5] + mid[1:]])
        reference_volatile.publish(msg)
        for _ in range(10):
            good()

    # Keep the robot alive until a diagnostics message written after the last refusal.
    seen = len(diagnostics)
    deadline = time.monotonic() + 5.0
    while len(diagnostics) < seen + 2 and time.monotonic() < deadline:
        good()
    last = diagnostics[-1]
    statuses = {s.name.split(": ", 1)[-1]: {kv.key: kv.value for kv in s.values} for s in last.status}
    print(json.dumps({
        "joints": n,
        "sent_states": sent_states,
        "sent_references_refused": BAD_REFERENCES,
        "statuses": statuses,
        "levels": {s.name.split(": ", 1)[-1]: int.from_bytes(s.level, "little") if isinstance(s.level, bytes) else int(s.level) for s in last.status},
    }))
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
