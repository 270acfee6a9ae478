"""The true robot in MuJoCo: the nominal URDF model plus a scenario's unmodelled effects.

True dynamics, as the embedded simulator's (``crates/embedded_sim/src/truth.rs``):
M_true(q) q̈ + h_true(q, q̇) = τ_applied + τ_f(q̇, τ), with

- payload: an extra body rigidly attached to the payload link at ``com_m`` in that link's
  frame, with ``mass_kg`` and principal inertia ``inertia_diag_kgm2`` in the link's axes,
  added with MuJoCo's ``mjSpec`` editing API before compilation (MuJoCo then fuses it,
  like every static body, into the moving body that carries the link). A payload step
  switches the bodies' inertial parameters to those of a second compiled model with the
  new mass at the first step that starts at run time τ ≥ ``at_secs``.
- armature: MuJoCo's joint armature (added to the diagonal of M, as the node's
  ``Model::with_armature``).
- friction: τ_f,j = −(k(τ)·b_j·q̇_j + c_j·tanh(q̇_j / v_s)), added to ``qfrc_passive`` by
  MuJoCo's passive-force callback ``mjcb_passive``. MuJoCo calls it inside every
  forward-dynamics evaluation, so with RK4 the friction is evaluated at each of the four
  stages' velocities and times, exactly as the embedded simulator's RK4 does (a force
  computed once per step in ``qfrc_applied`` would not be). Neither MuJoCo's joint damping
  (linear only) nor its ``frictionloss`` (a constraint, not a tanh) is this law.

Integration: MuJoCo's classical RK4 (``mjINT_RK4``) or its semi-implicit Euler
(``mjINT_EULER``: v first, then q with the new v), time step 1/(rate_hz·substeps), the
command held in ``qfrc_applied`` over all substeps.

``mjcb_passive`` is one global hook per process; this module installs a dispatcher that
applies the friction registered for the model being evaluated (by the model's address) and
does nothing for any other model, chaining to a hook that was there before.
"""

from __future__ import annotations

import math
import weakref

import mujoco
import numpy as np

from .scenario import FrictionDrift, Scenario, ScenarioError
from .urdf import JointMap, Robot, compile_spec, joint_map

PAYLOAD_BODY = "gpn_payload"


class _Friction:
    """One model's friction law: the callback's data."""

    def __init__(self, dof, viscous, coulomb, smoothing, drift: FrictionDrift | None, t0_secs):
        self.dof = dof
        self.viscous = np.asarray(viscous, dtype=float)
        self.coulomb = np.asarray(coulomb, dtype=float)
        self.smoothing = float(smoothing)
        self.drift = drift
        self.t0_secs = float(t0_secs)

    def torque(self, v: np.ndarray, time_secs: float) -> np.ndarray:
        """τ_f at joint velocities ``v`` (node order) and simulation time ``time_secs``."""
        k = 1.0 if self.drift is None else self.drift.factor_at(time_secs - self.t0_secs)
        return -(k * self.viscous * v + self.coulomb * np.tanh(v / self.smoothing))

    def apply(self, data: mujoco.MjData) -> None:
        data.qfrc_passive[self.dof] += self.torque(data.qvel[self.dof], data.time)


_FRICTION: dict[int, _Friction] = {}
_PREVIOUS_HOOK = None
_HOOK_INSTALLED = False


def _passive_hook(model: mujoco.MjModel, data: mujoco.MjData) -> None:
    friction = _FRICTION.get(model._address)
    if friction is not None:
        friction.apply(data)
    if _PREVIOUS_HOOK is not None:
        _PREVIOUS_HOOK(model, data)


def _register_friction(model: mujoco.MjModel, friction: _Friction) -> None:
    global _HOOK_INSTALLED, _PREVIOUS_HOOK
    if not _HOOK_INSTALLED:
        _PREVIOUS_HOOK = mujoco.get_mjcb_passive()
        mujoco.set_mjcb_passive(_passive_hook)
        _HOOK_INSTALLED = True
    address = model._address
    _FRICTION[address] = friction
    # Forget the law when the model is freed, so a new model at the same address is clean.
    weakref.finalize(model, _FRICTION.pop, address, None)


def _add_payload(spec: mujoco.MjSpec, link: str, mass_kg: float, scenario: Scenario) -> None:
    if mass_kg == 0.0:
        return
    parent = spec.body(link)
    if parent is None:
        known = [b.name for b in spec.bodies if b.name]
        raise ScenarioError(f"`sim.payload.link`: no link '{link}' in the URDF (links: {known})")
    p = scenario.sim.payload
    body = parent.add_body(name=PAYLOAD_BODY, pos=list(p.com_m))
    body.mass = mass_kg
    body.ipos = [0.0, 0.0, 0.0]
    body.iquat = [1.0, 0.0, 0.0, 0.0]
    body.inertia = list(p.inertia_diag_kgm2)
    body.explicitinertial = True


class Plant:
    """The true robot: a compiled MuJoCo model and its data, state in the node's joint order.

    ``t0_secs`` is the simulation time of the run's start (τ = 0): MuJoCo's clock
    ``data.time`` starts there, and the friction drift and payload step use τ = time − t0.
    """

    def __init__(self, robot: Robot, scenario: Scenario, t0_secs: float = 0.0):
        scenario.check_joints(len(robot.joints))
        sim = scenario.sim
        self.robot = robot
        self.t0_secs = float(t0_secs)
        self.substeps = sim.substeps
        self.dt_secs = sim.dt_secs
        nv = len(robot.joints)
        payload_link = sim.payload.link or robot.joints[-1].child_link
        self.payload_link = payload_link
        armature = sim.armature_kgm2.expand(nv)

        def build(mass_kg: float) -> mujoco.MjModel:
            spec = robot.nominal_spec()
            spec.option.timestep = self.dt_secs / self.substeps
            spec.option.integrator = (
                mujoco.mjtIntegrator.mjINT_RK4 if sim.integrator == "rk4" else mujoco.mjtIntegrator.mjINT_EULER
            )
            _add_payload(spec, payload_link, mass_kg, scenario)
            for joint, value in zip(robot.joints, armature):
                spec.joint(joint.name).armature = value
            try:
                return compile_spec(spec)
            except ValueError as err:
                raise ScenarioError(f"MuJoCo cannot compile the true robot: {err}") from err

        self.model = build(sim.payload.mass_kg)
        self.data = mujoco.MjData(self.model)
        self.map: JointMap = joint_map(self.model, robot)
        self._after: mujoco.MjModel | None = None
        self._switch_at_secs = math.inf
        if sim.payload.step is not None:
            after = build(sim.payload.step.mass_kg)
            if after.nbody != self.model.nbody:
                raise ScenarioError("`sim.payload.step`: the payload changed the body structure")
            self._after = after
            self._switch_at_secs = sim.payload.step.at_secs
        self.payload_switched = False

        f = sim.friction
        self.friction = _Friction(
            self.map.dof,
            f.viscous_nms_per_rad.expand(nv),
            f.coulomb_nm.expand(nv),
            f.coulomb_smoothing_rad_s,
            f.drift,
            self.t0_secs,
        )
        _register_friction(self.model, self.friction)
        self.data.time = self.t0_secs

    @property
    def nv(self) -> int:
        return len(self.robot.joints)

    @property
    def time_secs(self) -> float:
        return float(self.data.time)

    def reset(self, q: np.ndarray, v: np.ndarray) -> None:
        """Puts the robot at (q, v) at time t0 and evaluates the forward dynamics once."""
        self.data.qpos[self.map.qpos] = q
        self.data.qvel[self.map.dof] = v
        self.data.qfrc_applied[:] = 0.0
        self.data.time = self.t0_secs
        mujoco.mj_forward(self.model, self.data)

    def q(self) -> np.ndarray:
        """True joint positions (node order), a copy."""
        return self.data.qpos[self.map.qpos].copy()

    def v(self) -> np.ndarray:
        """True joint velocities (node order), a copy."""
        return self.data.qvel[self.map.dof].copy()

    def _maybe_switch_payload(self) -> None:
        if self._after is None or self.payload_switched:
            return
        # A tolerance of a nanosecond: τ is a sum of steps and must not miss the tick it hits.
        if self.data.time - self.t0_secs >= self._switch_at_secs - 1e-9:
            for name in ("body_mass", "body_inertia", "body_ipos", "body_iquat"):
                getattr(self.model, name)[:] = getattr(self._after, name)
            self.payload_switched = True

    def step(self, tau: np.ndarray) -> None:
        """Advances one tick (all substeps) with joint torques ``tau`` (node order) held."""
        self._maybe_switch_payload()
        self.data.qfrc_applied[self.map.dof] = tau
        for _ in range(self.substeps):
            mujoco.mj_step(self.model, self.data)
        if not (np.all(np.isfinite(self.data.qpos)) and np.all(np.isfinite(self.data.qvel))):
            raise FloatingPointError(f"the simulation diverged at t = {self.data.time:.6f} s (non-finite state)")
