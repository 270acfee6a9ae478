"""The scenario: the node's own parameter YAML, read for the driver (knows nothing of DDS).

Layout ``gp_learning_node: ros__parameters:`` as in ``config/sim_default.yaml``. The driver
reads ``robot.urdf``, the ``sim:`` section (the true robot) and the ``run:`` section
(duration, reference). Every key is optional; the defaults are those of the embedded
simulator (``crates/embedded_sim/src/params.rs``, ``crates/app/src/reference.rs``), so a file means
the same robot to both. Keys the driver does not use (``model``, ``control``, ``learn``,
``run.realtime``, and any unknown key) are ignored; a value of a key it uses that is of the
wrong type or out of range is refused with a :class:`ScenarioError` naming the key.

Per-joint values (friction, armature, reference amplitudes, centres and frequencies) are one
number for every joint or a list in the node's joint order; lengths are checked against the
robot by :meth:`Scenario.check_joints`.

Values the node derives from the robot: in the node's files an empty list (reference centre,
amplitudes and frequencies, friction, armature), an empty payload link or a negative payload
mass means "derived from the robot" (``crates/app/src/robot_defaults.rs``). The driver does
not repeat that derivation: such a file is refused, naming the key, with the command that
writes the resolved file (``gp-node sim --print-params``), so both sides simulate the same
robot by construction. An absent key takes the driver's own default (the built-in Panda's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_URDF = REPO_ROOT / "urdf" / "panda.urdf"


class ScenarioError(Exception):
    """A parameter is missing its file, malformed or out of range; names the key."""


RESOLVE_HINT = (
    "derived from the robot by gp-node; give the driver the resolved parameter file: "
    "gp-node sim --print-params [--params FILE] [--urdf URDF] > resolved.yaml"
)


class DerivedValueError(ScenarioError):
    """A value the node derives from the robot (see :mod:`.resolve`)."""


def _derived(key: str) -> ScenarioError:
    return DerivedValueError(f"`{key}` is empty: {RESOLVE_HINT}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Section:
    """A YAML mapping with the dotted key path of its place in the file, for messages."""

    def __init__(self, data: Any, path: str):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ScenarioError(f"`{path}` must be a mapping, found {type(data).__name__}")
        self.data = data
        self.path = path

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def section(self, name: str) -> _Section:
        return _Section(self.data.get(name), self.key(name))

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def number(self, name: str, default: float, check=None, reason: str = "") -> float:
        value = self.data.get(name, default)
        if not _is_number(value) or not math.isfinite(value):
            raise ScenarioError(f"`{self.key(name)}` must be a finite number, found {value!r}")
        value = float(value)
        if check is not None and not check(value):
            raise ScenarioError(f"`{self.key(name)}` {reason}, found {value!r}")
        return value

    def integer(self, name: str, default: int, minimum: int) -> int:
        value = self.data.get(name, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ScenarioError(f"`{self.key(name)}` must be an integer ≥ {minimum}, found {value!r}")
        return value

    def numbers(self, name: str, default: list[float], length: int | None = None) -> list[float]:
        value = self.data.get(name, default)
        if value == [] and length is None:
            raise _derived(self.key(name))
        ok = isinstance(value, list) and all(_is_number(v) and math.isfinite(v) for v in value)
        if not ok or (length is not None and len(value) != length):
            size = f"{length} " if length is not None else ""
            raise ScenarioError(f"`{self.key(name)}` must be a list of {size}finite numbers, found {value!r}")
        return [float(v) for v in value]

    def per_joint(self, name: str, default: float) -> PerJoint:
        value = self.data.get(name, default)
        key = self.key(name)
        if value == []:
            raise _derived(key)
        if _is_number(value):
            values: float | list[float] = float(value)
            check = [values]
        elif isinstance(value, list) and all(_is_number(v) for v in value):
            values = [float(v) for v in value]
            check = values
        else:
            raise ScenarioError(f"`{key}` must be one number or one per joint, found {value!r}")
        if not all(math.isfinite(v) and v >= 0.0 for v in check):
            raise ScenarioError(f"`{key}` must be finite and ≥ 0, found {value!r}")
        return PerJoint(key, values)


@dataclass(frozen=True)
class PerJoint:
    """One value for every joint, or one per joint (node order)."""

    key: str
    values: float | list[float]

    def expand(self, nv: int) -> list[float]:
        """One value per joint; refuses a list of the wrong length, naming the key."""
        if isinstance(self.values, float):
            return [self.values] * nv
        if len(self.values) == 1:
            # `[x]` is one value, as the node reads it.
            return [self.values[0]] * nv
        if len(self.values) != nv:
            raise ScenarioError(
                f"`{self.key}`: expected one value or {nv} values (one per joint), found {len(self.values)}"
            )
        return list(self.values)


@dataclass(frozen=True)
class PayloadStep:
    """From ``at_secs`` (run time τ) on, the payload mass is ``mass_kg``."""

    at_secs: float
    mass_kg: float


@dataclass(frozen=True)
class Payload:
    """A rigid payload on a link: mass, CoM and principal inertia in the link's frame."""

    link: str | None
    """``None``: the child link of the last joint (node order)."""
    mass_kg: float = 1.5
    com_m: tuple[float, float, float] = (0.0, 0.0, 0.08)
    inertia_diag_kgm2: tuple[float, float, float] = (0.0, 0.0, 0.0)
    step: PayloadStep | None = None


@dataclass(frozen=True)
class FrictionDrift:
    """Viscous multiplier 1 at τ = 0 rising linearly to ``factor_at_end`` at ``over_secs``."""

    factor_at_end: float
    over_secs: float

    def factor_at(self, t_secs: float) -> float:
        s = min(max(t_secs / self.over_secs, 0.0), 1.0)
        return 1.0 + (self.factor_at_end - 1.0) * s


@dataclass(frozen=True)
class Friction:
    """τ_f = −(k(τ)·b·q̇ + c·tanh(q̇/v_s)) per joint (as ``crates/embedded_sim/src/truth.rs``)."""

    viscous_nms_per_rad: PerJoint
    coulomb_nm: PerJoint
    coulomb_smoothing_rad_s: float = 0.01
    drift: FrictionDrift | None = None


@dataclass(frozen=True)
class Glitches:
    """Per sample and joint, with this probability, a torque or an encoder spike."""

    probability_per_sample: float = 0.0
    torque_spike_nm: tuple[float, float] = (5.0, 20.0)
    encoder_spike_rad: float = 0.05


@dataclass(frozen=True)
class Sim:
    """The ``sim:`` section: the true robot and its sensors."""

    rate_hz: float = 1000.0
    substeps: int = 1
    integrator: str = "rk4"
    seed: int = 1
    payload: Payload = field(default_factory=lambda: Payload(link=None))
    friction: Friction = field(
        default_factory=lambda: Friction(
            PerJoint("sim.friction.viscous_nms_per_rad", 0.5), PerJoint("sim.friction.coulomb_nm", 0.5)
        )
    )
    armature_kgm2: PerJoint = field(default_factory=lambda: PerJoint("sim.armature_kgm2", 0.1))
    torque_noise_std_nm: PerJoint = field(default_factory=lambda: PerJoint("sim.torque_noise_std_nm", 0.05))
    encoder_noise_std_rad: float = 1e-5
    velocity_noise_std_rad_s: float = 0.0
    glitches: Glitches = field(default_factory=Glitches)

    @property
    def dt_secs(self) -> float:
        return 1.0 / self.rate_hz


PANDA_READY_RAD = [0.0, -math.pi / 4, 0.0, -3 * math.pi / 4, 0.0, math.pi / 2, math.pi / 4]


@dataclass(frozen=True)
class Reference:
    """q_d,i(τ) = center_i + a_i·sin(2π f_i τ + i·φ)."""

    center_rad: list[float] = field(default_factory=lambda: list(PANDA_READY_RAD))
    amplitude_rad: PerJoint = field(default_factory=lambda: PerJoint("run.reference.amplitude_rad", 0.3))
    frequencies_hz: list[float] = field(default_factory=lambda: [0.21, 0.29, 0.37, 0.43, 0.53, 0.59, 0.67])
    phase_step_rad: float = math.pi / 7


@dataclass(frozen=True)
class Run:
    """The ``run:`` section."""

    duration_s: float = 30.0
    reference: Reference = field(default_factory=Reference)


@dataclass(frozen=True)
class Scenario:
    """Everything the driver reads from a parameter file."""

    urdf: Path
    sim: Sim
    run: Run
    source: str = "<defaults>"

    def check_joints(self, nv: int) -> None:
        """Checks every per-joint value against the robot's joint count."""
        s = self.sim
        ref = self.run.reference
        per_joints = (
            s.friction.viscous_nms_per_rad,
            s.friction.coulomb_nm,
            s.armature_kgm2,
            s.torque_noise_std_nm,
            ref.amplitude_rad,
        )
        for per_joint in per_joints:
            per_joint.expand(nv)
        for key, values in (("center_rad", ref.center_rad), ("frequencies_hz", ref.frequencies_hz)):
            if len(values) != nv:
                raise ScenarioError(
                    f"`run.reference.{key}`: expected {nv} values (one per joint), found {len(values)}"
                )


def _positive(v: float) -> bool:
    return v > 0.0


def _nonneg(v: float) -> bool:
    return v >= 0.0


def _payload(sec: _Section) -> Payload:
    link = sec.data.get("link")
    if link is not None and not isinstance(link, str):
        raise ScenarioError(f"`{sec.key('link')}` must be a link name, found {link!r}")
    step = None
    if sec.has("step"):
        st = sec.section("step")
        step = PayloadStep(
            at_secs=st.number("at_secs", 0.0, _nonneg, "must be ≥ 0"),
            mass_kg=st.number("mass_kg", 0.0, _nonneg, "must be ≥ 0"),
        )
    inertia = sec.numbers("inertia_diag_kgm2", [0.0, 0.0, 0.0], 3)
    if any(v < 0.0 for v in inertia):
        raise ScenarioError(f"`{sec.key('inertia_diag_kgm2')}` must be ≥ 0, found {inertia}")
    a, b, c = inertia
    if a + b < c or b + c < a or a + c < b:
        raise ScenarioError(
            f"`{sec.key('inertia_diag_kgm2')}` must satisfy the triangle inequality (a rigid body's "
            f"principal moments), found {inertia}"
        )
    if sec.has("link") and link == "":
        raise DerivedValueError(f"`{sec.key('link')}` is empty: {RESOLVE_HINT}")
    mass = sec.data.get("mass_kg", 1.5)
    if _is_number(mass) and mass < 0.0:
        raise DerivedValueError(f"`{sec.key('mass_kg')}` is negative: {RESOLVE_HINT}")
    return Payload(
        link=link or None,
        mass_kg=sec.number("mass_kg", 1.5, _nonneg, "must be ≥ 0"),
        com_m=tuple(sec.numbers("com_m", [0.0, 0.0, 0.08], 3)),
        inertia_diag_kgm2=tuple(inertia),
        step=step,
    )


def _friction(sec: _Section) -> Friction:
    drift = None
    if sec.has("drift"):
        dr = sec.section("drift")
        drift = FrictionDrift(
            factor_at_end=dr.number("factor_at_end", 1.0, _nonneg, "must be ≥ 0"),
            over_secs=dr.number("over_secs", 1.0, _positive, "must be > 0"),
        )
    return Friction(
        viscous_nms_per_rad=sec.per_joint("viscous_nms_per_rad", 0.5),
        coulomb_nm=sec.per_joint("coulomb_nm", 0.5),
        coulomb_smoothing_rad_s=sec.number("coulomb_smoothing_rad_s", 0.01, _positive, "must be > 0"),
        drift=drift,
    )


def _glitches(sec: _Section) -> Glitches:
    spike = sec.numbers("torque_spike_nm", [5.0, 20.0], 2)
    if not 0.0 <= spike[0] <= spike[1]:
        raise ScenarioError(f"`{sec.key('torque_spike_nm')}` must be [min, max] with 0 ≤ min ≤ max, found {spike}")
    return Glitches(
        probability_per_sample=sec.number(
            "probability_per_sample", 0.0, lambda v: 0.0 <= v <= 1.0, "must be in [0, 1]"
        ),
        torque_spike_nm=(spike[0], spike[1]),
        encoder_spike_rad=sec.number("encoder_spike_rad", 0.05, _nonneg, "must be ≥ 0"),
    )


def _sim(sec: _Section) -> Sim:
    integrator = sec.data.get("integrator", "rk4")
    if integrator not in ("rk4", "semi_implicit_euler"):
        raise ScenarioError(f"`{sec.key('integrator')}` must be rk4 or semi_implicit_euler, found {integrator!r}")
    seed = sec.integer("seed", 1, 0)
    return Sim(
        rate_hz=sec.number("rate_hz", 1000.0, _positive, "must be > 0"),
        substeps=sec.integer("substeps", 1, 1),
        integrator=integrator,
        seed=seed,
        payload=_payload(sec.section("payload")),
        friction=_friction(sec.section("friction")),
        armature_kgm2=sec.per_joint("armature_kgm2", 0.1),
        torque_noise_std_nm=sec.per_joint("torque_noise_std_nm", 0.05),
        encoder_noise_std_rad=sec.number("encoder_noise_std_rad", 1e-5, _nonneg, "must be ≥ 0"),
        velocity_noise_std_rad_s=sec.number("velocity_noise_std_rad_s", 0.0, _nonneg, "must be ≥ 0"),
        glitches=_glitches(sec.section("glitches")),
    )


def _run(sec: _Section) -> Run:
    ref = sec.section("reference")
    default = Reference()
    return Run(
        duration_s=sec.number("duration_s", 30.0, _positive, "must be > 0"),
        reference=Reference(
            center_rad=ref.numbers("center_rad", default.center_rad),
            amplitude_rad=ref.per_joint("amplitude_rad", 0.3),
            frequencies_hz=ref.numbers("frequencies_hz", default.frequencies_hz),
            phase_step_rad=ref.number("phase_step_rad", default.phase_step_rad),
        ),
    )


def from_mapping(params: Any, base_dir: Path | None, source: str = "<mapping>") -> Scenario:
    """Reads the content of a parameter file (already parsed); relative URDF paths are
    taken from ``base_dir`` (the file's folder), else from the working directory."""
    top = _Section(params, "")
    node = top.section("gp_learning_node").section("ros__parameters")
    node.path = ""  # keys are named from inside ros__parameters, as in the node's errors
    robot = node.section("robot")
    if robot.data.get("joints"):
        raise ScenarioError(
            "`robot.joints`: the driver simulates and commands every movable joint of the URDF; a "
            "reduced model (some joints locked) is not supported by the MuJoCo driver"
        )
    urdf = robot.data.get("urdf", "")
    if urdf is None:
        urdf = ""
    if not isinstance(urdf, str):
        raise ScenarioError(f"`robot.urdf` must be a path, found {urdf!r}")
    if urdf == "":
        urdf_path = DEFAULT_URDF
    else:
        urdf_path = Path(urdf)
        if not urdf_path.is_absolute() and base_dir is not None:
            urdf_path = base_dir / urdf_path
    return Scenario(urdf=urdf_path, sim=_sim(node.section("sim")), run=_run(node.section("run")), source=source)


def read_mapping(path: str | Path) -> Any:
    """The parsed YAML of a parameter file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ScenarioError(f"cannot read parameter file: {err.strerror}: {path}") from err
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ScenarioError(f"invalid parameter file: {err}: {path}") from err


def from_file(path: str | Path) -> Scenario:
    """Reads a parameter file; errors name the key and end with the file (a file with values
    derived from the robot: :func:`.resolve.scenario_from_file`)."""
    path = Path(path)
    params = read_mapping(path)
    try:
        return from_mapping(params, path.parent, source=str(path))
    except DerivedValueError as err:
        raise DerivedValueError(f"invalid parameter file: {err}: {path}") from err
    except ScenarioError as err:
        raise ScenarioError(f"invalid parameter file: {err}: {path}") from err
