"""FollowJointTrajectory from a real ROS 2 action client (rclpy, Jazzy, control_msgs built by
rosidl from the vendored definitions) for node/tests/ros_follow_joint_trajectory.rs:

    ros_follow_joint_trajectory_peer.py DOMAIN_ID

The node drives the MuJoCo driver's robot (the joint states it reads are the driver's). With
the joint names and the pose of the first joint state:
1. three_point: a 3-point trajectory (positions and zero velocities: cubic segments) away
   from the pose and back, goal tolerance 0.01 rad, goal_time_tolerance 1 s → its result;
2. unknown_joint: a goal naming a joint the robot lacks → accepted or not;
3. preempt: a 4 s move, preempted after 1 s by a 2 s move back → both results;
4. cancel: a 4 s move cancelled after 1.5 s → its result, and the positions that follow:
   the motion over the 0.5 s after the cancel was answered (the arm stops), then the largest
   drift from the pose over the next 1 s;
5. path: a 1 s move with a path tolerance of 1e-6 rad on every joint (below the encoder
   noise) → its result;
and prints one JSON object on stdout (`error` set if something did not happen at all).
"""

import json
import sys
import time

import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from rclpy.action import ActionClient
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint

ACTION = "/gp_learning_node/follow_joint_trajectory"
TIMEOUT_S = 30.0


def duration(seconds):
    return Duration(sec=int(seconds), nanosec=int(round((seconds - int(seconds)) * 1e9)))


class Peer:
    def __init__(self, domain):
        rclpy.init(args=["--ros-args"], domain_id=domain)
        self.node = rclpy.create_node("follow_joint_trajectory_peer")
        self.names = None
        self.q = None
        self.history = []  # (monotonic time, positions)
        self.feedback = 0
        self.node.create_subscription(JointState, "/joint_states", self.on_state, qos_profile_sensor_data)
        self.client = ActionClient(self.node, FollowJointTrajectory, ACTION)

    def on_state(self, msg):
        if self.names is None:
            self.names = list(msg.name)
        self.q = list(msg.position)
        self.history.append((time.monotonic(), list(msg.position)))

    def on_feedback(self, _msg):
        self.feedback += 1

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.005)

    def wait(self, future):
        rclpy.spin_until_future_complete(self.node, future, timeout_sec=TIMEOUT_S)
        if not future.done():
            raise RuntimeError("no answer within %g s" % TIMEOUT_S)
        return future.result()

    def goal(self, points, names=None, path_tol=None, goal_tol=None, goal_time_s=0.0):
        """points: [(t, positions, velocities or None)]."""
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(names or self.names)
        for t, q, v in points:
            p = JointTrajectoryPoint(positions=list(q), time_from_start=duration(t))
            if v is not None:
                p.velocities = list(v)
            goal.trajectory.points.append(p)
        for name in self.names:
            if path_tol is not None:
                goal.path_tolerance.append(JointTolerance(name=name, position=path_tol))
            if goal_tol is not None:
                goal.goal_tolerance.append(JointTolerance(name=name, position=goal_tol))
        goal.goal_time_tolerance = duration(goal_time_s)
        return goal

    def send(self, goal):
        handle = self.wait(self.client.send_goal_async(goal, feedback_callback=self.on_feedback))
        return handle

    def result(self, handle):
        r = self.wait(handle.get_result_async())
        return {"status": int(r.status), "error_code": int(r.result.error_code), "error_string": r.result.error_string}

    def offset(self, base, scale):
        # Alternating directions, 0.1 rad at scale 1.
        return [q + scale * 0.1 * (1 if j % 2 == 0 else -1) for j, q in enumerate(base)]


def main():
    peer = Peer(int(sys.argv[1]))
    report = {}
    try:
        if not peer.client.wait_for_server(timeout_sec=60.0):
            raise RuntimeError("no action server " + ACTION)
        end = time.monotonic() + 60.0
        while peer.q is None and time.monotonic() < end:
            peer.spin(0.05)
        if peer.q is None:
            raise RuntimeError("no joint states")
        peer.spin(1.0)  # the node holds its first pose
        q0 = list(peer.q)
        zero = [0.0] * len(q0)
        report["joints"] = peer.names

        # 1. Three points, cubic (velocities given), within the goal tolerance.
        before = peer.feedback
        h = peer.send(peer.goal(
            [(1.0, peer.offset(q0, 1), zero), (2.0, peer.offset(q0, 2), zero), (3.0, peer.offset(q0, 1), zero)],
            path_tol=0.05, goal_tol=0.01, goal_time_s=1.0))
        report["three_point_accepted"] = bool(h.accepted)
        report["three_point"] = peer.result(h) if h.accepted else None
        report["three_point_feedback"] = peer.feedback - before
        target = peer.offset(q0, 1)
        report["three_point_final_error"] = max(abs(a - b) for a, b in zip(peer.q, target))

        # 2. An unknown joint.
        names = peer.names[:-1] + ["no_such_joint"]
        h = peer.send(peer.goal([(1.0, peer.q, None)], names=names))
        report["unknown_joint_accepted"] = bool(h.accepted)

        # 3. Preemption.
        here = list(peer.q)
        first = peer.send(peer.goal([(4.0, peer.offset(here, -1), zero)]))
        peer.spin(1.0)
        second = peer.send(peer.goal([(2.0, here, zero)], goal_tol=0.01, goal_time_s=1.0))
        report["preempted"] = peer.result(first) if first.accepted else None
        report["preempting"] = peer.result(second) if second.accepted else None

        # 4. Cancel: hold where the arm is.
        here = list(peer.q)
        h = peer.send(peer.goal([(4.0, peer.offset(here, 1), zero)]))
        peer.spin(1.5)
        cancel = peer.wait(h.cancel_goal_async())
        answered = time.monotonic()
        report["cancel_accepted"] = len(cancel.goals_canceling) == 1
        report["cancelled"] = peer.result(h)
        peer.spin(1.75)
        settle = [q for t, q in peer.history if answered <= t <= answered + 0.5]
        hold = [q for t, q in peer.history if answered + 0.5 <= t <= answered + 1.5]
        if not settle or not hold:
            raise RuntimeError("no joint states after the cancel")
        report["cancel_motion_0_5s"] = max(abs(a - b) for a, b in zip(settle[-1], settle[0]))
        report["cancel_drift_1s"] = max(abs(a - b) for q in hold for a, b in zip(q, hold[0]))

        # 5. A path tolerance no tracking meets.
        here = list(peer.q)
        h = peer.send(peer.goal([(1.0, peer.offset(here, 1), zero)], path_tol=1e-6))
        report["path"] = peer.result(h) if h.accepted else None
    except Exception as e:  # reported, never a silent pass
        report["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(report))
    peer.node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
