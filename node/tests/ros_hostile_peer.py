"""The hostile-input suite's robot, for node/tests/ros_hostile.rs: an rclpy peer (ROS 2 Jazzy,
rmw_fastrtps) that streams valid joint states at 100 Hz and, one case at a time, feeds the
node what a broken or hostile robot, operator or file system would:

    ros_hostile_peer.py DOMAIN_ID URDF MODEL_DIR [crash]

- joint states: wrong lengths, missing/unknown/duplicate names, NaN and infinite values, bad
  and reordered stamps, an absurd position, 2.6 MB and 22 MB messages, 10 and 20 kHz bursts,
  silence;
- references (~/reference): every refused kind, an absurd one and a 2.6 MB valid one;
- model operations (~/swap_model, ~/load_model, ~/save_model): missing and path-like plugin
  names, the failure doubles of testing/doubles (found on the node's plugin path as
  gpn_double_*), bad configurations, corrupted and escaping model files.

With `crash` (a node with `model.isolation: process`) the cases are a swap to a plugin that
aborts its process after 10 predictions, and a swap back to SkyGP.

For each case it records every command the node published from the case's start to the end
of 30 valid states after it (finite? within the URDF effort limits?), how many of those 30
states were answered (the node keeps ticking), and the change of the /diagnostics counters
the case names, between the last diagnostics message before the case and the second one
after it. Prints one JSON object: {"cases": [...], "limits": [...], ...}; the Rust test
judges it.
"""

import array
import json
import math
import os
import pathlib
import sys
import time
import xml.etree.ElementTree as ET

import rclpy
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray
from gp_learning_node_msgs.srv import LoadModel, SaveModel, SwapModel
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

NODE = "/gp_learning_node"
RATE_HZ = 100.0
TAIL_STATES = 30
# Copies of each malformed joint state (see joint_state_cases).
REPEAT = 3


def movable_joints(urdf_text):
    """(name, lower, upper, effort) of the movable joints in file order."""
    joints = []
    for j in ET.fromstring(urdf_text).iter("joint"):
        if j.get("type") in ("revolute", "prismatic", "continuous"):
            limit = j.find("limit")
            get = (lambda k, d: float(limit.get(k, d))) if limit is not None else (lambda k, d: float(d))
            joints.append((j.get("name"), get("lower", "-3.14"), get("upper", "3.14"), get("effort", "inf")))
    return joints


def stamp_of(secs):
    ns = round(secs * 1e9)
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def duration_of(secs):
    return Duration(sec=int(secs), nanosec=int(round((secs % 1) * 1e9)))


class Robot:
    """The peer: publishers, readers, the valid-state clock and the service clients."""

    def __init__(self, domain, urdf):
        self.joints = movable_joints(urdf)
        self.names = [j[0] for j in self.joints]
        self.mid = [(lo + hi) / 2 for _, lo, hi, _ in self.joints]
        self.limits = [e for *_, e in self.joints]
        self.n = len(self.names)
        rclpy.init(domain_id=domain)
        self.node = rclpy.create_node("ros_hostile_peer")
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self.states = self.node.create_publisher(JointState, "/joint_states", 10)
        self.reference = self.node.create_publisher(JointTrajectory, f"{NODE}/reference", 10)
        self.commands = []
        self.node.create_subscription(
            Float64MultiArray, "/effort_controller/commands", lambda m: self.commands.append(list(m.data)), reliable)
        self.diagnostics = []
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self.diagnostics.append, reliable)
        self.clients = {
            "swap": (self.node.create_client(SwapModel, f"{NODE}/swap_model"), SwapModel),
            "save": (self.node.create_client(SaveModel, f"{NODE}/save_model"), SaveModel),
            "load": (self.node.create_client(LoadModel, f"{NODE}/load_model"), LoadModel),
        }
        self.t = 1.0
        self.next_at = time.monotonic()

    # --- valid states and waiting -------------------------------------------------------

    def state(self, t=None):
        """A valid state at time t: a slow sinusoid about the middle of the limits."""
        t = self.t if t is None else t
        w = 2 * math.pi * 0.5
        msg = JointState()
        msg.header.stamp = stamp_of(t)
        msg.name = list(self.names)
        msg.position = [m + 0.05 * math.sin(w * t) for m in self.mid]
        msg.velocity = [0.05 * w * math.cos(w * t)] * self.n
        return msg

    def pump(self, until):
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            rclpy.spin_once(self.node, timeout_sec=min(left, 0.002))

    def good(self, count=1):
        """`count` valid states at 100 Hz, spinning between them."""
        for _ in range(count):
            self.t += 1.0 / RATE_HZ
            self.states.publish(self.state())
            self.next_at = max(self.next_at + 1.0 / RATE_HZ, time.monotonic() - 0.05)
            self.pump(self.next_at)

    def wait_for(self, predicate, timeout_s):
        """Valid states until `predicate()` or the timeout; returns predicate()."""
        deadline = time.monotonic() + timeout_s
        while not predicate() and time.monotonic() < deadline:
            self.good()
        return predicate()

    def fresh_diagnostics(self):
        """The counters of a /diagnostics message composed after this call (the second one
        to arrive), streaming valid states meanwhile."""
        seen = len(self.diagnostics)
        if not self.wait_for(lambda: len(self.diagnostics) >= seen + 2, 10.0):
            raise TimeoutError("no /diagnostics from the node within 10 s")
        return counters_of(self.diagnostics[-1])

    def call(self, service, timeout_s=90.0, **fields):
        """A service call, valid states streaming until the reply (the node answers model
        changes between ticks)."""
        client, kind = self.clients[service]
        future = client.call_async(kind.Request(**fields))
        if not self.wait_for(future.done, timeout_s):
            raise TimeoutError(f"{service}: no reply within {timeout_s} s")
        r = future.result()
        return {"success": r.success, "message": r.message}


def counters_of(msg):
    """{"<status>/<key>": value} of a DiagnosticArray (status names without the node prefix)."""
    out = {}
    for s in msg.status:
        status = s.name.split(": ", 1)[-1]
        for kv in s.values:
            out[f"{status}/{kv.key}"] = kv.value
    return out


def number(counters, key):
    try:
        return float(counters.get(key, "0"))
    except ValueError:
        return math.nan


# --- the cases -------------------------------------------------------------------------------


def joint_state_cases(robot):
    """(name, action, expected counter changes) of the joint-state cases."""
    n, names, mid = robot.n, robot.names, robot.mid

    def send(mutate):
        # /joint_states is read best-effort (sensor-data QoS), so one message can be lost on
        # a loaded machine: each malformed state goes out REPEAT times, a tick apart.
        def action():
            for k in range(REPEAT):
                if k:
                    robot.pump(time.monotonic() + 1.0 / RATE_HZ)
                robot.t += 1.0 / RATE_HZ
                msg = robot.state()
                mutate(msg)
                robot.states.publish(msg)
            return {"sent": REPEAT}
        return action

    def field(name, value):
        return send(lambda m: setattr(m, name, value))

    def refused(reason):
        # Each copy counts once; at least one must arrive and none may count twice.
        return [("joint states", f"refused: {reason}", f"1..{REPEAT}")]

    # Big messages, built before the run (building them would silence the stream).
    extra = 60_000  # 2.6 MB: the robot's joints and 60 000 others (a gripper's, at scale)
    big = robot.state()
    big.name = list(names) + [f"other_robot_joint_{k:06d}" for k in range(extra)]
    big.position = array.array("d", list(big.position) + [0.0] * extra)
    big.velocity = array.array("d", list(big.velocity) + [0.0] * extra)
    huge_len = 22 * 1024 * 1024 // 8  # 22 MB of positions for the robot's names

    def big_action():
        robot.t += 1.0 / RATE_HZ
        big.header.stamp = stamp_of(robot.t)
        robot.states.publish(big)
        return {"bytes": len(big.name) * 36 + 16 * len(big.position)}

    def huge_action():
        robot.t += 1.0 / RATE_HZ
        msg = robot.state()
        msg.position = array.array("d", bytes(8 * huge_len))
        robot.states.publish(msg)
        return {"bytes": 8 * huge_len}

    def burst(rate_hz, secs):
        def action():
            count = int(rate_hz * secs)
            start = time.monotonic()
            for k in range(count):
                robot.t += 1.0 / rate_hz
                robot.states.publish(robot.state())
                target = start + (k + 1) / rate_hz
                while time.monotonic() < target:
                    pass
            took = time.monotonic() - start
            robot.next_at = time.monotonic()
            return {"sent": count, "achieved_hz": round(count / took)}
        return action

    def silence():
        robot.pump(time.monotonic() + 2.0)
        robot.next_at = time.monotonic()
        return {"silent_s": 2.0}

    # Nothing refused; what the loop could not take is reported (not judged).
    burst_counters = [("joint states", "refused: out_of_order", "==", 0),
                      ("joint states", "refused: implausible_stamp", "==", 0),
                      ("joint states", "dropped in bursts", ">=", 0)]
    unknown = [f"not_a_joint_{k}" for k in range(n)]
    return [
        ("state: a joint missing", send(lambda m: (setattr(m, "name", names[:-1]), setattr(m, "position", m.position[:-1]),
                                                  setattr(m, "velocity", m.velocity[:-1]))), refused("missing_joint")),
        ("state: only unknown names", field("name", unknown), refused("missing_joint")),
        ("state: a joint twice", field("name", names[:-1] + [names[0]]), refused("duplicate_joint")),
        ("state: position too short", field("position", mid[:-1]), refused("length")),
        ("state: velocity too long", field("velocity", [0.0] * (n + 1)), refused("length")),
        ("state: effort too short", field("effort", [0.0] * (n - 1)), refused("length")),
        ("state: no names", send(lambda m: (setattr(m, "name", []), setattr(m, "position", []),
                                             setattr(m, "velocity", []))), refused("missing_joint")),
        ("state: NaN position", field("position", [math.nan] + mid[1:]), refused("non_finite")),
        ("state: infinite velocity", field("velocity", [0.0] * (n - 1) + [-math.inf]), refused("non_finite")),
        ("state: NaN effort", field("effort", [math.nan] * n), refused("non_finite")),
        ("state: stamp nanosec beyond 10^9",
         send(lambda m: setattr(m.header, "stamp", Time(sec=int(robot.t), nanosec=1_500_000_000))),
         refused("stamp")),
        ("state: stamp 0.5 s in the past", send(lambda m: setattr(m.header, "stamp", stamp_of(robot.t - 0.5))),
         refused("out_of_order")),
        ("state: stamp 10^6 s in the future",
         send(lambda m: setattr(m.header, "stamp", stamp_of(robot.t + 1e6))), refused("implausible_stamp")),
        ("state: absurd position (10^6 rad)", field("position", [1e6] + mid[1:]),
         [("control", "ticks on the safe output", ">=", 1)]),
        ("state: 2.6 MB (the robot's joints among 60 000 others)", big_action,
         [("joint states", "received", ">=", 1 + TAIL_STATES - 2)] + [
             ("joint states", f"refused: {r}", "==", 0) for r in ("length", "missing_joint", "non_finite")]),
        ("state: 22 MB position array", huge_action, [("joint states", "refused: length", "0..1")]),
        ("state: burst at 10 kHz for 0.5 s", burst(10_000, 0.5), burst_counters),
        ("state: burst at 20 kHz for 0.25 s", burst(20_000, 0.25), burst_counters),
        ("state: silence for 2 s", silence, [("joint states", "watchdog episodes", "==", 1)]),
    ]


def reference_cases(robot):
    names, mid, joints = robot.names, robot.mid, robot.joints

    def trajectory(positions=None, names_=None, times=(0.5, 1.0)):
        msg = JointTrajectory()
        msg.joint_names = list(names if names_ is None else names_)
        for k, secs in enumerate(times):
            point = JointTrajectoryPoint()
            point.positions = list(mid if positions is None else positions[k])
            point.time_from_start = duration_of(secs)
            msg.points.append(point)
        return msg

    def send(msg):
        return lambda: robot.reference.publish(msg)

    def refused(reason):
        return [("control", f"reference refused: {reason}", "==", 1),
                ("control", "reference trajectories accepted", "==", 0)]

    stamped = trajectory()
    stamped.header.stamp = Time(sec=0, nanosec=1_560_281_588)
    points = 45_000  # 2.6 MB: a valid hold of the middle pose, one point per millisecond
    long_hold = trajectory(positions=[mid] * points, times=[0.001 * (k + 1) for k in range(points)])
    return [
        ("reference: no points", send(JointTrajectory(joint_names=names)), refused("empty")),
        ("reference: an unknown joint", send(trajectory(names_=names[:-1] + ["not_a_joint"])), refused("joint_names")),
        ("reference: positions too short", send(trajectory(positions=[mid[:-1], mid[:-1]])), refused("length")),
        ("reference: an infinite position", send(trajectory(positions=[mid, [math.inf] + mid[1:]])),
         refused("non_finite")),
        ("reference: time going back", send(trajectory(times=(1.0, 0.5))), refused("time_not_increasing")),
        ("reference: stamp nanosec beyond 10^9", send(stamped), refused("stamp")),
        ("reference: beyond the joint limits", send(trajectory(positions=[mid, [joints[0][2] + 0.5] + mid[1:]])),
         refused("beyond_limits")),
        ("reference: absurd positions (10^300)", send(trajectory(positions=[mid, [1e300] * robot.n])),
         refused("beyond_limits")),
        ("reference: 2.6 MB valid hold (45 000 points)", send(long_hold),
         [("control", "reference trajectories accepted", "==", 1)]),
    ]


def operation_cases(robot, model_dir):
    def swap(plugin, config=""):
        return lambda: robot.call("swap", plugin=plugin, config_json=config)

    def load(path):
        return lambda: robot.call("load", path=path)

    def refused(op, reason):
        return [("model", f"{op} refused: {reason}", "==", 1)]

    def write(name, data):
        def action():
            (model_dir / name).write_bytes(data(model_dir / "good.gpnmodel"))
            return robot.call("load", path=name)
        return action

    def flipped(good):
        data = bytearray(good.read_bytes())
        for k in range(len(data) // 2, len(data)):
            data[k] ^= 0x5A
        return bytes(data)

    adopted = [("model", "models adopted", "==", 1)]
    return [
        ("swap: a missing plugin", swap("no_such_plugin"), refused("swap", "not_found")),
        ("swap: a path as the name", swap("../../usr/lib/libc"), refused("swap", "invalid_name")),
        ("swap: a library that is not a plugin", swap("gpn_double_not_a_plugin"), refused("swap", "not_a_plugin")),
        ("swap: another ABI version", swap("gpn_double_wrong_abi"), refused("swap", "abi_mismatch")),
        ("swap: a table too small", swap("gpn_double_short_table"), refused("swap", "table_too_small")),
        ("swap: create fails", swap("gpn_double_fails_create"), refused("swap", "build_failed")),
        ("swap: update panics", swap("gpn_double_panics_update"), refused("swap", "build_failed")),
        ("swap: config not JSON", swap("skygp", "{variant"), refused("swap", "config_json")),
        ("swap: config not an object", swap("skygp", "[1, 2]"), refused("swap", "config_json")),
        ("swap: config with an unknown key", swap("skygp", '{"no_such_key": 1}'), refused("swap", "config")),
        ("swap: predict returns NaN", swap("gpn_double_returns_nan"),
         adopted + [("model", ("model errors", "non-finite outputs"), ">=", 1),
                    ("control", "ticks on the nominal law", ">=", 1)]),
        ("swap: back to SkyGP", swap("skygp"), adopted),
        ("swap: predict takes 5 ms", swap("gpn_double_slow", '{"predict_sleep_ms": 5}'),
         adopted + [("model", "overruns", ">=", 1)]),
        ("swap: back to SkyGP again", swap("skygp"), adopted),
        ("save: the running model", lambda: robot.call("save", path="good.gpnmodel"), []),
        ("load: a missing file", load("missing.gpnmodel"), refused("load", "io")),
        ("load: an absolute path", load("/etc/passwd"), refused("load", "outside_model_dir")),
        ("load: a path out of the directory", load("../../etc/passwd"), refused("load", "outside_model_dir")),
        ("load: an empty file", write("empty.gpnmodel", lambda good: b""), refused("load", "not_a_model_file")),
        ("load: random bytes", write("random.gpnmodel", lambda good: os.urandom(4096)),
         refused("load", "not_a_model_file")),
        ("load: a truncated file", write("truncated.gpnmodel", lambda good: good.read_bytes()[: good.stat().st_size // 2]),
         refused("load", "not_a_model_file")),
        ("load: the state's bytes flipped", write("flipped.gpnmodel", flipped),
         [("model", "load refused: state_refused", "0..1"), ("model", "models adopted", "0..1")]),
        ("load: the saved model", load("good.gpnmodel"), adopted),
    ]


def crash_cases(robot):
    def swap(plugin, config=""):
        return lambda: robot.call("swap", plugin=plugin, config_json=config)

    adopted = [("model", "models adopted", "==", 1)]
    return [
        ("swap: a plugin that aborts its process after 10 predictions",
         swap("gpn_double_slow", '{"predict_sleep_ms": 0, "abort_after_predicts": 10}'),
         adopted + [("model", "model errors", ">=", 1), ("control", "ticks on the nominal law", ">=", 1)]),
        ("swap: back to SkyGP after the crash", swap("skygp"), adopted),
    ]


def judge(expect, before, after):
    """[(status/key, change, wanted, ok)] of the expected counter changes."""
    out = []
    for status, key, *rule in expect:
        keys = [key] if isinstance(key, str) else list(key)
        full = " + ".join(f"{status}/{k}" for k in keys)
        change = sum(number(after, f"{status}/{k}") - number(before, f"{status}/{k}") for k in keys)
        if len(rule) == 2:
            op, want = rule
        else:
            op, want = "range", rule[0]
        if op == "==":
            ok = change == want
        elif op == ">=":
            ok = change >= want
        else:
            lo, hi = (float(x) for x in str(want).split(".."))
            ok = lo <= change <= hi
        out.append({"counter": full, "change": change, "wanted": f"{op} {want}", "ok": ok})
    return out


def main():
    domain, urdf, model_dir = int(sys.argv[1]), pathlib.Path(sys.argv[2]).read_text(), pathlib.Path(sys.argv[3])
    robot = Robot(domain, urdf)
    report = {"joints": robot.n, "limits": robot.limits, "cases": []}
    if sys.argv[4:] == ["crash"]:
        cases = crash_cases(robot)
    else:
        cases = joint_state_cases(robot) + reference_cases(robot) + operation_cases(robot, model_dir)

    deadline = time.monotonic() + 60
    while not robot.diagnostics and time.monotonic() < deadline:
        robot.good()
    if not robot.diagnostics:
        print(json.dumps({"error": "no /diagnostics from the node within 60 s"}))
        return
    # The model in use: fitted and adopted (the swap cases change it).
    if not robot.wait_for(lambda: number(counters_of(robot.diagnostics[-1]), "model/models adopted") >= 1, 90):
        print(json.dumps({"error": "no model adopted within 90 s", "last": counters_of(robot.diagnostics[-1])}))
        return
    before = robot.fresh_diagnostics()
    for name, action, expect in cases:
        first = len(robot.commands)
        started = time.monotonic()
        try:
            detail = action() or {}
        except Exception as e:  # reported, judged by the test
            detail = {"exception": repr(e)}
        tail = len(robot.commands)
        robot.good(TAIL_STATES)
        answered = len(robot.commands) - tail
        after = robot.fresh_diagnostics()
        commands = robot.commands[first:]
        report["cases"].append({
            "case": name,
            "detail": detail,
            "secs": round(time.monotonic() - started, 3),
            "commands": len(commands),
            "finite": all(math.isfinite(x) for c in commands for x in c),
            "within_limits": all(len(c) == robot.n and all(abs(x) <= lim * (1 + 1e-9) for x, lim in zip(c, robot.limits))
                                 for c in commands),
            "largest_command_fraction": max((abs(x) / lim for c in commands for x, lim in zip(c, robot.limits)), default=0.0),
            "answered_after": answered,
            "counters": judge(expect, before, after),
        })
        before = after
    report["final"] = {k: v for k, v in before.items() if "refused" in k or k.startswith("model/")}
    print(json.dumps(report))
    robot.node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
