"""The robot's own safe torque for when the commands stop: gravity compensation plus damping.

A forward command controller keeps applying the last torque it received; a robot whose
controlling node died must not. With ``--on-command-timeout hold`` the driver applies, each
step, u = g(q) − D(q)·q̇ with D(q) = M(q) / T (clamped to the URDF effort limits by the
driver, as commands are):

- g(q): the gravity torque of the TRUE plant (the model being simulated: URDF + payload,
  after a payload step the new mass; armature does not enter g). A robot's own gravity
  compensation is configured with the load it carries; with the nominal model the
  scenario's unmodelled payload would pull the arm down, which is what the hold is for.
- D(q) = M(q) / T, M the true plant's joint-space inertia (armature included): joint damping
  sized by the inertia, so that every joint's velocity decays as exp(−t/T) whatever the
  robot, the pose or the coupling between joints. The arm coasts about T·|q̇| after the
  hold starts. A diagonal D with fixed gains would suit one robot only (and the Panda's
  coupled inertia makes diag(M) decay some directions 2× slower than others).

q and q̇ are what the robot's sensors report (the published, noisy state): the hold is a
function of the robot, which knows its encoders, not the truth.
"""

from __future__ import annotations

import mujoco
import numpy as np

from .urdf import JointMap

HOLD_TIME_CONSTANT_S = 0.02
"""T of the damping: the arm coasts ≈ T·|q̇| (≤ 0.025 rad at the Panda reference's fastest 1.26 rad/s)."""

MIN_TICKS_PER_TIME_CONSTANT = 4
"""The torque is held over a tick: with T ≥ 4 ticks the velocity shrinks by ≤ 1/4 per tick
(monotone, no overshoot); at T < 1/2 tick the discrete damping would be unstable."""


def hold_time_constant(rate_hz: float) -> float:
    """T for a loop at ``rate_hz``: 20 ms, longer if the ticks are too coarse for it."""
    return max(HOLD_TIME_CONSTANT_S, MIN_TICKS_PER_TIME_CONSTANT / rate_hz)


class SafeHold:
    """u = g(q) − M(q)·q̇ / T on ``model`` (not clamped), joints in the node's order.

    Evaluated on a scratch ``MjData`` of the same model, so the simulated state is never
    touched; the model is shared, so a payload switch of the plant is seen here too.
    """

    def __init__(self, model: mujoco.MjModel, joints: JointMap, time_constant_s: float):
        if not time_constant_s > 0.0:
            raise ValueError(f"the hold's time constant {time_constant_s} s must be > 0")
        self.model = model
        self.joints = joints
        self.time_constant_s = float(time_constant_s)
        self._data = mujoco.MjData(model)
        self._v_full = np.zeros(model.nv)
        self._mv_full = np.zeros(model.nv)

    def _at_rest(self, q: np.ndarray) -> None:
        """Evaluates the model at pose q and zero velocity: qfrc_bias is then g(q), and qM is M(q)."""
        d = self._data
        d.qpos[self.joints.qpos] = q
        d.qvel[:] = 0.0
        mujoco.mj_forward(self.model, d)

    def gravity(self, q: np.ndarray) -> np.ndarray:
        """g(q): the torque that holds the arm still at q."""
        self._at_rest(q)
        return self._data.qfrc_bias[self.joints.dof].copy()

    def torque(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """g(q) − M(q)·v / T."""
        self._at_rest(q)
        self._v_full[:] = 0.0
        self._v_full[self.joints.dof] = v
        mujoco.mj_mulM(self.model, self._data, self._mv_full, self._v_full)
        g = self._data.qfrc_bias[self.joints.dof]
        return g - self._mv_full[self.joints.dof] / self.time_constant_s
