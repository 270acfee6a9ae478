"""A Cyclone DDS peer of `gp-node run` for testing/measure/loop_figures.sh: plays the robot
(joint_state_broadcaster + effort controller) in lock-step over loopback DDS and prints one
JSON object on stdout.

    loopback_peer.py PARAMS_YAML DOMAIN_ID [N_STATES] [RATE_HZ]

The robot is the one of the parameter file (`robot.urdf`; empty: the repository's default
URDF): its movable joints, by name, moving slowly around the middle of their limits.
Sends N_STATES (default 2000) valid joint states, each answered by a command
before the next is sent, paced at RATE_HZ (default 1000; 0: back to back). Stamps advance by
1/RATE_HZ (1 ms when unpaced). Reports the states answered and the peer's round-trip
(write → command taken) p50/p99/max in µs. The node's own latency (state received →
command published) is in its `--json` summary.

Uses the repository's `mujoco_driver/gpn_mujoco` (message types, QoS, loopback configuration): run it
from a checkout (this file's repository), with a Python that has `cyclonedds`.
"""

import json
import math
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "mujoco_driver"))

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

from gpn_mujoco import scenario, urdf  # noqa: E402
from gpn_mujoco.messages import Float64MultiArray_, Header_, JointState_, Time_  # noqa: E402
from gpn_mujoco.transport import STATE_QOS, use_localhost_only  # noqa: E402
from roundtrip import report  # noqa: E402

RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(100))
def middle(joint: urdf.Joint) -> float:
    """The middle of the joint's limits (0 for a joint without finite limits)."""
    lo, hi = joint.position_lower, joint.position_upper
    return 0.5 * (lo + hi) if math.isfinite(lo) and math.isfinite(hi) else 0.0


def state(t: float, joints: list[str], pose: list[float]) -> JointState_:
    # A slow small motion around the pose, so the numbers are not constant.
    q = [x + 0.05 * math.sin(0.5 * t + j) for j, x in enumerate(pose)]
    dq = [0.025 * math.cos(0.5 * t + j) for j in range(len(pose))]
    sec = int(math.floor(t))
    return JointState_(
        header=Header_(stamp=Time_(sec=sec, nanosec=int(round((t - sec) * 1e9)))),
        name=list(joints),
        position=q,
        velocity=dq,
        effort=[],
    )


def main() -> None:
    robot = urdf.load(scenario.from_file(sys.argv[1]).urdf)
    joints = robot.joint_names
    pose = [middle(j) for j in robot.joints]
    domain = int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    rate = float(sys.argv[4]) if len(sys.argv) > 4 else 1000.0
    use_localhost_only()
    dp = DomainParticipant(domain)
    states = DataWriter(dp, Topic(dp, "rt/joint_states", JointState_), qos=STATE_QOS)
    commands = DataReader(dp, Topic(dp, "rt/effort_controller/commands", Float64MultiArray_), qos=RELIABLE)

    deadline = time.monotonic() + 30
    # Matched statuses: get_matched_*() race with a peer matching between their two calls.
    while not (
        states.get_publication_matched_status().current_count
        and commands.get_subscription_matched_status().current_count
    ):
        if time.monotonic() > deadline:
            print(json.dumps({"error": "the node was not discovered within 30 s"}))
            sys.exit(1)
        time.sleep(0.01)
    time.sleep(0.5)
    commands.take(N=1000)  # anything published before the run

    period = 1.0 / rate if rate > 0 else 0.0
    dt = period if rate > 0 else 0.001
    rtt = []
    unanswered = 0
    t0 = time.perf_counter()
    for k in range(n):
        if period:
            wait = t0 + k * period - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        commands.take(N=100)  # a late answer to an earlier state must not count for this one
        start = time.perf_counter()
        states.write(state(1.0 + k * dt, joints, pose))
        got = None
        limit = start + 1.0
        while got is None and time.perf_counter() < limit:
            for c in commands.take(N=1):
                if isinstance(c, Float64MultiArray_):
                    got = c
            if got is None:
                time.sleep(0.00005)
        if got is None:
            unanswered += 1
        else:
            rtt.append((time.perf_counter() - start) * 1e6)
    print(report(n, rtt, unanswered, rate, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
