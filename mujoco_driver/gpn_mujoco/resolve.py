"""Parameter files whose robot-specific values the node derives from the robot (an empty
list, an empty payload link, a negative payload mass: ``crates/app/src/robot_defaults.rs``).
The driver does not repeat that derivation — two implementations would drift — it asks the
node's own executable for the resolved file (``gp-node sim --print-params``), so both sides
simulate the same robot by construction.

Where the executable is looked for, first found wins: ``--gp-node PATH`` (or ``$GPN_NODE``);
``gp-node`` on ``PATH``; the ament install this driver sits in
(``share/gp_learning_node/mujoco_driver`` → ``lib/gp_learning_node/gp_learning_node``, the same
front end); the repository's ``target/release/gp-node`` and ``target/debug/gp-node``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import yaml

from .scenario import DerivedValueError, Scenario, ScenarioError, from_mapping, read_mapping

HERE = Path(__file__).resolve().parent


def find_gp_node(explicit: str | None = None) -> Path | None:
    """The node's executable, by the order of the module doc; ``None`` if there is none."""
    given = explicit or os.environ.get("GPN_NODE")
    if given:
        return Path(given)
    on_path = shutil.which("gp-node")
    if on_path:
        return Path(on_path)
    driver_dir = HERE.parent  # .../mujoco_driver
    candidates = [
        driver_dir.parents[2] / "lib" / "gp_learning_node" / "gp_learning_node"
        if len(driver_dir.parents) > 2
        else None,
        driver_dir.parent / "target" / "release" / "gp-node",
        driver_dir.parent / "target" / "debug" / "gp-node",
    ]
    return next((c for c in candidates if c is not None and c.is_file() and os.access(c, os.X_OK)), None)


def scenario_from_file(path: str | Path, urdf: str | None = None, gp_node: str | None = None) -> Scenario:
    """The scenario of a parameter file; a file with derived values is resolved by the node's
    executable first (for ``urdf`` when given: the driver's ``--urdf``)."""
    path = Path(path)
    params = read_mapping(path)
    try:
        return from_mapping(params, path.parent, source=str(path))
    except DerivedValueError as derived:
        exe = find_gp_node(gp_node)
        if exe is None:
            raise ScenarioError(f"invalid parameter file: {derived}; no gp-node executable found (--gp-node): {path}")
        cmd = [str(exe), "sim", "--print-params", "--params", str(path)]
        if urdf:
            cmd += ["--urdf", str(urdf)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise ScenarioError(
                f"resolving the derived values of {path} with {exe} failed: "
                f"{' '.join(out.stderr.split())}"
            )
        try:
            return from_mapping(yaml.safe_load(out.stdout), path.parent, source=f"{path} (resolved by {exe.name})")
        except ScenarioError as err:
            raise ScenarioError(f"invalid parameter file (resolved by {exe}): {err}: {path}") from err
