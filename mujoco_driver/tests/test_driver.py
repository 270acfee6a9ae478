"""The lock-step loop against a fake controller over Cyclone DDS (in this process):
determinism, refused commands, republishing, giving up, tracking, clamping, the reference
(transient-local and volatile), and the result's numbers."""

import threading
import time

import numpy as np
import pytest
from conftest import DEFAULT_PARAMS, REPO_ROOT, next_domain_id
from controller import ComputedTorque, FakeController, command
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from gpn_mujoco import report, scenario, urdf
from gpn_mujoco.driver import Driver, DriverError, DriverOptions, reference_message
from gpn_mujoco.messages import JointTrajectory_, nanos_of
from gpn_mujoco.plant import Plant
from gpn_mujoco.reference import SineReference
from gpn_mujoco.transport import DriverTransport, Topics, delete_entities
from test_messages import wait_for

ROBOT = urdf.load(REPO_ROOT / "urdf" / "panda.urdf")
DEFAULT = scenario.from_file(DEFAULT_PARAMS)
IDEAL_SIM = {
    "payload": {"mass_kg": 0.0},
    "friction": {"viscous_nms_per_rad": 0.0, "coulomb_nm": 0.0},
    "armature_kgm2": 0.0,
    "torque_noise_std_nm": 0.0,
    "encoder_noise_std_rad": 0.0,
}
IDEAL = scenario.from_mapping({"gp_learning_node": {"ros__parameters": {"sim": IDEAL_SIM}}}, None)


def run(sc, law, script=None, duration_s=0.05, command_timeout_s=1.0, keep_transport=False, **options):
    domain_id = next_domain_id()
    transport = DriverTransport(domain_id, Topics(), with_reference=True)
    controller = FakeController(domain_id, law, script)
    controller.start()
    opts = DriverOptions(
        duration_s=duration_s,
        command_timeout_s=command_timeout_s,
        startup_timeout_s=10.0,
        publish_reference=True,
        settle_s=0.0,
        record=True,
        **options,
    )
    driver = Driver(ROBOT, sc, transport, opts)
    try:
        driver.run()
    finally:
        controller.stop()
        if not keep_transport:
            transport.close()
    return driver, controller


def states_of(controller):
    return [(nanos_of(s.header.stamp), s.position, s.velocity, s.effort) for s in controller.states]


def test_same_commands_give_bit_identical_states():
    """Closed loop twice, then the first run's commands replayed open-loop: identical."""
    law = ComputedTorque(ROBOT, DEFAULT)
    a, ca = run(DEFAULT, law, duration_s=0.2)
    b, cb = run(DEFAULT, law, duration_s=0.2)
    recorded = [np.array(u) for u in ca.sent]
    c, cc = run(DEFAULT, lambda msg: None, script=lambda i, _: [command(recorded[i])], duration_s=0.2)
    assert a.counters.steps == 200 and len(a.true_q) == 201
    for other in (b, c):
        assert all(np.array_equal(x, y) for x, y in zip(a.true_q, other.true_q, strict=True))
        assert all(np.array_equal(x, y) for x, y in zip(a.true_v, other.true_v, strict=True))
    assert states_of(ca) == states_of(cb) == states_of(cc)
    # The run moved and the noise is in the published states (so equality means something).
    assert np.max(np.abs(a.true_q[-1] - a.true_q[0])) > 1e-3
    assert any(s.position != list(q) for s, q in zip(ca.states, a.true_q))


def test_realtime_paces_the_states_by_the_wall_clock_and_changes_no_state():
    """--realtime: 200 states at 1 kHz take at least 0.199 s of wall time (a sleep never ends
    early, so this bound cannot flake), and the states are those of the unpaced run."""
    law = ComputedTorque(ROBOT, DEFAULT)
    fast, cf = run(DEFAULT, law, duration_s=0.2)
    started = time.monotonic()
    paced, cp = run(DEFAULT, law, duration_s=0.2, realtime=True)
    assert paced.counters.steps == 200
    assert paced.counters.wall_s >= 0.199 and time.monotonic() - started >= 0.199
    assert states_of(cf) == states_of(cp)
    assert all(np.array_equal(x, y) for x, y in zip(fast.true_q, paced.true_q, strict=True))
    res = report.result(paced, 7)
    assert res["realtime"] is True and 0 <= res["late_steps"] <= 200
    assert report.result(fast, 7)["realtime"] is False and fast.counters.late_steps == 0


def test_wrong_length_and_non_finite_commands_are_refused_and_do_not_act():
    law = ComputedTorque(ROBOT, IDEAL)
    reference, _ = run(IDEAL, law)

    def script(index, u):
        good = [command(u)]
        if index == 5:
            return [command(u[:6]), command(np.append(u, 0.0)), command(np.where(np.arange(7) == 2, np.nan, u))] + good
        if index == 9:
            return [command(np.where(np.arange(7) == 0, np.inf, u))] + good
        return good

    driver, controller = run(IDEAL, law, script=script)
    res = report.result(driver, 7)
    assert (res["refused_wrong_length"], res["refused_non_finite"], res["refused_commands"]) == (2, 2, 4)
    assert res["steps"] == 50 and res["republished_states"] == 0 and res["stale_commands_dropped"] == 0
    assert all(np.array_equal(x, y) for x, y in zip(reference.true_q, driver.true_q, strict=True))


def test_a_command_delay_applies_each_command_one_step_later():
    law = ComputedTorque(ROBOT, IDEAL)
    now, _ = run(IDEAL, law)
    later, _ = run(IDEAL, law, command_delay_steps=1)
    # Step 0 applies the safe torque (no command has reached the hardware yet); step k the
    # command computed for state k - 1.
    assert not np.array_equal(later.applied[0], now.applied[0])
    assert np.allclose(later.applied[1], now.applied[0], atol=1e-9)
    assert report.result(later, 7)["command_delay_steps"] == 1
    with pytest.raises(ValueError, match="command delay"):
        Driver(ROBOT, IDEAL, None, DriverOptions(duration_s=1.0, command_delay_steps=-1))


def test_a_lost_command_republishes_the_same_state():
    law = ComputedTorque(ROBOT, DEFAULT)
    reference, ref_controller = run(DEFAULT, law)
    driver, controller = run(
        DEFAULT, law, script=lambda i, u: [] if i == 3 else [command(u)], command_timeout_s=0.2
    )
    assert driver.counters.republished_states == 1
    seen = states_of(controller)
    assert len(seen) == 51
    assert seen[3] == seen[4]  # same stamp, same (noisy) values
    assert seen[:4] + seen[5:] == states_of(ref_controller)
    assert all(np.array_equal(x, y) for x, y in zip(reference.true_q, driver.true_q, strict=True))


def test_a_silent_controller_stops_the_driver_naming_the_topic():
    law = ComputedTorque(ROBOT, IDEAL)
    with pytest.raises(DriverError) as err:
        run(IDEAL, law, script=lambda i, u: [command(u)] if i < 2 else [], command_timeout_s=0.1)
    message = str(err.value)
    assert "no command on /effort_controller/commands (DDS rt/effort_controller/commands)" in message
    assert "step 2 of 50" in message and "published 4 times" in message
    assert "t = 1.002000 s" in message


def test_no_controller_stops_the_driver_at_startup_naming_both_endpoints(domain_id):
    transport = DriverTransport(domain_id, Topics(), with_reference=False)
    driver = Driver(ROBOT, IDEAL, transport, DriverOptions(duration_s=0.01, startup_timeout_s=0.2))
    try:
        with pytest.raises(DriverError) as err:
            driver.run()
    finally:
        transport.close()
    message = str(err.value)
    assert "no reader of /joint_states (DDS rt/joint_states)" in message
    assert "no writer of /effort_controller/commands (DDS rt/effort_controller/commands)" in message
    res = report.result(driver, domain_id, message)
    assert res["completed"] is False and res["steps"] == 0 and res["round_trip_us"] is None


def ideal_at(rate_hz):
    sim = {"rate_hz": rate_hz, **IDEAL_SIM}
    return scenario.from_mapping({"gp_learning_node": {"ros__parameters": {"sim": sim}}}, None)


def test_exact_model_tracking_error_is_the_command_hold_only():
    """With the exact model, computed torque leaves only the zero-order hold of the command:
    an error proportional to the step (a stamp or time offset of one step would not scale,
    and would be ~q̇_d·dt ≈ 1e-3 rad)."""
    slow, _ = run(ideal_at(1000.0), ComputedTorque(ROBOT, IDEAL), duration_s=0.2)
    fast, _ = run(ideal_at(4000.0), ComputedTorque(ROBOT, IDEAL), duration_s=0.2)
    rms_slow = np.array(slow.tracking_error()[0])
    rms_fast = np.array(fast.tracking_error()[0])
    assert np.all(rms_slow < 1e-4), rms_slow
    np.testing.assert_allclose(rms_fast / rms_slow, 0.25, atol=0.03)


def test_the_scenario_hurts_the_nominal_model_and_the_true_model_recovers():
    """The nominal model on the default scenario tracks badly; the true model (payload,
    armature, and friction: MuJoCo's inverse dynamics subtracts the plant's passive
    friction) recovers tight tracking."""
    nominal, _ = run(DEFAULT, ComputedTorque(ROBOT, DEFAULT), duration_s=0.2)
    true_model = Plant(ROBOT, DEFAULT, t0_secs=1.0).model
    informed, _ = run(DEFAULT, ComputedTorque(ROBOT, DEFAULT, model=true_model), duration_s=0.2)
    rms_nominal = np.array(nominal.tracking_error()[0])
    rms_informed = np.array(informed.tracking_error()[0])
    assert np.all(rms_nominal > 1e-3), rms_nominal
    assert np.all(rms_informed < 0.05 * rms_nominal), (rms_informed, rms_nominal)


def test_commands_are_clamped_to_the_urdf_effort_limits():
    law = ComputedTorque(ROBOT, IDEAL)
    boost = np.array([1000.0, 0, 0, 0, 0, 0, -50.0])
    driver, controller = run(IDEAL, lambda msg: law(msg) + boost, duration_s=0.01)
    res = report.result(driver, 7)
    assert res["clamped_commands"] == 10
    assert res["clamped_commands_per_joint"] == [10, 0, 0, 0, 0, 0, 10]
    for state in controller.states[1:]:
        assert state.effort[0] == 87.0 and state.effort[6] == -12.0  # no torque noise in IDEAL
    assert controller.states[0].effort == [0.0] * 7  # nothing acted before the first step


def test_reference_stamps_and_initial_state():
    driver, controller = run(IDEAL, ComputedTorque(ROBOT, IDEAL), duration_s=0.25, keep_transport=True)
    transport = driver.transport
    dp = transport.participant
    late_qos = Qos(Policy.Reliability.Reliable(0), Policy.Durability.TransientLocal, Policy.History.KeepLast(1))
    reader = DataReader(dp, Topic(dp, "rt/gp_learning_node/reference", JointTrajectory_), qos=late_qos)
    try:
        (trajectory,) = wait_for(lambda: reader.take(N=2))
    finally:
        delete_entities(reader)
        transport.close()
    assert trajectory.joint_names == ROBOT.joint_names
    assert (trajectory.header.stamp.sec, trajectory.header.stamp.nanosec) == (1, 0)
    assert len(trajectory.points) == 26  # τ = 0, 10 ms, …, 250 ms
    ref = SineReference(IDEAL.run.reference)
    for i, point in enumerate(trajectory.points):
        assert nanos_of(point.time_from_start) == i * 10_000_000
        q, qd, qdd = ref.sample(i * 0.01)
        assert point.positions == q.tolist() and point.velocities == qd.tolist()
        assert point.accelerations == qdd.tolist() and point.effort == []
    stamps = [nanos_of(s.header.stamp) for s in controller.states]
    assert stamps == [1_000_000_000 + k * 1_000_000 for k in range(250)]
    q0, v0, _ = ref.sample(0.0)
    assert controller.states[0].position == q0.tolist() and controller.states[0].velocity == v0.tolist()
    assert all(s.name == ROBOT.joint_names and s.header.frame_id == "" for s in controller.states)


def test_a_volatile_reference_waits_for_its_reader_and_precedes_the_first_state():
    """A volatile reader (ROS 2's default QoS) that appears 0.5 s after the controller gets
    the reference, written once, after the reader matched and before the first state."""
    domain_id = next_domain_id()
    transport = DriverTransport(domain_id, Topics(), with_reference=True, reference_durability="volatile")
    calls = []
    for name in ("publish_reference", "publish_state"):
        def spy(msg, name=name, real=getattr(transport, name)):
            calls.append((name, transport.reference_readers()))
            real(msg)
        setattr(transport, name, spy)
    controller = FakeController(domain_id, ComputedTorque(ROBOT, IDEAL))
    controller.start()
    peer = DomainParticipant(domain_id)
    readers = []
    volatile = Qos(Policy.Reliability.Reliable(0), Policy.Durability.Volatile, Policy.History.KeepLast(1))
    late = threading.Timer(0.5, lambda: readers.append(
        DataReader(peer, Topic(peer, "rt/gp_learning_node/reference", JointTrajectory_), qos=volatile)
    ))
    late.start()
    opts = DriverOptions(duration_s=0.02, startup_timeout_s=10.0, publish_reference=True, settle_s=0.0)
    driver = Driver(ROBOT, IDEAL, transport, opts)
    started = time.monotonic()
    try:
        driver.run()
        waited_s = time.monotonic() - started
        (trajectory,) = wait_for(lambda: readers[0].take(N=2))
    finally:
        late.join()
        controller.stop()
        delete_entities(*readers, peer)
        transport.close()
    assert waited_s >= 0.5
    assert calls[0] == ("publish_reference", 1)
    assert [name for name, _ in calls[1:]] == ["publish_state"] * 20
    assert trajectory == reference_message(ROBOT.joint_names, SineReference(IDEAL.run.reference), 0.02)
    res = report.result(driver, domain_id)
    assert res["completed"] and res["reference_durability"] == "volatile"


def test_result_numbers_recompute_from_the_recorded_states():
    driver, _ = run(DEFAULT, ComputedTorque(ROBOT, DEFAULT), duration_s=0.1)
    res = report.result(driver, 7)
    assert tuple(res) == report.RESULT_KEYS
    ref = SineReference(DEFAULT.run.reference)
    errors = np.array([driver.true_q[k] - ref.sample(k / 1000.0)[0] for k in range(50, 100)])
    np.testing.assert_allclose(res["rms_tracking_error_rad"], np.sqrt((errors**2).mean(axis=0)), rtol=1e-12)
    np.testing.assert_allclose(res["max_tracking_error_rad"], np.abs(errors).max(axis=0), rtol=1e-12)
    # A 0.1 s run: its "first second" is all of it.
    first = np.array([driver.true_q[k] - ref.sample(k / 1000.0)[0] for k in range(100)])
    np.testing.assert_allclose(res["rms_tracking_error_first_s_rad"], np.sqrt((first**2).mean(axis=0)), rtol=1e-12)
    assert res["completed"] and res["error"] is None and res["steps"] == res["steps_planned"] == 100
    assert res["joints"] == ROBOT.joint_names and res["duration_s"] == 0.1 and res["rate_hz"] == 1000.0
    rt = res["round_trip_us"]
    assert 0 < rt["p50"] <= rt["p99"] <= rt["max"]
    assert res["wall_s"] > 0 and res["payload_switched"] is False
    assert res["reference_durability"] == "transient_local"
    assert res["topics"] == {
        "joint_states": "/joint_states",
        "command": "/effort_controller/commands",
        "reference": "/gp_learning_node/reference",
    }
