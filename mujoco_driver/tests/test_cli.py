"""The command line, run as a separate process as a user or CI would: help, refusals with
exit code 2, a whole run against the fake controller with the result JSON (transient-local
and volatile reference), and startup timeouts with exit code 1."""

import json
import os
import subprocess
import sys

import pytest
import yaml
from conftest import DEFAULT_PARAMS, SIM_DIR
from controller import ComputedTorque, FakeController
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from gpn_mujoco import report, scenario, urdf
from gpn_mujoco.messages import JointTrajectory_
from gpn_mujoco.transport import delete_entities
from test_messages import wait_for

DRIVER = SIM_DIR / "mujoco_driver.py"


def driver(*args, timeout=60):
    return subprocess.run(
        [sys.executable, str(DRIVER), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "ROS_DOMAIN_ID": ""},
    )


def test_help_documents_every_option_with_units():
    out = driver("--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    for option in (
        "--params FILE.yaml", "--urdf PATH", "--duration-s S", "--domain-id N", "--joint-states-topic",
        "--command-topic", "--reference-topic", "--publish-reference", "--result FILE.json",
        "--command-timeout-s S", "--startup-timeout-s S", "--localhost-only",
        "--reference-durability {transient_local,volatile}",
    ):
        assert option in text, option
    for unit in ("seconds", "N·m", "rad/s", "µs", "0-232", "$ROS_DOMAIN_ID"):
        assert unit in text, unit


@pytest.mark.parametrize(
    "edit, message",
    [
        # Negative means "derived": the node resolves the file and refuses −2 (below −1).
        ({"sim": {"payload": {"mass_kg": -2}}}, "sim.payload.mass_kg must be in [-1, 1000], got -2"),
        ({"sim": {"payload": {"mass_kg": "heavy"}}}, "`sim.payload.mass_kg` must be a finite number"),
        ({"run": {"reference": {"center_rad": [0.0]}}}, "`run.reference.center_rad`: expected 7 values"),
        ({"robot": {"urdf": "missing.urdf"}}, "cannot read the URDF"),
    ],
)
def test_bad_parameters_exit_2_with_one_line_naming_the_key(tmp_path, edit, message):
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"gp_learning_node": {"ros__parameters": edit}}))
    out = driver("--params", path, "--startup-timeout-s", "0")
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("mujoco_driver: error: ") and message in out.stderr
    assert out.stderr.count("\n") == 1


def test_bad_options_exit_2():
    assert driver("--params", DEFAULT_PARAMS, "--domain-id", "300").returncode == 2
    out = driver("--params", DEFAULT_PARAMS, "--command-topic", "no_slash")
    assert out.returncode == 2 and "not a fully qualified ROS 2 name" in out.stderr
    out = driver("--params", DEFAULT_PARAMS, "--publish-reference", "--reference-durability", "persistent")
    assert out.returncode == 2
    assert "argument --reference-durability: invalid choice: 'persistent'" in out.stderr


VOLATILE = Qos(Policy.Reliability.Reliable(0), Policy.Durability.Volatile, Policy.History.KeepLast(1))


@pytest.mark.parametrize("durability", ["transient_local", "volatile"])
def test_a_whole_run_against_the_fake_controller_writes_the_result(tmp_path, domain_id, durability):
    """With a volatile reference, a volatile reader (ROS 2's default QoS) that is there before
    the run gets the reference once."""
    sc = scenario.from_file(DEFAULT_PARAMS)
    robot = urdf.load(sc.urdf)
    controller = FakeController(domain_id, ComputedTorque(robot, sc))
    controller.start()
    peer = DomainParticipant(domain_id)
    reader = DataReader(peer, Topic(peer, "rt/gp_learning_node/reference", JointTrajectory_), qos=VOLATILE)
    result = tmp_path / "result.json"
    try:
        out = driver(
            "--params", DEFAULT_PARAMS, "--duration-s", "0.2", "--domain-id", domain_id, "--publish-reference",
            "--result", result, "--startup-timeout-s", "20", "--localhost-only", "--reference-durability", durability,
        )
        references = wait_for(lambda: reader.take(N=4)) if durability == "volatile" else None
    finally:
        delete_entities(reader, peer)
        controller.stop()
    assert out.returncode == 0, out.stderr
    res = json.loads(result.read_text())
    assert tuple(res) == report.RESULT_KEYS
    assert res["reference_durability"] == durability
    if durability == "volatile":
        assert len(references) == 1 and len(references[0].points) == 21  # τ = 0, 10 ms, …, 200 ms
    assert res["completed"] and res["steps"] == 200 and res["domain_id"] == domain_id
    assert len(res["rms_tracking_error_rad"]) == 7 and res["republished_states"] == 0
    assert len(controller.states) == 200
    assert "mujoco_driver: done: 200/200 steps" in out.stderr
    assert "round trip state→command: p50" in out.stderr


def test_no_controller_exits_1_and_still_writes_the_result(tmp_path, domain_id):
    result = tmp_path / "result.json"
    out = driver(
        "--params", DEFAULT_PARAMS, "--duration-s", "0.1", "--domain-id", domain_id, "--result", result,
        "--startup-timeout-s", "0.3", "--localhost-only",
    )
    assert out.returncode == 1
    assert "mujoco_driver: error: after 0.3 s of waiting for the controller: no reader of /joint_states" in out.stderr
    res = json.loads(result.read_text())
    assert res["completed"] is False and res["steps"] == 0 and "no writer of" in res["error"]
    assert res["rms_tracking_error_rad"] is None and res["reference_durability"] is None


def test_no_volatile_reference_reader_exits_1_naming_the_topic_before_any_state(tmp_path, domain_id):
    sc = scenario.from_file(DEFAULT_PARAMS)
    controller = FakeController(domain_id, ComputedTorque(urdf.load(sc.urdf), sc))
    controller.start()
    result = tmp_path / "result.json"
    try:
        out = driver(
            "--params", DEFAULT_PARAMS, "--duration-s", "0.1", "--domain-id", domain_id, "--publish-reference",
            "--reference-durability", "volatile", "--result", result, "--startup-timeout-s", "1", "--localhost-only",
        )
    finally:
        controller.stop()
    assert out.returncode == 1, out.stderr
    assert (
        "mujoco_driver: error: after 1 s of waiting for the controller: no reader of /gp_learning_node/reference "
        "(DDS rt/gp_learning_node/reference; the volatile reference reaches only readers matched before the run "
        f"starts) on domain {domain_id}\n"
    ) in out.stderr
    assert "no reader of /joint_states" not in out.stderr and "no writer of" not in out.stderr
    assert controller.states == []  # the joint-state reader and command writer matched, no state was sent
    res = json.loads(result.read_text())
    assert res["completed"] is False and res["steps"] == 0 and res["reference_durability"] == "volatile"
