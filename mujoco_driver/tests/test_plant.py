"""The true robot: payload, armature and friction enter as specified, RK4 evaluates the
friction at every stage, the payload step switches the mass, the sensors' noise is as set.

The payload checks use an independent forward kinematics of the URDF written here in numpy
(joint origins, rpy, axes), not MuJoCo's kinematics."""

import math
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest
from conftest import REPO_ROOT
from gpn_mujoco import scenario, sensors, urdf
from gpn_mujoco import plant as plant_module
from gpn_mujoco.plant import Plant

PANDA = REPO_ROOT / "urdf" / "panda.urdf"
T0 = 1.0
Q = np.array([0.3, -0.6, 0.4, -2.1, 0.5, 1.9, 0.2])


def params(**sim):
    """A scenario with no extras unless given: no payload, friction, armature or noise."""
    base = {
        "payload": {"mass_kg": 0.0},
        "friction": {"viscous_nms_per_rad": 0.0, "coulomb_nm": 0.0},
        "armature_kgm2": 0.0,
        "torque_noise_std_nm": 0.0,
        "encoder_noise_std_rad": 0.0,
    }
    for key, value in sim.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return scenario.from_mapping({"gp_learning_node": {"ros__parameters": {"sim": base}}}, None)


@pytest.fixture(scope="module")
def robot():
    return urdf.load(PANDA)


def bias(plant, q, v):
    d = plant.data
    d.qpos[plant.map.qpos] = q
    d.qvel[plant.map.dof] = v
    mujoco.mj_forward(plant.model, d)
    return d.qfrc_bias[plant.map.dof].copy()


def mass_matrix(plant, q):
    bias(plant, q, np.zeros(len(q)))
    full = np.zeros((plant.model.nv, plant.model.nv))
    mujoco.mj_fullM(plant.model, plant.data, full)
    return full[np.ix_(plant.map.dof, plant.map.dof)]


# --- an independent forward kinematics of the URDF ------------------------------------


def rot_rpy(r, p, y):
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def rot_axis(axis, angle):
    k = np.asarray(axis) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def forward_kinematics(path, link, q_by_joint):
    """World rotation and position of ``link``, and the world axes of its movable ancestors
    (joint name → axis at the joint), from the URDF's joint origins and axes."""
    root = ET.parse(path).getroot()
    by_child = {j.find("child").get("link"): j for j in root.findall("joint")}
    chain = []
    name = link
    while name in by_child:
        chain.append(by_child[name])
        name = by_child[name].find("parent").get("link")
    rot, pos, axes = np.eye(3), np.zeros(3), {}
    for joint in reversed(chain):
        origin = joint.find("origin")
        xyz = [float(x) for x in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()]
        rpy = [float(x) for x in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()]
        pos = pos + rot @ np.array(xyz)
        rot = rot @ rot_rpy(*rpy)
        if joint.get("type") in ("revolute", "continuous"):
            axis_el = joint.find("axis")
            axis = [float(x) for x in (axis_el.get("xyz") if axis_el is not None else "1 0 0").split()]
            axes[joint.get("name")] = rot @ (np.array(axis) / np.linalg.norm(axis))
            rot = rot @ rot_axis(axis, q_by_joint[joint.get("name")])
    return rot, pos, axes


def payload_point(robot, link, com, q):
    rot, pos, _ = forward_kinematics(robot.path, link, dict(zip(robot.joint_names, q)))
    return pos + rot @ np.asarray(com)


def point_jacobian(robot, link, com, q, h=1e-6):
    cols = []
    for j in range(len(q)):
        dq = np.zeros(len(q))
        dq[j] = h
        cols.append((payload_point(robot, link, com, q + dq) - payload_point(robot, link, com, q - dq)) / (2 * h))
    return np.array(cols).T


# --- payload ---------------------------------------------------------------------------


def test_payload_gravity_torque_equals_the_analytic_one(robot):
    """g_true − g_nominal = J_p(q)ᵀ · m · (0, 0, 9.81) for a point mass at com_m in the link's frame."""
    mass, com = 1.5, [0.03, -0.02, 0.08]
    true = Plant(robot, params(payload={"link": "panda_link8", "mass_kg": mass, "com_m": com}), T0)
    nominal = Plant(robot, params(), T0)
    for q in (Q, Q + 0.4, np.zeros(7)):
        jp = point_jacobian(robot, "panda_link8", com, q)
        analytic = jp.T @ (mass * np.array([0.0, 0.0, 9.81]))
        delta = bias(true, q, np.zeros(7)) - bias(nominal, q, np.zeros(7))
        np.testing.assert_allclose(delta, analytic, atol=1e-8, rtol=0)
        assert np.max(np.abs(analytic)) > 0.5  # a real effect, not zeros on both sides


def test_payload_inertia_enters_the_mass_matrix_in_the_links_axes(robot):
    """M_true − M_nominal = m J_vᵀ J_v + J_ωᵀ R diag(I) Rᵀ J_ω (R: the link's world rotation)."""
    mass, com, inertia = 0.8, [0.05, 0.0, 0.1], [0.02, 0.03, 0.04]
    link = "panda_link8"
    payload = {"link": link, "mass_kg": mass, "com_m": com, "inertia_diag_kgm2": inertia}
    true = Plant(robot, params(payload=payload), T0)
    nominal = Plant(robot, params(), T0)
    q = Q
    rot, _, axes = forward_kinematics(robot.path, link, dict(zip(robot.joint_names, q)))
    jv = point_jacobian(robot, link, com, q)
    jw = np.array([axes[name] for name in robot.joint_names]).T
    analytic = mass * jv.T @ jv + jw.T @ rot @ np.diag(inertia) @ rot.T @ jw
    np.testing.assert_allclose(mass_matrix(true, q) - mass_matrix(nominal, q), analytic, atol=1e-8, rtol=0)


def test_payload_defaults_to_the_last_joints_link_and_unknown_links_are_refused(robot):
    plant = Plant(robot, params(payload={"mass_kg": 1.0}), T0)
    assert plant.payload_link == "panda_link7"
    with pytest.raises(scenario.ScenarioError, match="`sim.payload.link`: no link 'tool'"):
        Plant(robot, params(payload={"link": "tool", "mass_kg": 1.0}), T0)


def test_payload_step_switches_the_mass_at_the_first_tick_at_or_after_the_time(robot):
    step = {"at_secs": 0.003, "mass_kg": 0.5}
    plant = Plant(robot, params(payload={"mass_kg": 2.0, "step": step}), T0)
    before = Plant(robot, params(payload={"mass_kg": 2.0}), T0)
    after = Plant(robot, params(payload={"mass_kg": 0.5}), T0)
    q0 = plant.q()
    g_before, g_after = bias(before, Q, np.zeros(7)), bias(after, Q, np.zeros(7))
    assert np.max(np.abs(g_before - g_after)) > 1.0
    plant.reset(q0, np.zeros(7))
    for k in range(5):
        plant.step(np.zeros(7))
        assert plant.payload_switched == (k >= 3), k
    np.testing.assert_allclose(bias(plant, Q, np.zeros(7)), g_after, atol=1e-12, rtol=0)


# --- armature and friction ----------------------------------------------------------------


def test_armature_adds_to_the_diagonal_of_m(robot):
    armature = [0.1, 0.2, 0.3, 0.4, 0.05, 0.06, 0.07]
    true = Plant(robot, params(armature_kgm2=armature), T0)
    nominal = Plant(robot, params(), T0)
    np.testing.assert_allclose(mass_matrix(true, Q) - mass_matrix(nominal, Q), np.diag(armature), atol=1e-12, rtol=0)


def test_friction_is_viscous_plus_tanh_smoothed_coulomb_with_its_drift(robot):
    b = [0.5, 0.4, 0.3, 0.2, 0.1, 0.6, 0.7]
    c = [0.5, 1.0, 0.2, 0.3, 0.4, 0.1, 0.8]
    s = 0.02
    drift = {"factor_at_end": 3.0, "over_secs": 10.0}
    plant = Plant(
        robot,
        params(friction={"viscous_nms_per_rad": b, "coulomb_nm": c, "coulomb_smoothing_rad_s": s, "drift": drift}),
        T0,
    )
    v = np.array([0.3, -0.01, 0.005, 0.0, -2.0, 0.02, -0.04])
    for run_time, factor in ((0.0, 1.0), (5.0, 2.0), (12.0, 3.0)):
        plant.data.time = T0 + run_time
        bias(plant, Q, v)
        expected = -(factor * np.array(b) * v + np.array(c) * np.tanh(v / s))
        np.testing.assert_allclose(plant.data.qfrc_passive[plant.map.dof], expected, atol=1e-14, rtol=1e-14)


def test_other_models_in_the_process_get_no_friction(robot):
    Plant(robot, params(friction={"viscous_nms_per_rad": 5.0, "coulomb_nm": 5.0}), T0)
    other = robot.nominal_model()
    data = mujoco.MjData(other)
    data.qvel[:] = 1.0
    mujoco.mj_forward(other, data)
    assert np.all(data.qfrc_passive == 0.0)


def rk4_by_hand(plant, q, v, tau, h):
    """Classical RK4 on (q, v) with MuJoCo's forward dynamics (friction included) per stage."""
    model, data = plant.model, plant.data
    t0 = data.time

    def accel(t, qs, vs):
        data.time = t
        data.qpos[plant.map.qpos] = qs
        data.qvel[plant.map.dof] = vs
        data.qfrc_applied[plant.map.dof] = tau
        mujoco.mj_forward(model, data)
        return data.qacc[plant.map.dof].copy()

    k1v = accel(t0, q, v)
    k1q = v
    k2v = accel(t0 + h / 2, q + h / 2 * k1q, v + h / 2 * k1v)
    k2q = v + h / 2 * k1v
    k3v = accel(t0 + h / 2, q + h / 2 * k2q, v + h / 2 * k2v)
    k3q = v + h / 2 * k2v
    k4v = accel(t0 + h, q + h * k3q, v + h * k3v)
    k4q = v + h * k3v
    return q + h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q), v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)


def test_rk4_evaluates_the_friction_at_every_stage_like_the_embedded_simulator(robot):
    sc = params(
        payload={"mass_kg": 1.5, "com_m": [0, 0, 0.08], "link": "panda_link8"},
        friction={"viscous_nms_per_rad": 0.5, "coulomb_nm": 0.5, "drift": {"factor_at_end": 2.0, "over_secs": 0.01}},
        armature_kgm2=0.1,
    )
    plant = Plant(robot, sc, T0)
    manual = Plant(robot, sc, T0)
    q, v = Q.copy(), np.array([0.004, -0.3, 0.001, 0.2, -0.002, 0.5, 0.0])
    tau = np.array([1.0, -20.0, 3.0, 10.0, -1.0, 0.5, 0.2])
    plant.reset(q, v)
    manual.data.time = T0
    for _ in range(3):
        plant.step(tau)
        q, v = rk4_by_hand(manual, q, v, tau, plant.dt_secs)
        manual.data.time = plant.data.time
        np.testing.assert_allclose(plant.q(), q, atol=1e-13, rtol=0)
        np.testing.assert_allclose(plant.v(), v, atol=1e-11, rtol=0)
    # The same RK4 with the friction frozen at each step's start (a force in qfrc_applied)
    # gives a clearly different state: the test can tell the two apart.
    frozen = Plant(robot, sc, T0)
    friction = plant_module._FRICTION.pop(frozen.model._address)
    qf, vf = Q.copy(), np.array([0.004, -0.3, 0.001, 0.2, -0.002, 0.5, 0.0])
    frozen.data.time = T0
    for _ in range(3):
        t = frozen.data.time
        qf, vf = rk4_by_hand(frozen, qf, vf, tau + friction.torque(vf, t), plant.dt_secs)
        frozen.data.time = t + plant.dt_secs
    assert np.max(np.abs(vf - plant.v())) > 1e-6


def test_semi_implicit_euler_and_substeps(robot):
    sc = params(integrator="semi_implicit_euler", substeps=2, friction={"viscous_nms_per_rad": 1.0})
    plant = Plant(robot, sc, T0)
    manual = Plant(robot, sc, T0)
    q, v = Q.copy(), np.full(7, 0.1)
    tau = np.full(7, 2.0)
    plant.reset(q, v)
    plant.step(tau)
    h = plant.dt_secs / 2
    for _ in range(2):
        d = manual.data
        d.qpos[manual.map.qpos], d.qvel[manual.map.dof], d.qfrc_applied[manual.map.dof] = q, v, tau
        mujoco.mj_forward(manual.model, d)
        v = v + h * d.qacc[manual.map.dof]
        q = q + h * v
    np.testing.assert_allclose(plant.q(), q, atol=1e-14, rtol=0)
    np.testing.assert_allclose(plant.v(), v, atol=1e-12, rtol=0)
    assert plant.time_secs == pytest.approx(T0 + 0.001, abs=1e-15)


# --- sensors -------------------------------------------------------------------------


def sensor_scenario(**sim):
    return scenario.from_mapping({"gp_learning_node": {"ros__parameters": {"sim": sim}}}, None).sim


def test_sensor_noise_has_the_configured_spread_and_is_seeded():
    sim = sensor_scenario(seed=7, encoder_noise_std_rad=1e-3, velocity_noise_std_rad_s=0.02, torque_noise_std_nm=0.5)
    q, v, tau = np.arange(7.0), -np.arange(7.0), np.full(7, 3.0)
    a, b = sensors.Sensors(sim), sensors.Sensors(sim)
    samples = [a.measure(q, v, tau) for _ in range(3000)]
    again = [b.measure(q, v, tau) for _ in range(3000)]
    assert all(np.array_equal(x.tau, y.tau) and np.array_equal(x.q, y.q) for x, y in zip(samples, again))
    for field, truth, std in (("q", q, 1e-3), ("v", v, 0.02), ("tau", tau, 0.5)):
        err = np.array([getattr(s, field) for s in samples]) - truth
        assert abs(err.std() / std - 1.0) < 0.03, field
        assert abs(err.mean()) < 4 * std / math.sqrt(err.size), field
    per_joint = sensors.Sensors(sensor_scenario(seed=7, torque_noise_std_nm=[0.1 * (j + 1) for j in range(7)]))
    err = np.array([per_joint.measure(q, v, tau).tau for _ in range(3000)]) - tau
    assert np.all(np.abs(err.std(axis=0) / (0.1 * np.arange(1, 8)) - 1.0) < 0.05)
    quiet = sensors.Sensors(sensor_scenario(encoder_noise_std_rad=0.0, torque_noise_std_nm=0.0))
    m = quiet.measure(q, v, tau)
    assert np.array_equal(m.q, q) and np.array_equal(m.v, v) and np.array_equal(m.tau, tau)


def test_glitches_are_torque_or_encoder_spikes_of_the_configured_size():
    sim = sensor_scenario(
        encoder_noise_std_rad=0.0,
        torque_noise_std_nm=0.0,
        glitches={"probability_per_sample": 1.0, "torque_spike_nm": [5.0, 20.0], "encoder_spike_rad": 0.05},
    )
    s = sensors.Sensors(sim)
    torque_spikes, encoder_spikes = [], []
    for _ in range(200):
        m = s.measure(np.zeros(7), np.zeros(7), np.zeros(7))
        assert m.glitches == 7
        for j in range(7):
            # Exactly one kind per joint and sample.
            assert (m.tau[j] == 0.0) != (m.q[j] == 0.0)
            if m.tau[j] != 0.0:
                torque_spikes.append(m.tau[j])
            else:
                encoder_spikes.append(m.q[j])
    assert all(5.0 <= abs(x) <= 20.0 for x in torque_spikes)
    assert set(np.abs(encoder_spikes)) == {0.05}
    assert 0.4 < len(torque_spikes) / 1400 < 0.6
    assert min(torque_spikes) < 0 < max(torque_spikes)
