"""The driver's robot is the node's rigid-body model: MuJoCo's inverse and forward dynamics of
a URDF loaded through the driver's loader (no scenario extras) equal Pinocchio 4.1's values
in ``../shared/fixtures/dynamics`` (format in its README), joints matched by name, within
1e-8 · max(1, max |reference|) per quantity and sample."""

import json

import mujoco
import numpy as np
import pytest
from gpn_mujoco import urdf

TOLERANCE = 1e-8


class Engine:
    def __init__(self, path, joints):
        robot = urdf.load(path)
        self.model = robot.nominal_model()
        self.data = mujoco.MjData(self.model)
        names = robot.joint_names
        jm = urdf.joint_map(self.model, robot)
        # Index k of the reference → MuJoCo addresses of the joint of that name.
        self.qpos = jm.qpos[[names.index(n) for n in joints]]
        self.dof = jm.dof[[names.index(n) for n in joints]]
        assert sorted(joints) == sorted(names)

    def set(self, q, v, a=None):
        d = self.data
        d.qpos[:] = 0.0
        d.qvel[:] = 0.0
        d.qacc[:] = 0.0
        d.qfrc_applied[:] = 0.0
        d.qpos[self.qpos] = q
        d.qvel[self.dof] = v
        if a is not None:
            d.qacc[self.dof] = a

    def inverse(self, q, v, a):
        self.set(q, v, a)
        mujoco.mj_inverse(self.model, self.data)
        return self.data.qfrc_inverse[self.dof].copy()

    def bias(self, q, v):
        self.set(q, v)
        mujoco.mj_forward(self.model, self.data)
        return self.data.qfrc_bias[self.dof].copy()

    def mass_matrix(self, q):
        self.set(q, np.zeros(len(q)))
        mujoco.mj_forward(self.model, self.data)
        full = np.zeros((self.model.nv, self.model.nv))
        mujoco.mj_fullM(self.model, self.data, full)
        return full[np.ix_(self.dof, self.dof)]

    def forward(self, q, v, tau):
        self.set(q, v)
        self.data.qfrc_applied[self.dof] = tau
        mujoco.mj_forward(self.model, self.data)
        return self.data.qacc[self.dof].copy()


def check(name, quantity, engine_value, reference):
    reference = np.asarray(reference, dtype=float)
    error = np.max(np.abs(engine_value - reference))
    bound = TOLERANCE * max(1.0, np.max(np.abs(reference)))
    assert error <= bound, f"{name} {quantity}: max |MuJoCo − Pinocchio| = {error:.3e} > {bound:.3e}"
    return error / max(1.0, np.max(np.abs(reference)))


@pytest.mark.parametrize("name", ["panda", "ur5", "double_pendulum"])
def test_mujoco_dynamics_equal_pinocchio(shared_dynamics, name):
    fixture = json.loads((shared_dynamics / f"{name}.json").read_text())
    engine = Engine(shared_dynamics / f"{name}.urdf", fixture["joints"])
    assert fixture["gravity"] == [0.0, 0.0, -9.81]
    assert len(fixture["samples"]) == 25
    worst = 0.0
    for s in fixture["samples"]:
        q, v, a = (np.array(s[k]) for k in ("q", "v", "a"))
        worst = max(
            worst,
            check(name, "tau_rnea (mj_inverse)", engine.inverse(q, v, a), s["tau_rnea"]),
            check(name, "nonlinear (qfrc_bias)", engine.bias(q, v), s["nonlinear"]),
            check(name, "gravity (qfrc_bias at v=0)", engine.bias(q, np.zeros_like(v)), s["gravity"]),
            check(name, "M (mj_fullM)", engine.mass_matrix(q), s["M"]),
            check(name, "ddq_aba (mj_forward)", engine.forward(q, v, np.array(s["tau_aba"])), s["ddq_aba"]),
        )
    # The agreement is at rounding level, far inside the tolerance.
    assert worst < 1e-12, worst
