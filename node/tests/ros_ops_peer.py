"""Operates a running `gp-node run` from a Cyclone DDS peer, as a user would with `ros2 param`
and `ros2 service call`, for node/tests/ros_ops.rs (while the MuJoCo driver runs the robot):

    ros_ops_peer.py DOMAIN_ID MODEL_DIR

(MODEL_DIR: the node's `ros.model_dir`; the services are given names inside it.)

1. waits until the node's learned model is in use (its ~/residual names a model);
2. parameters (rcl_interfaces services, the framing ros2-client uses for them: no request
   header, as rmw_fastrtps): get, a valid set, and refused sets (out of range, read-only,
   a plugin that does not exist);
3. the node's services with rmw_cyclonedds' framing (a 16-byte client header before the
   request): swap SkyGP-Fast → SkyGP-Dense → back to Fast, save the model, load it (by
   name inside the model directory), and paths (a plugin path; model files outside the
   directory: absolute, `..`) refused;
4. reads the parameters back;
5. announces a change (`~/announce_change`, Cyclone framing) and reads the probing
   trajectory the node then offers on `~/probe_offer` (the test node has `learn.probe.enabled`).
Prints a JSON report on stdout.
"""

import json
import math
import pathlib
import sys
import time
from dataclasses import dataclass, field

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "mujoco_driver"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.types import float64, int64, sequence, uint8, uint64  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

from gpn_mujoco.messages import JointTrajectory_  # noqa: E402
from gpn_mujoco.transport import REFERENCE_QOS, use_localhost_only  # noqa: E402
from ros_peer import ResidualEstimate_  # noqa: E402

NODE = "gp_learning_node"
RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))


# rcl_interfaces (ROS 2 Jazzy), as rosbags' store defines them.
@dataclass
class ParameterValue_(IdlStruct, typename="rcl_interfaces::msg::dds_::ParameterValue_"):
    type: uint8 = 0
    bool_value: bool = False
    integer_value: int64 = 0
    double_value: float64 = 0.0
    string_value: str = ""
    byte_array_value: sequence[uint8] = field(default_factory=list)
    bool_array_value: sequence[bool] = field(default_factory=list)
    integer_array_value: sequence[int64] = field(default_factory=list)
    double_array_value: sequence[float64] = field(default_factory=list)
    string_array_value: sequence[str] = field(default_factory=list)


@dataclass
class Parameter_(IdlStruct, typename="rcl_interfaces::msg::dds_::Parameter_"):
    name: str = ""
    value: ParameterValue_ = field(default_factory=ParameterValue_)


@dataclass
class SetParametersResult_(IdlStruct, typename="rcl_interfaces::msg::dds_::SetParametersResult_"):
    successful: bool = False
    reason: str = ""


@dataclass
class GetParametersRequest_(IdlStruct, typename="rcl_interfaces::srv::dds_::GetParameters_Request_"):
    names: sequence[str] = field(default_factory=list)


@dataclass
class GetParametersResponse_(IdlStruct, typename="rcl_interfaces::srv::dds_::GetParameters_Response_"):
    values: sequence[ParameterValue_] = field(default_factory=list)


@dataclass
class SetParametersRequest_(IdlStruct, typename="rcl_interfaces::srv::dds_::SetParameters_Request_"):
    parameters: sequence[Parameter_] = field(default_factory=list)


@dataclass
class SetParametersResponse_(IdlStruct, typename="rcl_interfaces::srv::dds_::SetParameters_Response_"):
    results: sequence[SetParametersResult_] = field(default_factory=list)


# Our services, each half led by rmw_cyclonedds' request header (client id, sequence number).
@dataclass
class SwapModelRequest_(IdlStruct, typename="gp_learning_node_msgs::srv::dds_::SwapModel_Request_"):
    client: uint64 = 0
    seq: int64 = 0
    plugin: str = ""
    config_json: str = ""


@dataclass
class PathRequest_Save(IdlStruct, typename="gp_learning_node_msgs::srv::dds_::SaveModel_Request_"):
    client: uint64 = 0
    seq: int64 = 0
    path: str = ""


@dataclass
class PathRequest_Load(IdlStruct, typename="gp_learning_node_msgs::srv::dds_::LoadModel_Request_"):
    client: uint64 = 0
    seq: int64 = 0
    path: str = ""


@dataclass
class AnnounceChangeRequest_(IdlStruct, typename="gp_learning_node_msgs::srv::dds_::AnnounceChange_Request_"):
    client: uint64 = 0
    seq: int64 = 0
    description: str = ""


def response_type(name: str):
    @dataclass
    class Response(IdlStruct, typename=f"gp_learning_node_msgs::srv::dds_::{name}_Response_"):
        client: uint64 = 0
        seq: int64 = 0
        success: bool = False
        message: str = ""

    return Response


class Service:
    """A client of one service: request writer and reply reader."""

    def __init__(self, dp, name, request_type, reply_type, framed):
        self.writer = DataWriter(dp, Topic(dp, f"rq/{NODE}/{name}Request", request_type), qos=RELIABLE)
        self.reader = DataReader(dp, Topic(dp, f"rr/{NODE}/{name}Reply", reply_type), qos=RELIABLE)
        self.reply_type = reply_type
        self.framed = framed
        self.seq = 0
        self.name = name

    def ready(self):
        return self.writer.get_matched_subscriptions() and self.reader.get_matched_publications()

    def call(self, request, timeout_s=120.0):
        if self.framed:
            self.seq += 1
            request.client = 0x1122334455667788
            request.seq = self.seq
        self.writer.write(request)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for reply in self.reader.take(N=10):
                if not isinstance(reply, self.reply_type):
                    continue
                if self.framed and (reply.client != 0x1122334455667788 or reply.seq != self.seq):
                    continue
                return reply
            time.sleep(0.002)
        raise TimeoutError(f"{self.name}: no reply in {timeout_s} s")


def double_array(values):
    return ParameterValue_(type=8, double_array_value=list(values))


def value_repr(v: ParameterValue_):
    return {
        1: lambda: v.bool_value,
        2: lambda: v.integer_value,
        3: lambda: v.double_value,
        4: lambda: v.string_value,
        8: lambda: list(v.double_array_value),
    }.get(v.type, lambda: None)()


def main():
    domain = int(sys.argv[1])
    model_dir = pathlib.Path(sys.argv[2])
    use_localhost_only()
    dp = DomainParticipant(domain)
    residuals = DataReader(dp, Topic(dp, f"rt/{NODE}/residual", ResidualEstimate_), qos=RELIABLE)
    get_p = Service(dp, "get_parameters", GetParametersRequest_, GetParametersResponse_, framed=False)
    set_p = Service(dp, "set_parameters", SetParametersRequest_, SetParametersResponse_, framed=False)
    swap = Service(dp, "swap_model", SwapModelRequest_, response_type("SwapModel"), framed=True)
    save = Service(dp, "save_model", PathRequest_Save, response_type("SaveModel"), framed=True)
    load = Service(dp, "load_model", PathRequest_Load, response_type("LoadModel"), framed=True)
    announce = Service(dp, "announce_change", AnnounceChangeRequest_, response_type("AnnounceChange"), framed=True)
    offers = DataReader(dp, Topic(dp, f"rt/{NODE}/probe_offer", JointTrajectory_), qos=REFERENCE_QOS)
    out = {"steps": []}

    deadline = time.monotonic() + 60
    services = (get_p, set_p, swap, save, load, announce)
    while time.monotonic() < deadline and not all(s.ready() for s in services):
        time.sleep(0.05)
    out["services_discovered"] = all(s.ready() for s in services)

    # 1. the learned model is in use.
    model, deadline = "", time.monotonic() + 90
    while time.monotonic() < deadline and not model:
        for r in residuals.take(N=1000):
            if isinstance(r, ResidualEstimate_) and r.model and r.samples_seen > 0:
                model = r.model
        time.sleep(0.05)
    out["model_in_use"] = model

    def step(name, **result):
        result["step"] = name
        out["steps"].append(result)

    # 2. parameters.
    names = ["control.kp_per_s2", "control.kd_per_s", "model.plugin", "model.config"]
    reply = get_p.call(GetParametersRequest_(names=names))
    step("get", values={n: value_repr(v) for n, v in zip(names, reply.values)})

    def set_one(name, value):
        reply = set_p.call(SetParametersRequest_(parameters=[Parameter_(name=name, value=value)]))
        r = reply.results[0]
        return {"successful": r.successful, "reason": r.reason}

    step("set kd 22", **set_one("control.kd_per_s", double_array([22.0])))
    step("set kp -5 (refused)", **set_one("control.kp_per_s2", double_array([-5.0])))
    step(
        "set joint_states topic (refused, read-only)",
        **set_one("ros.topics.joint_states", ParameterValue_(type=4, string_value="/other")),
    )
    step(
        "set plugin to a missing one (refused)",
        **set_one("model.plugin", ParameterValue_(type=4, string_value="no_such_plugin")),
    )

    # 3. services with Cyclone framing.
    for variant in ("dense", "fast"):
        r = swap.call(SwapModelRequest_(plugin="skygp", config_json=json.dumps({"variant": variant})))
        step(f"swap to skygp {variant}", success=r.success, message=r.message)
    r = swap.call(SwapModelRequest_(plugin="no_such_plugin", config_json="{}"))
    step("swap to a missing plugin (refused)", success=r.success, message=r.message)
    r = swap.call(SwapModelRequest_(plugin="/tmp/libgpn_skygp.so", config_json="{}"))
    step("swap to a plugin path (refused)", success=r.success, message=r.message)
    r = save.call(PathRequest_Save(path="model.gpnmodel"))
    step("save", success=r.success, message=r.message, exists=(model_dir / "model.gpnmodel").exists())
    r = load.call(PathRequest_Load(path="model.gpnmodel"))
    step("load", success=r.success, message=r.message)
    r = load.call(PathRequest_Load(path="model.gpnmodel.missing"))
    step("load a missing file (refused)", success=r.success, message=r.message)
    r = load.call(PathRequest_Load(path=str((model_dir / "model.gpnmodel").resolve())))
    step("load an absolute path (refused)", success=r.success, message=r.message)
    r = save.call(PathRequest_Save(path="../escaped.gpnmodel"))
    step("save to .. (refused)", success=r.success, message=r.message)

    # 4. read back; the residual names the model again.
    reply = get_p.call(GetParametersRequest_(names=names))
    step("get after", values={n: value_repr(v) for n, v in zip(names, reply.values)})
    model, deadline = "", time.monotonic() + 10
    while time.monotonic() < deadline and not model:
        for r in residuals.take(N=1000):
            if isinstance(r, ResidualEstimate_) and r.model:
                model = r.model
        time.sleep(0.05)
    out["model_after"] = model

    # 5. a change announced: the node rebuilds its model and offers a probe (or logs why not).
    r = announce.call(AnnounceChangeRequest_(description="test: payload picked up"))
    step("announce change", success=r.success, message=r.message)
    offer, deadline = None, time.monotonic() + 15
    while time.monotonic() < deadline and offer is None:
        for m in offers.take(N=10):
            if isinstance(m, JointTrajectory_):
                offer = m
        time.sleep(0.05)
    if offer is not None:
        last = offer.points[-1].time_from_start if offer.points else None
        out["probe_offer"] = {
            "joint_names": list(offer.joint_names),
            "points": len(offer.points),
            "duration_s": last.sec + last.nanosec * 1e-9 if last else None,
            "returns_to_start": bool(offer.points) and offer.points[0].positions == offer.points[-1].positions,
            "finite": all(math.isfinite(x) for p in offer.points for x in p.positions + p.velocities),
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
