"""The scenario file: values read as written, the embedded simulator's defaults, refusals."""

import math

import pytest
import yaml
from conftest import DEFAULT_PARAMS, REPO_ROOT, SHIPPED_PARAMS
from gpn_mujoco import resolve, scenario
from gpn_mujoco.scenario import ScenarioError


def write_params(tmp_path, ros_parameters, name="params.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"gp_learning_node": {"ros__parameters": ros_parameters}}))
    return path


def test_the_shipped_file_leaves_robot_values_to_the_node_and_reads_once_resolved():
    # The shipped file's robot-specific values are derived by the node: refused with the hint.
    with pytest.raises(scenario.DerivedValueError, match="gp-node sim --print-params"):
        scenario.from_file(SHIPPED_PARAMS)
    # Resolved by the node's executable (as the driver does), it reads.
    sc = resolve.scenario_from_file(SHIPPED_PARAMS)
    assert sc.urdf == REPO_ROOT / "urdf" / "panda.urdf"
    s = sc.sim
    assert (s.rate_hz, s.substeps, s.integrator, s.seed) == (1000.0, 1, "rk4", 1)
    # The tool link; 8 % of the built-in Panda's moving mass (1.35 kg) is more than its
    # shoulder holds within the tolerated error, so the node makes it lighter.
    assert s.payload.link == "panda_link7" and 0.3 < s.payload.mass_kg < 1.35
    assert s.payload.com_m == (0.0, 0.0, 0.08) and s.payload.inertia_diag_kgm2 == (0.0, 0.0, 0.0)
    assert s.payload.step is None
    assert all(v > 0.0 for v in s.friction.viscous_nms_per_rad.expand(7))
    assert all(v > 0.0 for v in s.friction.coulomb_nm.expand(7))
    assert s.friction.coulomb_smoothing_rad_s == 0.01 and s.friction.drift is None
    assert all(v > 0.0 for v in s.armature_kgm2.expand(7))
    assert all(v > 0.0 for v in s.torque_noise_std_nm.expand(7))
    assert (s.encoder_noise_std_rad, s.velocity_noise_std_rad_s) == (1e-5, 0.0)
    assert s.glitches.probability_per_sample == 0.0
    r = sc.run
    assert r.duration_s == 30.0
    assert len(r.reference.center_rad) == 7
    assert r.reference.amplitude_rad.expand(7) == [0.3] * 7
    freqs = r.reference.frequencies_hz
    assert len(set(freqs)) == 7 and all(0.2 <= f <= 0.7 for f in freqs)
    assert r.reference.phase_step_rad == 0.4487989505128276
    assert scenario.from_file(DEFAULT_PARAMS).sim == s


def test_missing_keys_take_the_embedded_simulators_defaults_and_unknown_keys_are_ignored(tmp_path):
    path = write_params(tmp_path, {"model": {"plugin": "x"}, "sim": {"novel_key": 3, "payload": {"colour": "red"}}})
    sc = scenario.from_file(path)
    s = sc.sim
    # Absent keys take the driver's own defaults, the built-in Panda's.
    assert s.payload.link is None  # the last joint's body
    assert s.payload.mass_kg == 1.5
    assert s.armature_kgm2.expand(7) == [0.1] * 7
    assert sc.run.reference.phase_step_rad == pytest.approx(math.pi / 7, abs=0)
    assert sc.run.reference.center_rad == scenario.PANDA_READY_RAD
    assert s == scenario.Sim() == scenario.from_mapping(None, None).sim


def test_per_joint_lists_and_steps_are_read(tmp_path):
    path = write_params(
        tmp_path,
        {
            "robot": {"urdf": "robots/arm.urdf"},
            "sim": {
                "friction": {"viscous_nms_per_rad": [1, 2], "drift": {"factor_at_end": 3.0, "over_secs": 10}},
                "payload": {"step": {"at_secs": 2.5, "mass_kg": 0.5}},
                "integrator": "semi_implicit_euler",
                "substeps": 4,
            },
        },
    )
    sc = scenario.from_file(path)
    assert sc.urdf == tmp_path / "robots" / "arm.urdf"  # relative to the file, as the node does
    assert sc.sim.friction.viscous_nms_per_rad.expand(2) == [1.0, 2.0]
    assert sc.sim.friction.drift.factor_at(5.0) == 2.0 and sc.sim.friction.drift.factor_at(20.0) == 3.0
    assert sc.sim.payload.step == scenario.PayloadStep(at_secs=2.5, mass_kg=0.5)
    assert (sc.sim.integrator, sc.sim.substeps) == ("semi_implicit_euler", 4)
    with pytest.raises(ScenarioError, match=r"`sim.friction.viscous_nms_per_rad`: expected one value or 7 values"):
        sc.check_joints(7)
    # A one-element list is one value for every joint, as the node reads it.
    one = scenario.from_file(write_params(tmp_path, {"sim": {"friction": {"coulomb_nm": [0.0]}}}))
    assert one.sim.friction.coulomb_nm.expand(7) == [0.0] * 7


@pytest.mark.parametrize(
    "sim, key",
    [
        ({"rate_hz": -1}, "sim.rate_hz"),
        ({"rate_hz": "fast"}, "sim.rate_hz"),
        ({"substeps": 0}, "sim.substeps"),
        ({"integrator": "rk45"}, "sim.integrator"),
        ({"seed": -3}, "sim.seed"),
        ({"payload": {"mass_kg": -1.0}}, "sim.payload.mass_kg"),
        ({"payload": {"com_m": [0, 0]}}, "sim.payload.com_m"),
        ({"payload": {"inertia_diag_kgm2": [0, -1, 0]}}, "sim.payload.inertia_diag_kgm2"),
        ({"payload": {"link": 7}}, "sim.payload.link"),
        ({"payload": {"inertia_diag_kgm2": [0.01, 0.01, 0.05]}}, "sim.payload.inertia_diag_kgm2"),
        ({"payload": {"step": {"at_secs": -1}}}, "sim.payload.step.at_secs"),
        ({"friction": {"coulomb_smoothing_rad_s": 0}}, "sim.friction.coulomb_smoothing_rad_s"),
        ({"friction": {"coulomb_nm": [0.5, -0.5]}}, "sim.friction.coulomb_nm"),
        ({"friction": {"viscous_nms_per_rad": "lots"}}, "sim.friction.viscous_nms_per_rad"),
        ({"friction": {"drift": {"over_secs": 0}}}, "sim.friction.drift.over_secs"),
        ({"armature_kgm2": float("nan")}, "sim.armature_kgm2"),
        ({"torque_noise_std_nm": -0.1}, "sim.torque_noise_std_nm"),
        ({"glitches": {"probability_per_sample": 2}}, "sim.glitches.probability_per_sample"),
        ({"glitches": {"torque_spike_nm": [20, 5]}}, "sim.glitches.torque_spike_nm"),
        ("not a mapping", "sim"),
    ],
)
def test_invalid_values_are_refused_naming_the_key_and_file(tmp_path, sim, key):
    path = write_params(tmp_path, {"sim": sim})
    with pytest.raises(ScenarioError) as err:
        scenario.from_file(path)
    message = str(err.value)
    assert f"`{key}`" in message and message.endswith(str(path))


@pytest.mark.parametrize(
    "run, key",
    [
        ({"duration_s": 0}, "run.duration_s"),
        ({"reference": {"amplitude_rad": None}}, "run.reference.amplitude_rad"),
        ({"reference": {"frequencies_hz": [0.1, "x"]}}, "run.reference.frequencies_hz"),
    ],
)
def test_invalid_run_values_are_refused_naming_the_key(tmp_path, run, key):
    with pytest.raises(ScenarioError, match=f"`{key}`"):
        scenario.from_file(write_params(tmp_path, {"run": run}))


def test_reference_lengths_are_checked_against_the_robot(tmp_path):
    sc = scenario.from_file(write_params(tmp_path, {"run": {"reference": {"center_rad": [0.0, 1.0]}}}))
    with pytest.raises(ScenarioError, match=r"`run.reference.center_rad`: expected 7 values \(one per joint\), found 2"):
        sc.check_joints(7)


def test_unreadable_and_malformed_files_are_refused(tmp_path):
    with pytest.raises(ScenarioError, match="cannot read parameter file"):
        scenario.from_file(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("gp_learning_node: [unclosed\n")
    with pytest.raises(ScenarioError, match="invalid parameter file"):
        scenario.from_file(bad)
    with pytest.raises(ScenarioError, match="`robot.urdf` must be a path"):
        scenario.from_file(write_params(tmp_path, {"robot": {"urdf": 3}}))


def test_a_reduced_model_is_refused_naming_the_key(tmp_path):
    path = write_params(tmp_path, {"robot": {"joints": ["panda_joint1"]}})
    with pytest.raises(ScenarioError, match="robot.joints"):
        scenario.from_file(path)
