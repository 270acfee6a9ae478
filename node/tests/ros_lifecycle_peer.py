"""The lifecycle from a real ROS 2 client (rclpy, Jazzy, lifecycle_msgs) for
node/tests/ros_lifecycle.rs:

    ros_lifecycle_peer.py DOMAIN_ID

The node was started inactive and commands the MuJoCo driver's robot, which holds the arm
itself (gravity and damping) while no command comes. The peer:
1. reads ~/get_state (expects unconfigured) and counts commands for 1.5 s;
2. configure (by id): the state, the available transitions, commands for 1 s;
3. activate (by label): the largest joint motion over the 0.5 s after the answer, measured
   from the joint state at the answer, and the commands that came;
4. deactivate: commands over 1 s after a 0.5 s ramp (the safe output) — none expected;
5. shutdown (by label), then an activate that must fail;
6. the transition events received; prints one JSON object on stdout.
"""

import json
import sys
import time

import rclpy
from lifecycle_msgs.msg import Transition, TransitionEvent
from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions, GetState
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

NODE = "/gp_learning_node"
TIMEOUT_S = 30.0


class Peer:
    def __init__(self, domain):
        rclpy.init(args=["--ros-args"], domain_id=domain)
        self.node = rclpy.create_node("lifecycle_peer")
        self.commands = 0
        self.states = []  # (monotonic time, positions)
        self.events = []
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands", self.on_command, 10)
        self.node.create_subscription(JointState, "/joint_states", self.on_state, qos_profile_sensor_data)
        self.node.create_subscription(TransitionEvent, f"{NODE}/transition_event", self.on_event, 10)
        self.change = self.node.create_client(ChangeState, f"{NODE}/change_state")
        self.get = self.node.create_client(GetState, f"{NODE}/get_state")
        self.available = self.node.create_client(GetAvailableTransitions, f"{NODE}/get_available_transitions")

    def on_command(self, _msg):
        self.commands += 1

    def on_state(self, msg):
        self.states.append((time.monotonic(), list(msg.position)))

    def on_event(self, msg):
        self.events.append([msg.transition.label, msg.start_state.label, msg.goal_state.label])

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.005)

    def call(self, client, request):
        future = client.call_async(request)
        rclpy.spin_until_future_complete(self.node, future, timeout_sec=TIMEOUT_S)
        if not future.done():
            raise RuntimeError("no answer from " + client.srv_name)
        return future.result()

    def state(self):
        return self.call(self.get, GetState.Request()).current_state.label

    def transition(self, id=0, label=""):
        return bool(self.call(self.change, ChangeState.Request(transition=Transition(id=id, label=label))).success)

    def commands_during(self, seconds):
        before = self.commands
        self.spin(seconds)
        return self.commands - before


def main():
    peer = Peer(int(sys.argv[1]))
    r = {}
    try:
        for client in (peer.change, peer.get, peer.available):
            if not client.wait_for_service(timeout_sec=60.0):
                raise RuntimeError("no service " + client.srv_name)
        end = time.monotonic() + 60.0
        while not peer.states and time.monotonic() < end:
            peer.spin(0.05)
        if not peer.states:
            raise RuntimeError("no joint states")
        r["initial_state"] = peer.state()
        r["commands_unconfigured"] = peer.commands_during(1.5)
        r["configure"] = peer.transition(id=Transition.TRANSITION_CONFIGURE)
        r["after_configure"] = peer.state()
        r["available_when_inactive"] = [
            t.transition.label for t in peer.call(peer.available, GetAvailableTransitions.Request()).available_transitions
        ]
        r["commands_inactive"] = peer.commands_during(1.0)
        asked = time.monotonic()
        r["activate"] = peer.transition(label="activate")
        answered = time.monotonic()
        r["after_activate"] = peer.state()
        r["commands_active"] = peer.commands_during(0.75)
        at = [q for t, q in peer.states if t <= answered]
        after = [q for t, q in peer.states if answered <= t <= answered + 0.5]
        if not at or not after:
            raise RuntimeError("no joint states around the activation")
        r["activation_motion_0_5s"] = max(abs(a - b) for q in after for a, b in zip(q, at[-1]))
        r["activation_motion_per_joint"] = [max(abs(q[j] - at[-1][j]) for q in after) for j in range(len(after[0]))]
        before = [q for t, q in peer.states if asked - 0.5 <= t <= asked]
        r["motion_before_activation_0_5s"] = max(abs(a - b) for q in before for a, b in zip(q, before[0])) if before else None
        r["deactivate"] = peer.transition(id=Transition.TRANSITION_DEACTIVATE)
        r["after_deactivate"] = peer.state()
        peer.spin(0.5)
        r["commands_after_deactivation"] = peer.commands_during(1.0)
        r["shutdown"] = peer.transition(label="shutdown")
        r["after_shutdown"] = peer.state()
        r["activate_when_finalized"] = peer.transition(label="activate")
        peer.spin(0.3)
        r["events"] = peer.events
    except Exception as e:  # reported, never a silent pass
        r["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(r))
    peer.node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
