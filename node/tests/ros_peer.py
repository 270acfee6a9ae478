"""A Cyclone DDS peer of `gp-node run` for node/tests/ros_interop.rs: plays a robot's
joint_state_broadcaster and effort controller, sends valid and hostile joint states, and
reports what the node answered, as JSON on stdout.

    ros_peer.py DOMAIN_ID

Steps (the node runs in control mode with the built-in Panda, watchdog 1 s):
1. lock-step: 300 valid states (names scrambled, an extra gripper joint), each answered by a
   command before the next: round-trip latencies and command sanity;
2. hostile states, each followed by a 60 ms wait for an (unwanted) answer: wrong array
   lengths, a missing joint, a duplicated joint, NaN / inf values, a bad stamp;
3. an older stamp (no answer) and the last stamp again (the last command repeated);
4. a burst of 500 states without waiting;
5. a JointState of the wrong shape under the right type name (undecodable);
6. silence for 0.6 s: the watchdog's safe output and an ERROR diagnostic;
7. data again: commands resume.
The residual estimates and diagnostics published meanwhile are decoded with our types.
"""

import json
import math
import pathlib
import statistics
import sys
import time
from dataclasses import dataclass, field

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "mujoco_driver"))

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.types import float64, sequence, uint8, uint64  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

from gpn_mujoco.messages import Float64MultiArray_, Header_, JointState_, Time_  # noqa: E402
from gpn_mujoco.transport import STATE_QOS, use_localhost_only  # noqa: E402


@dataclass
class ResidualEstimate_(IdlStruct, typename="gp_learning_node_msgs::msg::dds_::ResidualEstimate_"):
    header: Header_ = field(default_factory=Header_)
    model: str = ""
    joint_names: sequence[str] = field(default_factory=list)
    mu: sequence[float64] = field(default_factory=list)
    sigma: sequence[float64] = field(default_factory=list)
    eta: sequence[float64] = field(default_factory=list)
    eta_thm: sequence[float64] = field(default_factory=list)
    fallback: sequence[bool] = field(default_factory=list)
    samples_seen: uint64 = 0
    samples_stored: uint64 = 0
    experts: uint64 = 0
    model_us: float64 = 0.0
    tick_us: float64 = 0.0
    tracking_bound: float64 = 0.0


@dataclass
class KeyValue_(IdlStruct, typename="diagnostic_msgs::msg::dds_::KeyValue_"):
    key: str = ""
    value: str = ""


@dataclass
class DiagnosticStatus_(IdlStruct, typename="diagnostic_msgs::msg::dds_::DiagnosticStatus_"):
    level: uint8 = 0
    name: str = ""
    message: str = ""
    hardware_id: str = ""
    values: sequence[KeyValue_] = field(default_factory=list)


@dataclass
class DiagnosticArray_(IdlStruct, typename="diagnostic_msgs::msg::dds_::DiagnosticArray_"):
    header: Header_ = field(default_factory=Header_)
    status: sequence[DiagnosticStatus_] = field(default_factory=list)


@dataclass
class WrongJointState_(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    """Right type name, wrong shape: a string where a sequence should be."""

    header: Header_ = field(default_factory=Header_)
    name: str = ""


RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(100))
JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
POSE = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
ORDER = [3, 0, 6, 1, 5, 2, 4]


def state(t: float, q=POSE, names=None) -> JointState_:
    names = names if names is not None else [JOINTS[j] for j in ORDER] + ["panda_finger_joint1"]
    pos = [q[j] for j in ORDER] + [0.04]
    sec = int(math.floor(t))
    return JointState_(
        header=Header_(stamp=Time_(sec=sec, nanosec=int(round((t - sec) * 1e9)))),
        name=names,
        position=pos[: len(names)] if len(names) <= len(pos) else pos + [0.0] * (len(names) - len(pos)),
        velocity=[0.0] * len(names),
        effort=[],
    )


def robot_side(domain: int):
    """The robot's end on the loopback: the participant, the joint-state writer and the
    command reader."""
    use_localhost_only()
    dp = DomainParticipant(domain)
    states = DataWriter(dp, Topic(dp, "rt/joint_states", JointState_), qos=STATE_QOS)
    commands = DataReader(dp, Topic(dp, "rt/effort_controller/commands", Float64MultiArray_), qos=RELIABLE)
    return dp, states, commands


def wait_command(commands, timeout_s: float):
    """The next command within `timeout_s`, or None."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for c in commands.take(N=1):
            if isinstance(c, Float64MultiArray_):
                return c
        time.sleep(0.00005)
    return None


def discover(states, commands) -> bool:
    """Waits (≤ 30 s) until the node's joint-state reader and command writer are matched;
    prints the error object and returns False if they never are."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        # Matched statuses, not get_matched_*(): those size and fill their list in two calls
        # and raise IndexError when a peer matches in between.
        if (
            states.get_publication_matched_status().current_count
            and commands.get_subscription_matched_status().current_count
        ):
            time.sleep(0.3)
            return True
        time.sleep(0.01)
    print(json.dumps({"error": "the node was not discovered within 30 s"}))
    return False


def main() -> None:
    dp, states, commands = robot_side(int(sys.argv[1]))
    wrong = DataWriter(dp, Topic(dp, "rt/joint_states", WrongJointState_), qos=STATE_QOS)
    # The residuals are polled only between steps, seconds apart: keep every one in between
    # (with the 100-deep history three polls could see at most 300, the test's threshold).
    deep = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(20000))
    residuals = DataReader(dp, Topic(dp, "rt/gp_learning_node/residual", ResidualEstimate_), qos=deep)
    diagnostics = DataReader(dp, Topic(dp, "rt/diagnostics", DiagnosticArray_), qos=RELIABLE)

    out = {"residuals": 0, "residual_bad": [], "diagnostic_levels": {}, "errors": []}
    seen_diag = []

    def poll_side_topics():
        for r in residuals.take(N=20000):
            if isinstance(r, ResidualEstimate_):
                out["residuals"] += 1
                ok = list(r.joint_names) == JOINTS and all(
                    len(a) == 7 for a in (r.mu, r.sigma, r.eta, r.eta_thm, r.fallback)
                )
                if not ok and len(out["residual_bad"]) < 3:
                    out["residual_bad"].append(repr(r)[:300])
        for d in diagnostics.take(N=100):
            if isinstance(d, DiagnosticArray_):
                seen_diag.append(d)

    def take_commands(wait_s: float):
        got = []
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            got += [c for c in commands.take(N=1000) if isinstance(c, Float64MultiArray_)]
            time.sleep(0.001)
        return got

    if not discover(states, commands):
        return

    # 1. lock-step.
    t = 1.0
    latencies = []
    answered = 0
    finite = True
    for k in range(300):
        t = 1.0 + k * 0.001
        start = time.perf_counter()
        states.write(state(t))
        c = wait_command(commands, 1.0)
        if c is not None:
            latencies.append((time.perf_counter() - start) * 1e6)
            answered += 1
            finite &= len(c.data) == 7 and all(math.isfinite(x) for x in c.data)
    out["lockstep_answered"] = answered
    out["lockstep_commands_finite"] = finite
    latencies.sort()
    out["roundtrip_us"] = {
        "p50": statistics.median(latencies) if latencies else None,
        "p99": latencies[int(0.99 * (len(latencies) - 1))] if latencies else None,
        "max": latencies[-1] if latencies else None,
    }
    poll_side_topics()

    # 2. hostile states: none may be answered (each well inside the watchdog's timeout).
    hostile = {}
    t += 0.001
    cases = {
        "short_position": lambda m: setattr(m, "position", m.position[:-2]),
        "no_velocity": lambda m: setattr(m, "velocity", []),
        "missing_joint": lambda m: m.name.__setitem__(0, "elbow_of_another_robot"),
        "duplicate_joint": lambda m: m.name.__setitem__(7, m.name[0]),
        "nan_position": lambda m: m.position.__setitem__(2, float("nan")),
        "inf_velocity": lambda m: m.velocity.__setitem__(4, float("inf")),
        "bad_stamp": lambda m: setattr(m.header.stamp, "nanosec", 2_000_000_000),
    }
    for name, spoil in cases.items():
        t += 0.001
        m = state(t)
        spoil(m)
        states.write(m)
        hostile[name] = len(take_commands(0.06))
    out["hostile_answers"] = hostile

    # 3. an older stamp, then the last valid stamp again.
    t_last = 1.0 + 299 * 0.001
    states.write(state(t_last - 0.1))
    out["older_stamp_answers"] = len(take_commands(0.06))
    states.write(state(t_last, q=[x + 0.2 for x in POSE]))
    repeated = take_commands(0.1)
    out["repeated_stamp_answers"] = len(repeated)

    # 4. a burst.
    t = 2.0
    for k in range(500):
        states.write(state(t + k * 0.001))
    burst = take_commands(0.5)
    out["burst_answers"] = len(burst)
    out["burst_commands_finite"] = all(len(c.data) == 7 and all(math.isfinite(x) for x in c.data) for c in burst)
    t = t + 0.5

    # 5. undecodable.
    wrong.write(WrongJointState_(name="not a sequence"))
    out["undecodable_answers"] = len(take_commands(0.06))

    # 6. silence: the watchdog's safe output (gravity hold) arrives, repeatedly.
    silence = take_commands(2.6)
    out["silence_commands"] = len(silence)
    out["silence_commands_finite"] = all(all(math.isfinite(x) for x in c.data) for c in silence)
    poll_side_topics()
    out["stale_diagnostic_seen"] = any(
        s.level == 2 and s.name.endswith("joint states") for d in seen_diag for s in d.status
    )

    # 7. data again, for longer than a diagnostics period.
    t += 5.0
    resumed = sent = 0
    seen_before = len(seen_diag)
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        states.write(state(t + sent * 0.001))
        sent += 1
        if wait_command(commands, 1.0) is not None:
            resumed += 1
    out["resumed_sent"] = sent
    out["resumed_answers"] = resumed
    poll_side_topics()
    recent = seen_diag[seen_before:]
    out["diagnostics_seen"] = len(seen_diag)
    out["diagnostic_names"] = sorted({s.name for d in seen_diag for s in d.status})
    out["recovered_diagnostic_seen"] = any(
        s.level == 0 and s.name.endswith("joint states") for d in recent for s in d.status
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
