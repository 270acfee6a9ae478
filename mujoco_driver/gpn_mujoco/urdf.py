"""URDF → the robot's joint list and the nominal MuJoCo model (knows nothing of DDS).

What is read here (with the standard library's XML parser): each ``<joint>`` directly under
``<robot>`` — ``name``, ``type``, ``<parent link>``, ``<child link>`` and
``<limit effort lower upper>`` — and each ``<link>``'s name. The rigid-body model itself
(origins, axes, inertials) is read by MuJoCo's own URDF importer, after this module has
removed every ``<visual>`` and ``<collision>`` element: MuJoCo opens the mesh files those
reference, and none ship.

Joint order: depth-first from the root link, the joints of each link in file order — the
order of the node's URDF loader (``crates/dynamics/src/urdf.rs``), which is the file order for a
serial chain. JointState names, commands and per-joint scenario values use this order;
MuJoCo's own indices are mapped by joint name.

The nominal model keeps the URDF's rigid-body dynamics exactly and nothing else:

- fixed joints fused (``fusestatic``), no ``balanceinertia``, ``inertiafromgeom`` false,
  ``boundmass``/``boundinertia`` 0: the inertials are used as written;
- no contacts and no constraints at all (``mjDSBL_CONTACT | mjDSBL_CONSTRAINT``); joint
  position limits are not limits (``limited`` false): the reference stays inside them and
  the node's rigid-body model has none, so they must not act;
- ``<dynamics damping friction>`` ignored (damping, frictionloss, armature, stiffness 0),
  ``<mimic>`` couplings removed (MuJoCo makes them equality constraints): every movable
  joint is an independent coordinate, as in the node and in Pinocchio;
- actuator force limits off (the driver clamps commands to the URDF effort limits itself);
- gravity (0, 0, −9.81).

Refused with an error naming the element and the file: unreadable or malformed XML,
floating and planar joints (the base is fixed), unknown joint types, joints whose links are
missing, several root links, non-numeric limits.
"""

from __future__ import annotations

import logging
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

GRAVITY_MPS2 = (0.0, 0.0, -9.81)

LOG = logging.getLogger("mujoco_driver.mujoco")


def _mujoco_warning(message: str) -> None:
    # MuJoCo's default handler appends warnings to MUJOCO_LOG.TXT in the working directory;
    # route them to logging instead. Position limits never act here, so the importer's
    # note about a joint with lower == upper (no limit in the URDF) is only a debug line.
    if "equal lower and upper limits" in message:
        LOG.debug("%s", message)
    else:
        LOG.warning("MuJoCo: %s", message)


mujoco.set_mju_user_warning(_mujoco_warning)

_MOVABLE = ("revolute", "continuous", "prismatic")
_KNOWN = _MOVABLE + ("fixed", "floating", "planar")


class UrdfError(Exception):
    """The URDF cannot be used; the message names the element and ends with the file."""


@dataclass(frozen=True)
class Joint:
    """One movable URDF joint."""

    name: str
    kind: str
    """``revolute``, ``continuous`` or ``prismatic``."""
    parent_link: str
    child_link: str
    effort_limit: float
    """Magnitude (N·m, or N for prismatic joints); ``inf`` when the file has none or ≤ 0."""
    position_lower: float
    """rad or m; ``-inf`` for continuous joints and when absent."""
    position_upper: float


@dataclass(frozen=True)
class Robot:
    """The parts of a URDF the driver needs besides MuJoCo's model."""

    path: Path
    xml_stripped: str
    """The URDF text without ``<visual>``/``<collision>``, as given to MuJoCo."""
    joints: tuple[Joint, ...]
    """Movable joints in the node's order (depth-first, file order)."""
    links: tuple[str, ...]

    @property
    def joint_names(self) -> list[str]:
        """Movable joint names in the node's order."""
        return [j.name for j in self.joints]

    @property
    def effort_limits(self) -> np.ndarray:
        """Effort limit per joint (``inf``: none)."""
        return np.array([j.effort_limit for j in self.joints])

    def nominal_model(self) -> mujoco.MjModel:
        """The compiled nominal model (no scenario extras)."""
        return compile_spec(self.nominal_spec())

    def nominal_spec(self) -> mujoco.MjSpec:
        """A fresh MuJoCo spec of the nominal robot, configured as the module doc says."""
        try:
            spec = mujoco.MjSpec.from_string(self.xml_stripped)
        except Exception as err:  # MuJoCo raises ValueError with its parser's message
            raise UrdfError(f"MuJoCo cannot import the URDF: {err}: {self.path}") from err
        configure_nominal(spec)
        return spec


def compile_spec(spec: mujoco.MjSpec) -> mujoco.MjModel:
    """Compiles ``spec``. MuJoCo's compiler evaluates the model once, and a Python
    ``mjcb_passive`` hook (the plant's friction) cannot be called on a model that is still
    being compiled, so the hook is unset for the duration and restored afterwards. Compile
    only while no other thread steps a model."""
    hook = mujoco.get_mjcb_passive()
    mujoco.set_mjcb_passive(None)
    try:
        return spec.compile()
    finally:
        mujoco.set_mjcb_passive(hook)


def strip_geometry(root: ET.Element) -> int:
    """Removes every ``<visual>`` and ``<collision>`` element in place; returns how many."""
    removed = 0
    for parent in root.iter():
        for child in list(parent):
            if child.tag in ("visual", "collision"):
                parent.remove(child)
                removed += 1
    return removed


def configure_nominal(spec: mujoco.MjSpec) -> None:
    """Sets the compiler, options and joints so the model is the URDF's rigid bodies only."""
    c = spec.compiler
    c.fusestatic = True
    c.balanceinertia = False
    c.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    c.boundmass = 0.0
    c.boundinertia = 0.0
    c.discardvisual = True
    spec.option.gravity = np.array(GRAVITY_MPS2)
    spec.option.disableflags |= (
        mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    )
    # <mimic> becomes an equality constraint in MuJoCo's importer: remove them all.
    for eq in list(spec.equalities):
        spec.delete(eq)
    for joint in spec.joints:
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_FALSE
        joint.damping = np.zeros_like(np.asarray(joint.damping, dtype=float))
        joint.stiffness = np.zeros_like(np.asarray(joint.stiffness, dtype=float))
        joint.frictionloss = 0.0
        joint.armature = 0.0


def _number(text: str | None, element: str, attribute: str, path: Path, default: float) -> float:
    if text is None or text.strip() == "":
        return default
    try:
        value = float(text)
    except ValueError:
        raise UrdfError(f"{element}: attribute `{attribute}`={text!r} is not a number: {path}") from None
    if math.isnan(value):
        raise UrdfError(f"{element}: attribute `{attribute}` is NaN: {path}")
    return value


def _link_of(joint: ET.Element, tag: str, name: str, path: Path) -> str:
    el = joint.find(tag)
    link = el.get("link") if el is not None else None
    if not link:
        raise UrdfError(f"joint '{name}': missing <{tag} link=...>: {path}")
    return link


def load(path: str | Path) -> Robot:
    """Reads and checks a URDF file; see the module doc for what is read and refused."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise UrdfError(f"cannot read the URDF: {err.strerror}: {path}") from err
    return parse(text, path)


def parse(text: str, path: Path) -> Robot:
    """As :func:`load`, from the file's text (``path`` names it in errors)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise UrdfError(f"malformed XML ({err}): {path}") from err
    if root.tag != "robot":
        raise UrdfError(f"root element is <{root.tag}>, expected <robot>: {path}")
    links = [el.get("name", "") for el in root.findall("link")]
    if len(set(links)) != len(links):
        raise UrdfError(f"duplicate <link> names: {path}")
    link_set = set(links)

    children: dict[str, list[int]] = {name: [] for name in links}
    parent_of: dict[str, str] = {}
    raw: list[tuple[str, str, str, str, ET.Element]] = []
    for el in root.findall("joint"):
        name = el.get("name", "")
        kind = el.get("type", "")
        if kind not in _KNOWN:
            raise UrdfError(f"joint '{name}': unknown type '{kind}': {path}")
        if kind in ("floating", "planar"):
            raise UrdfError(
                f"joint '{name}': type '{kind}' is not supported (the base is fixed; "
                f"revolute, continuous, prismatic and fixed joints only): {path}"
            )
        parent = _link_of(el, "parent", name, path)
        child = _link_of(el, "child", name, path)
        for link in (parent, child):
            if link not in link_set:
                raise UrdfError(f"joint '{name}': link '{link}' is not defined: {path}")
        if child in parent_of:
            raise UrdfError(f"link '{child}' has two parent joints: {path}")
        parent_of[child] = parent
        children[parent].append(len(raw))
        raw.append((name, kind, parent, child, el))

    roots = [name for name in links if name not in parent_of]
    if len(roots) != 1:
        raise UrdfError(f"expected one root link, found {roots or 'none (a cycle)'}: {path}")

    joints: list[Joint] = []
    stack = list(reversed(children[roots[0]]))
    while stack:
        index = stack.pop()
        name, kind, parent, child, el = raw[index]
        stack.extend(reversed(children[child]))
        if kind not in _MOVABLE:
            continue
        limit = el.find("limit")
        get = (lambda a: limit.get(a)) if limit is not None else (lambda a: None)
        element = f"joint '{name}' <limit>"
        effort = _number(get("effort"), element, "effort", path, 0.0)
        lower = _number(get("lower"), element, "lower", path, -math.inf)
        upper = _number(get("upper"), element, "upper", path, math.inf)
        if kind == "continuous":
            lower, upper = -math.inf, math.inf
        joints.append(
            Joint(
                name=name,
                kind=kind,
                parent_link=parent,
                child_link=child,
                effort_limit=effort if effort > 0.0 else math.inf,
                position_lower=lower,
                position_upper=upper,
            )
        )
    if len(joints) != sum(1 for r in raw if r[1] in _MOVABLE):
        raise UrdfError(f"some joints are not reachable from the root link '{roots[0]}': {path}")
    if not joints:
        raise UrdfError(f"no movable joint (revolute, continuous or prismatic): {path}")

    strip_geometry(root)
    return Robot(
        path=path,
        xml_stripped=ET.tostring(root, encoding="unicode"),
        joints=tuple(joints),
        links=tuple(links),
    )


@dataclass(frozen=True)
class JointMap:
    """Where each joint (node order) lives in a compiled MuJoCo model."""

    qpos: np.ndarray
    dof: np.ndarray


def joint_map(model: mujoco.MjModel, robot: Robot) -> JointMap:
    """Maps the robot's joints by name onto the model's qpos and dof addresses."""
    if model.nv != len(robot.joints) or model.nq != len(robot.joints):
        found = [model.joint(i).name for i in range(model.njnt)]
        raise UrdfError(
            f"MuJoCo made {model.nv} degrees of freedom ({found}) from "
            f"{len(robot.joints)} movable joints: {robot.path}"
        )
    qpos, dof = [], []
    for joint in robot.joints:
        try:
            j = model.joint(joint.name)
        except KeyError:
            raise UrdfError(f"joint '{joint.name}' is missing in MuJoCo's model: {robot.path}") from None
        qpos.append(int(j.qposadr[0]))
        dof.append(int(j.dofadr[0]))
    return JointMap(qpos=np.array(qpos), dof=np.array(dof))
