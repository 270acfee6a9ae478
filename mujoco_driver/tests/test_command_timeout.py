"""The command timeout: a forward command controller keeps the last torque, so a robot's
driver needs a command timeout. With ``on_command_timeout="hold"`` the driver holds the arm
with gravity compensation of the true plant plus damping once the commands stopped, and
completes the run; ``stop`` (the default) keeps the old behaviour.

The safe torque is checked against Pinocchio's gravity and inertia (``../shared/fixtures``)
and MuJoCo's inverse dynamics of the true plant; the hold itself on the plant alone (with the
nominal model's gravity and with no torque as controls that do fall); then over DDS: a
controller process SIGKILLed mid-run, a controller that goes silent and comes back, and the
command line's exit code and result file."""

import json
import logging
import signal
import subprocess
import sys
import threading
import time

import mujoco
import numpy as np
import pytest
from conftest import DEFAULT_PARAMS, REPO_ROOT, next_domain_id
from controller import ComputedTorque, FakeController, command
from gpn_mujoco import report, scenario, urdf
from gpn_mujoco.driver import HOLD_MESSAGE, Driver, DriverOptions
from gpn_mujoco.plant import Plant
from gpn_mujoco.reference import SineReference
from gpn_mujoco.safe_hold import HOLD_TIME_CONSTANT_S, SafeHold, hold_time_constant
from gpn_mujoco.transport import DriverTransport, Topics
from test_cli import driver as driver_cli
from test_driver import IDEAL, ROBOT, run

DEFAULT = scenario.from_file(DEFAULT_PARAMS)
CONTROLLER_PROCESS = REPO_ROOT / "mujoco_driver" / "tests" / "controller_process.py"

DRIFT_TOLERANCE_RAD = 0.05
# The hold stops a joint moving at v within about v·T (T = 20 ms; a few clamped steps and the
# payload stretch it): drift ≤ 20 mrad + v · 50 ms per joint.
DRIFT_FLOOR_RAD = 0.02
DRIFT_PER_SPEED_S = 0.05
"""Allowed |q − q(kill)| while holding. The arm coasts ≈ T·|q̇| after the hold starts, joints
pushing each other where the brake saturates: measured on the plant alone ≤ 0.027 rad over
101 kill times on the default reference (|q̇| ≤ 1.26 rad/s), 0.017 rad at τ = 0 s; in the
kill test (killed at 0.3 s) 0.0145 rad. The tolerance is about twice the worst case."""

FINAL_SPEED_TOLERANCE_RAD_S = 1e-3
"""|q̇| at the end of a hold that lasted ≥ 1 s = 50 T: the velocity is then e^-50 of what it
was; what is left comes from the encoder noise (1e-5 rad) in the measured q through g:
measured ≤ 2e-6 rad/s over the last 0.5 s of the kill test."""


def true_gravity(sc, q):
    """g(q) of a separately built true plant, by MuJoCo's inverse dynamics at q̇ = q̈ = 0."""
    plant = Plant(ROBOT, sc, t0_secs=1.0)
    d = plant.data
    d.qpos[plant.map.qpos] = q
    d.qvel[:] = 0.0
    d.qacc[:] = 0.0
    mujoco.mj_inverse(plant.model, d)
    return d.qfrc_inverse[plant.map.dof].copy()


# --- the safe torque -----------------------------------------------------------------


def test_safe_torque_is_pinocchios_gravity_and_inertia_times_velocity_over_t(shared_dynamics):
    fixture = json.loads((shared_dynamics / "panda.json").read_text())
    robot = urdf.load(shared_dynamics / "panda.urdf")
    model = robot.nominal_model()
    hold = SafeHold(model, urdf.joint_map(model, robot), HOLD_TIME_CONSTANT_S)
    order = [robot.joint_names.index(n) for n in fixture["joints"]]  # fixture index → ours
    for s in fixture["samples"]:
        q, v = np.empty(len(order)), np.empty(len(order))
        q[order], v[order] = s["q"], s["v"]
        gravity = np.asarray(s["gravity"])
        expected = gravity - np.asarray(s["M"]) @ np.asarray(s["v"]) / HOLD_TIME_CONSTANT_S
        scale = max(1.0, np.max(np.abs(expected)))
        np.testing.assert_allclose(hold.gravity(q)[order], gravity, rtol=0, atol=1e-8 * scale)
        np.testing.assert_allclose(hold.torque(q, v)[order], expected, rtol=0, atol=1e-8 * scale)


def test_safe_torque_holds_the_true_plant_with_its_payload():
    plant = Plant(ROBOT, DEFAULT, t0_secs=1.0)
    hold = SafeHold(plant.model, plant.map, HOLD_TIME_CONSTANT_S)
    q = SineReference(DEFAULT.run.reference).sample(0.7)[0]
    g = hold.gravity(q)
    np.testing.assert_allclose(g, true_gravity(DEFAULT, q), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(hold.torque(q, np.zeros(7)), g)
    nominal = true_gravity(IDEAL, q)
    assert np.max(np.abs(g - nominal)) > 1.0, "the 1.5 kg payload is in g"
    # The hold reads the plant's state from its own scratch data, never the plant's.
    before = plant.data.qpos.copy()
    hold.torque(q + 0.1, np.ones(7))
    np.testing.assert_array_equal(plant.data.qpos, before)


def test_the_time_constant_stays_four_ticks_long_at_low_rates():
    assert hold_time_constant(1000.0) == HOLD_TIME_CONSTANT_S
    assert hold_time_constant(100.0) == 0.04


def hold_on_plant(sc, t_kill, law="true", seconds=1.0):
    """The arm at the reference's q, q̇ at t_kill, then ``seconds`` of the driver's hold
    (``law`` "true"), of the same brake with the nominal model's gravity ("nominal"), or of
    no torque ("none"). Returns (max |q − q_kill| per joint, final |q̇|)."""
    plant = Plant(ROBOT, sc, t0_secs=1.0)
    q0, v0, _ = SineReference(sc.run.reference).sample(t_kill)
    plant.reset(q0, v0)
    model = ROBOT.nominal_model() if law == "nominal" else plant.model
    hold = SafeHold(model, urdf.joint_map(model, ROBOT), hold_time_constant(sc.sim.rate_hz))
    limits = ROBOT.effort_limits
    drift = np.zeros(7)
    for _ in range(round(seconds * sc.sim.rate_hz)):
        u = np.zeros(7) if law == "none" else hold.torque(plant.q(), plant.v())
        plant.step(np.clip(u, -limits, limits))
        drift = np.maximum(drift, np.abs(plant.q() - q0))
    return drift, np.abs(plant.v())


def test_the_hold_stops_the_arm_where_it_was_and_the_controls_fall():
    for t_kill in (0.0, 1.3, 2.9):
        drift, speed = hold_on_plant(DEFAULT, t_kill)
        assert np.all(drift < DRIFT_TOLERANCE_RAD), (t_kill, drift)
        assert np.all(speed < 1e-9), (t_kill, speed)
    # Controls: the same brake with the nominal model's gravity lets the unmodelled payload
    # pull the arm down (measured 0.20 rad in 1 s, still moving at 0.13 rad/s); no torque
    # and it falls (rad, not cm).
    drift, speed = hold_on_plant(DEFAULT, 0.0, law="nominal")
    assert drift.max() > 2 * DRIFT_TOLERANCE_RAD and speed.max() > 0.05, (drift, speed)
    drift, _ = hold_on_plant(DEFAULT, 0.0, law="none", seconds=0.3)
    assert drift.max() > 0.5, drift


# --- over DDS --------------------------------------------------------------------------


class KillAt(threading.Thread):
    """SIGKILLs ``process`` once the driver has done ``step`` steps; notes the step it saw
    and when the first safe step came."""

    def __init__(self, driver, process, step):
        super().__init__(daemon=True)
        self.driver, self.process, self.step = driver, process, step
        self.killed_at_step = None
        self.hold_seen_at = None
        self.done = threading.Event()

    def run(self):
        c = self.driver.counters
        while c.steps < self.step and not self.done.is_set():
            time.sleep(0.0005)
        self.process.kill()
        self.killed_at_step = c.steps
        while c.safe_steps == 0 and not self.done.is_set():
            time.sleep(0.0005)
        self.hold_seen_at = time.monotonic()


def test_a_killed_controller_process_leaves_the_arm_held_where_it_was(capsys):
    """The default scenario (1.5 kg payload, friction, noise); the controller process is
    SIGKILLed after 0.3 s of simulated time; the run lasts 1.5 s."""
    domain_id = next_domain_id()
    process = subprocess.Popen(
        [sys.executable, str(CONTROLLER_PROCESS), str(domain_id)], stdout=subprocess.PIPE, text=True
    )
    transport = DriverTransport(domain_id, Topics(), with_reference=True)
    options = DriverOptions(
        duration_s=1.5, command_timeout_s=0.2, startup_timeout_s=30.0, publish_reference=True,
        record=True, on_command_timeout="hold",
    )
    driver = Driver(ROBOT, DEFAULT, transport, options)
    killer = KillAt(driver, process, step=300)
    try:
        assert process.stdout.readline().strip() == "ready"
        killer.start()
        driver.run()
        ended = time.monotonic()
    finally:
        killer.done.set()
        process.kill()
        returncode = process.wait(timeout=10)
        killer.join(timeout=5)
        transport.close()
    c = driver.counters
    assert returncode == -signal.SIGKILL
    assert driver.completed and c.steps == 1500
    assert c.command_timeouts == 1
    hold_start = c.steps - c.safe_steps  # one episode, to the end
    # The controller may have answered the state it was working on before it died.
    assert killer.killed_at_step <= hold_start <= killer.killed_at_step + 2, (killer.killed_at_step, hold_start)
    assert c.safe_steps >= 1000 and c.clamped_safe_steps < c.safe_steps
    assert len(c.round_trip_ns) == hold_start  # every step before the hold had a command, none after

    # Physics is frozen while the driver waits, so the pose at the kill is the state the hold starts from.
    q_kill, v_kill = driver.true_q[hold_start], driver.true_v[hold_start]
    held_q = np.array(driver.true_q[hold_start:])
    drift = np.max(np.abs(held_q - q_kill), axis=0)
    final_speed = np.abs(driver.true_v[-1])
    last_half_s_speed = np.max(np.abs(np.array(driver.true_v[-500:])), axis=0)
    with capsys.disabled():
        print(
            f"\nkill test: killed at step {killer.killed_at_step}, hold from step {hold_start}, "
            f"{c.safe_steps} safe steps ({c.clamped_safe_steps} clamped)\n"
            f"  |q̇| at the kill (rad/s): {np.array2string(np.abs(v_kill), precision=3)}\n"
            f"  drift max |q − q_kill| (rad): {np.array2string(drift, precision=4)}\n"
            f"  final |q̇| (rad/s): {np.array2string(final_speed, precision=2)}, "
            f"max over the last 0.5 s: {last_half_s_speed.max():.2e}"
        )
    assert np.all(drift < DRIFT_FLOOR_RAD + DRIFT_PER_SPEED_S * np.abs(v_kill)), (drift, v_kill)
    assert np.all(final_speed < FINAL_SPEED_TOLERANCE_RAD_S), final_speed
    assert np.all(last_half_s_speed < FINAL_SPEED_TOLERANCE_RAD_S), last_half_s_speed
    # What acted at the end is the true plant's gravity at the final pose (the damping term
    # has vanished; the rest is encoder noise through g).
    np.testing.assert_allclose(driver.applied[-1], true_gravity(DEFAULT, driver.true_q[-2]), atol=0.01)
    # The hold ran at the scenario rate in real time: no faster than one tick per millisecond.
    hold_wall_s = ended - killer.hold_seen_at
    assert hold_wall_s >= (c.safe_steps - 1) / 1000.0 - 0.01, hold_wall_s

    res = json.loads(json.dumps(report.result(driver, domain_id)))
    assert tuple(res) == report.RESULT_KEYS
    assert res["completed"] is True and res["error"] is None and res["steps"] == 1500
    assert res["on_command_timeout"] == "hold" and res["command_timeouts"] == 1
    assert res["safe_steps"] == c.safe_steps and res["clamped_safe_steps"] == c.clamped_safe_steps
    assert "commands timed out 1 time(s) (hold)" in report.summary(res)


def test_commands_that_come_back_resume_the_lock_step(caplog):
    """Silent for state 100, its 3 republications and the next 200 states, then answering
    again: one hold, then computed torque again, which catches the reference up."""
    silent = range(100, 100 + 4 + 200)
    law = ComputedTorque(ROBOT, IDEAL)
    with caplog.at_level(logging.INFO, logger="mujoco_driver"):
        driver, controller = run(
            IDEAL, law, script=lambda i, u: [] if i in silent else [command(u)], duration_s=1.2,
            command_timeout_s=0.1, on_command_timeout="hold",
        )
    c = driver.counters
    assert driver.completed and c.steps == 1200
    assert c.command_timeouts == 1 and c.republished_states == 3
    # Ticks 100 … 299 at least (one state per tick reaches the controller at most); more if
    # the controller's best-effort reader lost states under load. The bound leaves ≥ 0.7 s
    # for the controller to catch the reference up (critically damped, ω = 10/s).
    assert 200 <= c.safe_steps <= 400, c.safe_steps
    assert len(c.round_trip_ns) == c.steps - c.safe_steps
    messages = [r.getMessage() for r in caplog.records]
    assert sum(HOLD_MESSAGE in m for m in messages) == 1
    assert sum("commands resumed at step" in m for m in messages) == 1
    # The controller's commands act again: the last torque is one it sent, and the arm, held
    # still while the reference moved on, is back on it.
    assert any(np.array_equal(driver.applied[-1], np.clip(u, -ROBOT.effort_limits, ROBOT.effort_limits))
               for u in controller.sent[-3:])
    q_d = SineReference(IDEAL.run.reference).sample(1.2)[0]
    assert np.max(np.abs(driver.true_q[-1] - q_d)) < 0.01


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="on_command_timeout 'brake' is not one of stop, hold"):
        Driver(ROBOT, IDEAL, None, DriverOptions(duration_s=1.0, on_command_timeout="brake"))


@pytest.mark.parametrize("policy", [None, "hold"])
def test_the_command_line_exit_code_and_result_after_a_command_timeout(tmp_path, domain_id, policy):
    """Silent from state 50 of 300: without the option the driver stops as it always did
    (exit 1); with hold it completes (exit 0) and the result says the commands timed out."""
    controller = FakeController(
        domain_id, ComputedTorque(ROBOT, DEFAULT), script=lambda i, u: [command(u)] if i < 50 else []
    )
    controller.start()
    result = tmp_path / "result.json"
    flag = ["--on-command-timeout", policy] if policy else []
    try:
        out = driver_cli(
            "--params", DEFAULT_PARAMS, "--duration-s", "0.3", "--domain-id", domain_id, "--result", result,
            "--startup-timeout-s", "20", "--command-timeout-s", "0.1", "--localhost-only", *flag,
        )
    finally:
        controller.stop()
    res = json.loads(result.read_text())
    assert res["command_timeouts"] == 1
    if policy == "hold":
        assert out.returncode == 0, out.stderr
        assert res["completed"] is True and res["error"] is None and res["on_command_timeout"] == "hold"
        assert res["steps"] == 300 and res["safe_steps"] == 250
        assert out.stderr.count(HOLD_MESSAGE) == 1
        assert "commands timed out 1 time(s) (hold): 250 steps held with gravity compensation" in out.stderr
    else:
        assert out.returncode == 1
        assert res["completed"] is False and res["on_command_timeout"] == "stop"
        assert res["steps"] == 50 and res["safe_steps"] == 0
        assert "error: no command on /effort_controller/commands" in out.stderr and HOLD_MESSAGE not in out.stderr
