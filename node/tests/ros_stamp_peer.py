"""A Cyclone DDS peer of `gp-node run` for node/tests/ros_stamps.rs (issue 16): a lock-step
driver whose stamps misbehave the ways real ones do. Each state waits for its command
(≤ 1 s) before the next; a state that must be refused waits 0.2 s for an (unwanted) answer.

    ros_stamp_peer.py DOMAIN_ID

Steps (the node runs in control mode, watchdog 1 s):
1. the first state unstamped (zero stamp), then 1000 states stamped with the wall clock
   (epoch seconds);
2. one state stamped sec = 2³¹−1 (refused), then 1000 more epoch-stamped states;
3. 1000 epoch-stamped states of which every 50th is unstamped.
Prints JSON: states sent and commands received per step.
"""

import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "mujoco_driver"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from gpn_mujoco.messages import Time_  # noqa: E402
from ros_peer import discover, robot_side, state, wait_command  # noqa: E402

FAR_FUTURE = Time_(sec=2**31 - 1, nanosec=0)
UNSTAMPED = Time_(sec=0, nanosec=0)


def main() -> None:
    _dp, states, commands = robot_side(int(sys.argv[1]))

    def send(stamp=None, wait_s: float = 1.0) -> bool:
        msg = state(time.time())
        if stamp is not None:
            msg.header.stamp = stamp
        states.write(msg)
        return wait_command(commands, wait_s) is not None

    if not discover(states, commands):
        return

    out = {}
    out["first_unstamped_answered"] = send(UNSTAMPED)
    out["epoch_sent"] = 1000
    out["epoch_answered"] = sum(send() for _ in range(1000))
    out["far_future_answered"] = send(FAR_FUTURE, wait_s=0.2)
    out["after_far_future_sent"] = 1000
    out["after_far_future_answered"] = sum(send() for _ in range(1000))
    out["mixed_sent"] = 1000
    out["mixed_unstamped"] = 20
    out["mixed_answered"] = sum(send(UNSTAMPED if k % 50 == 49 else None) for k in range(1000))
    time.sleep(0.2)
    commands.take(N=1000)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
