"""An rclpy peer (ROS 2 Jazzy, rmw_fastrtps) of `gp-node run` for
testing/measure/loop_figures.sh with PEER=rclpy: plays the robot (joint_state_broadcaster +
effort controller) in lock-step over loopback and prints one JSON object on stdout, as
loopback_peer.py (the Cyclone DDS peer) does.

    loopback_peer_rclpy.py PARAMS_YAML DOMAIN_ID [N_STATES] [RATE_HZ]

The robot is the one of the parameter file (`robot.urdf`, relative to the file; empty: the
repository's urdf/panda.urdf): its movable joints, by name, moving slowly around the middle
of their limits. Sends N_STATES (default 2000) joint states, each answered by a command
before the next, paced at RATE_HZ (default 1000; 0: back to back); reports the round trip
(publish → command received) p50/p99/max in µs. Discovery stays on loopback
(ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST unless set).
"""

import json
import math
import os
import pathlib
import sys
import time
import xml.etree.ElementTree as ET

import yaml
from roundtrip import report

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import rclpy  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]


def robot_joints(params_yaml: str):
    """(names, middle of the limits) of the movable joints of the parameter file's robot."""
    params = yaml.safe_load(pathlib.Path(params_yaml).read_text())["gp_learning_node"]["ros__parameters"]
    urdf = (params.get("robot") or {}).get("urdf") or ""
    path = pathlib.Path(params_yaml).parent / urdf if urdf else REPO / "urdf/panda.urdf"
    names, middles = [], []
    for joint in ET.parse(path).getroot().iter("joint"):
        if joint.get("type") in ("fixed", "floating", "planar"):
            continue
        limit = joint.find("limit")
        lo = float(limit.get("lower", "nan")) if limit is not None else math.nan
        hi = float(limit.get("upper", "nan")) if limit is not None else math.nan
        names.append(joint.get("name"))
        middles.append(0.5 * (lo + hi) if math.isfinite(lo) and math.isfinite(hi) else 0.0)
    return names, middles


def main() -> None:
    joints, pose = robot_joints(sys.argv[1])
    domain = int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    rate = float(sys.argv[4]) if len(sys.argv) > 4 else 1000.0
    rclpy.init(domain_id=domain)
    node = rclpy.create_node("loopback_peer")
    answers = []
    node.create_subscription(
        Float64MultiArray,
        "/effort_controller/commands",
        lambda m: answers.append(time.perf_counter()),
        QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE),
    )
    states = node.create_publisher(JointState, "/joint_states", QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    deadline = time.monotonic() + 30
    while not (states.get_subscription_count() and node.count_publishers("/effort_controller/commands")):
        if time.monotonic() > deadline:
            print(json.dumps({"error": "the node was not discovered within 30 s"}))
            sys.exit(1)
        rclpy.spin_once(node, timeout_sec=0.01)
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.01)
    answers.clear()

    period = 1.0 / rate if rate > 0 else 0.0
    dt = period if rate > 0 else 0.001
    rtt, unanswered = [], 0
    msg = JointState(name=list(joints), velocity=[0.0] * len(joints))
    t0 = time.perf_counter()
    for k in range(n):
        if period:
            wait = t0 + k * period - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        while answers:  # a late answer to an earlier state must not count for this one
            answers.clear()
            rclpy.spin_once(node, timeout_sec=0)
        t = 1.0 + k * dt
        msg.header.stamp.sec = int(math.floor(t))
        msg.header.stamp.nanosec = int(round((t - math.floor(t)) * 1e9))
        msg.position = [x + 0.05 * math.sin(0.5 * t + j) for j, x in enumerate(pose)]
        msg.velocity = [0.025 * math.cos(0.5 * t + j) for j in range(len(pose))]
        start = time.perf_counter()
        states.publish(msg)
        limit = start + 1.0
        while not answers and time.perf_counter() < limit:
            rclpy.spin_once(node, timeout_sec=0.001)
        if answers:
            rtt.append((answers[0] - start) * 1e6)
            answers.clear()
        else:
            unanswered += 1
    print(report(n, rtt, unanswered, rate, time.perf_counter() - t0))
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
