"""An rclpy peer (ROS 2 Jazzy, rmw_fastrtps) of `gp-node run` for node/tests/ros_rcl.rs: what
rcl gives every node, seen from a real ROS 2 client.

    ros_rcl_peer.py names DOMAIN_ID   # the node started with --ros-args remaps, -p, --params-file
    ros_rcl_peer.py clock DOMAIN_ID   # the node started with -p use_sim_time:=true

`names`: the node's name and namespace in the graph; `ros2 param list/get/describe/set`
through the parameter services (values from every override form, descriptors, valid and
refused sets, an atomic set refused whole); joint states on the remapped topic answered by
commands on the absolute topic; the residual under the node's namespace; a service call.
`clock`: publishes /clock from t = 1000 s and reads the stamps of /diagnostics.
Prints one JSON object on stdout.
"""

import json
import math
import sys
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from gp_learning_node_msgs.msg import ResidualEstimate
from gp_learning_node_msgs.srv import AnnounceChange
from rcl_interfaces.msg import Log, Parameter, ParameterEvent, ParameterType, ParameterValue
from rcl_interfaces.srv import (
    DescribeParameters,
    GetParameters,
    GetParameterTypes,
    ListParameters,
    SetParameters,
    SetParametersAtomically,
)
from rclpy_values import value_repr
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
POSE = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]


class Peer:
    def __init__(self, domain: int):
        rclpy.init(domain_id=domain)
        self.node = rclpy.create_node("ros_rcl_peer")

    def wait_for(self, predicate, timeout_s):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not predicate():
            rclpy.spin_once(self.node, timeout_sec=0.02)
        return predicate()

    def call(self, client, request, timeout_s=30.0):
        future = client.call_async(request)
        rclpy.spin_until_future_complete(self.node, future, timeout_sec=timeout_s)
        if not future.done():
            raise TimeoutError(f"{client.srv_name}: no reply in {timeout_s} s")
        return future.result()


def names(domain: int) -> dict:
    peer = Peer(domain)
    node, fqn = peer.node, "/arm1/arm_learner"
    out = {}
    # /rosout keeps the last lines for late joiners (transient local); /parameter_events not.
    rosout, events = [], []
    history = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(Log, "/rosout", lambda m: rosout.append((m.name, m.level, m.msg)), history)
    node.create_subscription(
        ParameterEvent,
        "/parameter_events",
        lambda e: events.append(
            {"node": e.node, "changed": {p.name: value_repr(p.value) for p in e.changed_parameters}}
        ),
        QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE),
    )
    out["graph"] = peer.wait_for(
        lambda: ("arm_learner", "/arm1") in node.get_node_names_and_namespaces(), 30
    )
    clients = {
        t.__name__: node.create_client(t, f"{fqn}/{srv}")
        for t, srv in [
            (ListParameters, "list_parameters"),
            (GetParameters, "get_parameters"),
            (GetParameterTypes, "get_parameter_types"),
            (DescribeParameters, "describe_parameters"),
            (SetParameters, "set_parameters"),
            (SetParametersAtomically, "set_parameters_atomically"),
            (AnnounceChange, "announce_change"),
        ]
    }
    out["services"] = peer.wait_for(lambda: all(c.service_is_ready() for c in clients.values()), 30)

    listed = peer.call(clients["ListParameters"], ListParameters.Request())
    out["list"] = sorted(listed.result.names)
    out["list_prefixes"] = sorted(listed.result.prefixes)
    under_ros = peer.call(clients["ListParameters"], ListParameters.Request(prefixes=["ros.topics"], depth=0))
    out["list_ros_topics"] = sorted(under_ros.result.names)

    wanted = [
        "control.epsilon",
        "control.kd_per_s",
        "learn.admit_every",
        "ros.residual_every",
        "control.effort_limit_fraction",
        "ros.node_name",
        "ros.namespace",
        "ros.domain_id",
        "use_sim_time",
        "no.such.parameter",
    ]

    def get(names_):
        reply = peer.call(clients["GetParameters"], GetParameters.Request(names=names_))
        return {n: value_repr(v) for n, v in zip(names_, reply.values)}

    out["get"] = get(wanted)
    types = peer.call(clients["GetParameterTypes"], GetParameterTypes.Request(names=wanted))
    out["types"] = dict(zip(wanted, [int(t) for t in types.types]))
    described = peer.call(
        clients["DescribeParameters"],
        DescribeParameters.Request(names=["ros.watchdog_timeout_s", "robot.urdf", "learn.admit_every", "ros.mode"]),
    )
    out["describe"] = {
        d.name: {
            "type": int(d.type),
            "read_only": d.read_only,
            "description": d.description,
            "additional_constraints": d.additional_constraints,
            "floating_point_range": [[r.from_value, r.to_value] for r in d.floating_point_range],
            "integer_range": [[r.from_value, r.to_value, r.step] for r in d.integer_range],
        }
        for d in described.descriptors
    }

    def double(x):
        return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=x)

    def set_each(pairs):
        request = SetParameters.Request(parameters=[Parameter(name=n, value=v) for n, v in pairs])
        reply = peer.call(clients["SetParameters"], request, timeout_s=60)
        return [{"successful": r.successful, "reason": r.reason} for r in reply.results]

    out["set_epsilon"] = set_each([("control.epsilon", double(3.0))])
    out["set_refused"] = set_each(
        [
            ("control.epsilon", double(1e12)),
            ("robot.urdf", ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="/x.urdf")),
            ("no.such.parameter", double(1.0)),
            ("control.epsilon", ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="soft")),
        ]
    )
    atomic = peer.call(
        clients["SetParametersAtomically"],
        SetParametersAtomically.Request(
            parameters=[
                Parameter(name="control.epsilon", value=double(3.5)),
                Parameter(
                    name="control.kp_per_s2",
                    value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=[-1.0]),
                ),
            ]
        ),
    )
    out["set_atomic_refused"] = {"successful": atomic.result.successful, "reason": atomic.result.reason}
    out["get_after"] = get(["control.epsilon", "control.kp_per_s2"])

    # Topics: joint states on the remapped topic; commands on the absolute one (a remap of
    # another name leaves it alone); the residual under the node's namespace.
    commands, residuals = [], []
    node.create_subscription(Float64MultiArray, "/effort_controller/commands", commands.append, 100)
    node.create_subscription(ResidualEstimate, f"{fqn}/residual", residuals.append, 100)
    states = node.create_publisher(JointState, "/arm1/robot/joint_states", 10)
    out["matched"] = peer.wait_for(
        lambda: states.get_subscription_count() > 0 and node.count_publishers("/effort_controller/commands") > 0, 30
    )
    t0 = time.time()
    for i in range(200):
        msg = JointState(name=JOINTS, position=POSE, velocity=[0.0] * 7)
        t = t0 + i * 0.005
        msg.header.stamp.sec = int(t)
        msg.header.stamp.nanosec = int((t - int(t)) * 1e9)
        states.publish(msg)
        rclpy.spin_once(node, timeout_sec=0.005)
    peer.wait_for(lambda: len(commands) >= 150, 5)
    out["commands"] = len(commands)
    out["commands_finite"] = all(len(c.data) == 7 and all(math.isfinite(x) for x in c.data) for c in commands)
    out["residuals"] = len(residuals)
    # Type hashes (REP 2011): the node's publisher carries the hash rosidl computed for the
    # type, the same as an rclpy publisher of it.
    theirs = node.get_publishers_info_by_topic(f"{fqn}/residual")
    node.create_publisher(ResidualEstimate, "/ros_rcl_peer/residual_probe", 1)
    ours = node.get_publishers_info_by_topic("/ros_rcl_peer/residual_probe")
    out["type_hashes"] = {
        "node": [str(i.topic_type_hash) for i in theirs],
        "rclpy": [str(i.topic_type_hash) for i in ours],
    }
    reply = peer.call(clients["AnnounceChange"], AnnounceChange.Request(description="rcl test"))
    out["announce"] = {"success": reply.success, "message": reply.message}
    peer.wait_for(lambda: any(e["node"] == fqn for e in events), 5)
    out["parameter_events"] = [e for e in events if e["node"] == fqn]
    out["rosout"] = [{"name": n, "level": int(lv), "msg": m} for n, lv, m in rosout if n == "arm1.arm_learner"]
    return out


def clock(domain: int) -> dict:
    peer = Peer(domain)
    node = peer.node
    stamps = []
    node.create_subscription(
        DiagnosticArray, "/diagnostics", lambda m: stamps.append(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9), 10
    )
    clock_pub = node.create_publisher(Clock, "/clock", 10)
    peer.wait_for(lambda: clock_pub.get_subscription_count() > 0, 30)
    start = time.monotonic()
    sim_t = 1000.0
    while time.monotonic() - start < 4.0:
        msg = Clock()
        msg.clock.sec = int(sim_t)
        msg.clock.nanosec = int(round((sim_t - int(sim_t)) * 1e9))
        clock_pub.publish(msg)
        sim_t += 0.01
        rclpy.spin_once(node, timeout_sec=0.01)
    return {"diagnostic_stamps": stamps, "clock_last": sim_t, "wall": time.time()}


if __name__ == "__main__":
    mode, domain = sys.argv[1], int(sys.argv[2])
    result = {"names": names, "clock": clock}[mode](domain)
    print(json.dumps(result))
    rclpy.shutdown()
