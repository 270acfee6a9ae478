"""Command line of ``mujoco_driver/mujoco_driver.py``: parse, run, print one error line, exit code.

Exit codes: 0 the run completed (with ``--on-command-timeout hold`` also when the commands
timed out: a handled condition, counted in the result); 1 it stopped (no controller, no
reader of a volatile reference, a silent controller with ``stop``, a diverging simulation,
interrupted); 2 bad input (parameter file, URDF, options).
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from pathlib import Path

from . import report
from .scenario import ScenarioError
from .urdf import UrdfError

DESCRIPTION = """\
MuJoCo robot driver for gp-learning-node, speaking ROS 2 over DDS (Cyclone DDS). Like a
ros2_control hardware interface + joint_state_broadcaster + effort forward controller:
loads a URDF (<visual>/<collision> stripped), adds the scenario's unmodelled payload,
friction and armature (the `sim:` section of the node's parameter file), publishes
sensor_msgs/JointState and applies std_msgs/Float64MultiArray effort commands in
lock-step (state out -> wait for the command -> step), so the loop is deterministic at
any speed. Simulation time starts at t0 = 1 s."""

EPILOG = """\
DDS: topics are ROS 2's (`/joint_states` is DDS topic `rt/joint_states`, types
`sensor_msgs::msg::dds_::JointState_` ...). Cyclone DDS reads CYCLONEDDS_URI as usual;
with --localhost-only (or ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST / ROS_LOCALHOST_ONLY=1)
and no CYCLONEDDS_URI, traffic stays on the loopback interface.
Exit codes: 0 completed (with --on-command-timeout hold, also after a command timeout),
1 stopped (controller or, with a volatile reference, reference reader missing; controller
silent with --on-command-timeout stop; divergence; interrupted), 2 bad input."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mujoco_driver.py",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--params",
        required=True,
        metavar="FILE.yaml",
        help="the node's parameter YAML (gp_learning_node: ros__parameters:); the driver reads "
        "robot.urdf, sim: and run: (e.g. config/sim_default.yaml)",
    )
    p.add_argument(
        "--urdf",
        metavar="PATH",
        help="robot description, overrides robot.urdf (default: robot.urdf, empty: the repo's urdf/panda.urdf)",
    )
    p.add_argument(
        "--duration-s",
        type=float,
        metavar="S",
        help="simulated duration in seconds (default: run.duration_s of the parameter file)",
    )
    p.add_argument(
        "--domain-id",
        type=int,
        metavar="N",
        help="DDS domain id, 0-232 (default: $ROS_DOMAIN_ID, else 0)",
    )
    p.add_argument(
        "--joint-states-topic",
        default="/joint_states",
        metavar="TOPIC",
        help="published sensor_msgs/JointState: position rad, velocity rad/s, effort N·m "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--command-topic",
        default="/effort_controller/commands",
        metavar="TOPIC",
        help="subscribed std_msgs/Float64MultiArray: one effort per joint in N·m, joint_states "
        "name order (default: %(default)s)",
    )
    p.add_argument(
        "--reference-topic",
        default="/gp_learning_node/reference",
        metavar="TOPIC",
        help="trajectory_msgs/JointTrajectory of the run's reference, with --publish-reference "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--publish-reference",
        action="store_true",
        help="publish the run: section's sine reference once at startup, before the first state: stamp "
        "t0 = 1 s, a point every 10 ms (positions rad, velocities rad/s, accelerations rad/s²); "
        "also enables the tracking error in the result",
    )
    p.add_argument(
        "--reference-durability",
        choices=("transient_local", "volatile"),  # transport.REFERENCE_DURABILITIES (not imported before parsing)
        default="transient_local",
        help="durability of the reliable, keep-last-1 reference writer of --publish-reference "
        "(default: %(default)s). volatile (ROS 2's default QoS) reaches only readers matched when it "
        "is written: the run then also waits for a reader of the reference (within "
        "--startup-timeout-s) and stops without one",
    )
    p.add_argument(
        "--result",
        metavar="FILE.json",
        help="write the result JSON here (tracking error in rad, round trip in µs, counts, wall time in s), "
        "also when the run stops early",
    )
    p.add_argument(
        "--command-timeout-s",
        type=float,
        default=2.0,
        metavar="S",
        help="seconds to wait for the command of a state before republishing it; if 3 "
        "republications stay unanswered too, the commands timed out: see --on-command-timeout "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--on-command-timeout",
        choices=("stop", "hold"),  # driver.ON_COMMAND_TIMEOUT (not imported before parsing)
        default="stop",
        help="when the commands timed out: stop = end the run, exit 1 (a silent controller "
        "fails the run); hold = as a robot's driver: keep simulating in real time at the "
        "scenario's rate_hz with a safe torque, gravity compensation of the true plant plus "
        "damping (u = g(q) - M(q)·q̇ / T, T = 20 ms or 4 ticks if longer; clamped to the effort "
        "limits), still publishing states; a command resumes the lock-step; the run completes "
        "after its duration, exit 0, the result counts command_timeouts and safe_steps "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--gp-node",
        metavar="PATH",
        help="the node's executable, which resolves the values a parameter file leaves to be derived "
        "from the robot (empty lists, empty payload link, negative payload mass): `gp-node sim "
        "--print-params` (default: $GPN_NODE, gp-node on PATH, the ament install beside this driver, "
        "the repository's target/release or target/debug)",
    )
    p.add_argument(
        "--realtime",
        action="store_true",
        help="pace the lock-step by the wall clock as a robot would: state k is published no "
        "earlier than k/rate_hz after the first (a late state goes out at once and is counted "
        "in late_steps). Without it the run goes as fast as the controller answers, so the "
        "controller's background work lands later in simulated time than on a robot",
    )
    p.add_argument(
        "--command-delay-steps",
        type=int,
        default=0,
        metavar="N",
        help="apply the command answering a state N steps later, as a ros2_control robot does "
        "(N = 1: the command written in one controller-manager cycle reaches the hardware in the "
        "next); the first N steps apply the safe torque (default: %(default)s, lock-step)",
    )
    p.add_argument(
        "--startup-timeout-s",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds to wait for a joint-state reader and a command writer (and, with a volatile "
        "reference, a reference reader) to match (default: %(default)s)",
    )
    p.add_argument(
        "--localhost-only",
        action="store_true",
        help="keep DDS on the loopback interface (mujoco_driver/cyclonedds_localhost.xml) unless CYCLONEDDS_URI is set",
    )
    return p


class _Terminated(Exception):
    pass


def _on_sigterm(signum, frame):
    raise _Terminated()


def _write_result(path: str | None, res: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="mujoco_driver: %(message)s", stream=sys.stderr)

    # Imports that load MuJoCo and Cyclone DDS come after the argument check (fast --help).
    from . import resolve as resolve_mod
    from . import transport as transport_mod
    from . import urdf as urdf_mod
    from .driver import Driver, DriverError, DriverOptions
    from .messages import dds_topic

    def fail(message: str, code: int) -> int:
        print(f"mujoco_driver: error: {message}", file=sys.stderr)
        return code

    try:
        if args.command_timeout_s <= 0 or args.startup_timeout_s < 0:
            raise ValueError("--command-timeout-s must be > 0 and --startup-timeout-s ≥ 0")
        if args.duration_s is not None and not args.duration_s > 0:
            raise ValueError(f"--duration-s must be > 0, found {args.duration_s}")
        scenario = resolve_mod.scenario_from_file(args.params, args.urdf, args.gp_node)
        urdf_path = Path(args.urdf) if args.urdf else scenario.urdf
        robot = urdf_mod.load(urdf_path)
        scenario.check_joints(len(robot.joints))
        domain_id = args.domain_id if args.domain_id is not None else transport_mod.default_domain_id()
        transport_mod.check_domain_id(domain_id)
        topics = transport_mod.Topics(
            joint_states=args.joint_states_topic, command=args.command_topic, reference=args.reference_topic
        )
        for name in (topics.joint_states, topics.command, topics.reference):
            dds_topic(name)
    except (ScenarioError, UrdfError, ValueError) as err:
        return fail(str(err), 2)

    if args.localhost_only or transport_mod.localhost_requested():
        transport_mod.use_localhost_only()
    options = DriverOptions(
        duration_s=args.duration_s if args.duration_s is not None else scenario.run.duration_s,
        command_timeout_s=args.command_timeout_s,
        startup_timeout_s=args.startup_timeout_s,
        publish_reference=args.publish_reference,
        on_command_timeout=args.on_command_timeout,
        realtime=args.realtime,
        command_delay_steps=args.command_delay_steps,
    )
    transport = transport_mod.DriverTransport(
        domain_id, topics, with_reference=args.publish_reference, reference_durability=args.reference_durability
    )
    try:
        driver = Driver(robot, scenario, transport, options)
    except (ScenarioError, UrdfError, ValueError) as err:
        transport.close()
        return fail(str(err), 2)

    signal.signal(signal.SIGTERM, _on_sigterm)
    error, code = None, 0
    try:
        logging.getLogger("mujoco_driver").info(
            "%s: %d joints, %g s at %g Hz, domain %d; waiting for the controller on %s / %s%s",
            robot.path,
            len(robot.joints),
            driver.ticks / driver.rate_hz,
            driver.rate_hz,
            domain_id,
            topics.joint_states,
            topics.command,
            f" and a reader of the volatile reference on {topics.reference}"
            if args.publish_reference and args.reference_durability == "volatile"
            else "",
        )
        driver.run()
    except DriverError as err:
        error, code = str(err), 1
    except FloatingPointError as err:
        error, code = str(err), 1
    except (KeyboardInterrupt, _Terminated):
        error, code = "interrupted", 1
    finally:
        transport.close()
    res = report.result(driver, domain_id, error)
    _write_result(args.result, res)
    print(report.summary(res), file=sys.stderr)
    if error:
        return fail(error, code)
    return 0
