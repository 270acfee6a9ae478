"""Operates a running `gp-node run` from an rclpy peer (ROS 2 Jazzy, rmw_fastrtps), as a user
would with `ros2 param` and `ros2 service call`, for node/tests/ros_ops.rs (while the MuJoCo
driver, a Cyclone DDS peer, runs the robot):

    ros_ops_peer.py DOMAIN_ID MODEL_DIR

(MODEL_DIR: the node's `ros.model_dir`; the services are given names inside it.)

1. waits until the node's learned model is in use (its ~/residual names a model);
2. parameters (rcl_interfaces services): get, a valid set, and refused sets (out of range,
   read-only, a plugin that does not exist);
3. the node's services: swap SkyGP-Fast → SkyGP-Dense → back to Fast, save the model, load
   it (by name inside the model directory), and paths (a plugin path; model files outside
   the directory: absolute, `..`) refused;
4. reads the parameters back;
5. announces a change (`~/announce_change`) and reads the probing trajectory the node then
   offers on `~/probe_offer` (the test node has `learn.probe.enabled`).
Prints a JSON report on stdout.
"""

import json
import math
import pathlib
import sys
import time

import rclpy
from gp_learning_node_msgs.msg import ResidualEstimate
from gp_learning_node_msgs.srv import AnnounceChange, LoadModel, SaveModel, SwapModel
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy_values import value_repr
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from trajectory_msgs.msg import JointTrajectory

NODE = "/gp_learning_node"


def double_array(values):
    return ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=list(values))


def string_value(text):
    return ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=text)


def main():
    domain = int(sys.argv[1])
    model_dir = pathlib.Path(sys.argv[2])
    rclpy.init(domain_id=domain)
    node = rclpy.create_node("ros_ops_peer")
    residuals = []
    node.create_subscription(ResidualEstimate, f"{NODE}/residual", residuals.append, 100)
    offers = []
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(JointTrajectory, f"{NODE}/probe_offer", offers.append, latched)
    clients = {
        "get": node.create_client(GetParameters, f"{NODE}/get_parameters"),
        "set": node.create_client(SetParameters, f"{NODE}/set_parameters"),
        "swap": node.create_client(SwapModel, f"{NODE}/swap_model"),
        "save": node.create_client(SaveModel, f"{NODE}/save_model"),
        "load": node.create_client(LoadModel, f"{NODE}/load_model"),
        "announce": node.create_client(AnnounceChange, f"{NODE}/announce_change"),
    }
    out = {"steps": []}

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(c.service_is_ready() for c in clients.values()):
        rclpy.spin_once(node, timeout_sec=0.05)
    out["services_discovered"] = all(c.service_is_ready() for c in clients.values())

    def call(name, request, timeout_s=120.0):
        future = clients[name].call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=timeout_s)
        if not future.done():
            raise TimeoutError(f"{name}: no reply in {timeout_s} s")
        return future.result()

    def wait_for(predicate, timeout_s):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not predicate():
            rclpy.spin_once(node, timeout_sec=0.05)

    def latest_model(samples_needed):
        models = [r.model for r in residuals if r.model and r.samples_seen >= samples_needed]
        return models[-1] if models else ""

    # 1. the learned model is in use.
    wait_for(lambda: latest_model(1), 90)
    out["model_in_use"] = latest_model(1)

    def step(name, **result):
        result["step"] = name
        out["steps"].append(result)

    # 2. parameters.
    names = ["control.kp_per_s2", "control.kd_per_s", "model.plugin", "model.config"]
    reply = call("get", GetParameters.Request(names=names))
    step("get", values={n: value_repr(v) for n, v in zip(names, reply.values)})

    def set_one(name, value):
        reply = call("set", SetParameters.Request(parameters=[Parameter(name=name, value=value)]))
        r = reply.results[0]
        return {"successful": r.successful, "reason": r.reason}

    step("set kd 22", **set_one("control.kd_per_s", double_array([22.0])))
    step("set kp -5 (refused)", **set_one("control.kp_per_s2", double_array([-5.0])))
    step("set joint_states topic (refused, read-only)", **set_one("ros.topics.joint_states", string_value("/other")))
    step("set plugin to a missing one (refused)", **set_one("model.plugin", string_value("no_such_plugin")))

    # 3. the node's services.
    for variant in ("dense", "fast"):
        r = call("swap", SwapModel.Request(plugin="skygp", config_json=json.dumps({"variant": variant})))
        step(f"swap to skygp {variant}", success=r.success, message=r.message)
    r = call("swap", SwapModel.Request(plugin="no_such_plugin", config_json="{}"))
    step("swap to a missing plugin (refused)", success=r.success, message=r.message)
    r = call("swap", SwapModel.Request(plugin="/tmp/libgpn_skygp.so", config_json="{}"))
    step("swap to a plugin path (refused)", success=r.success, message=r.message)
    r = call("save", SaveModel.Request(path="model.gpnmodel"))
    step("save", success=r.success, message=r.message, exists=(model_dir / "model.gpnmodel").exists())
    r = call("load", LoadModel.Request(path="model.gpnmodel"))
    step("load", success=r.success, message=r.message)
    r = call("load", LoadModel.Request(path="model.gpnmodel.missing"))
    step("load a missing file (refused)", success=r.success, message=r.message)
    r = call("load", LoadModel.Request(path=str((model_dir / "model.gpnmodel").resolve())))
    step("load an absolute path (refused)", success=r.success, message=r.message)
    r = call("save", SaveModel.Request(path="../escaped.gpnmodel"))
    step("save to .. (refused)", success=r.success, message=r.message)

    # 4. read back; the residual names the model again.
    reply = call("get", GetParameters.Request(names=names))
    step("get after", values={n: value_repr(v) for n, v in zip(names, reply.values)})
    residuals.clear()
    wait_for(lambda: latest_model(0), 10)
    out["model_after"] = latest_model(0)

    # 5. a change announced: the node rebuilds its model and offers a probe (or logs why not).
    r = call("announce", AnnounceChange.Request(description="test: payload picked up"))
    step("announce change", success=r.success, message=r.message)
    wait_for(lambda: offers, 15)
    if offers:
        offer = offers[-1]
        last = offer.points[-1].time_from_start if offer.points else None
        out["probe_offer"] = {
            "joint_names": list(offer.joint_names),
            "points": len(offer.points),
            "duration_s": last.sec + last.nanosec * 1e-9 if last else None,
            "returns_to_start": bool(offer.points)
            and list(offer.points[0].positions) == list(offer.points[-1].positions),
            "finite": all(
                math.isfinite(x) for p in offer.points for x in list(p.positions) + list(p.velocities)
            ),
        }
    print(json.dumps(out))
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
