"""Shared test setup: import path, loopback-only DDS, unique domain ids, fixture paths."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

SIM_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = SIM_DIR.parent
sys.path.insert(0, str(SIM_DIR))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Every participant of the tests (driver and fake controllers) stays on the loopback
# interface: set before the first Cyclone DDS domain is created in this process.
os.environ["CYCLONEDDS_URI"] = (SIM_DIR / "cyclonedds_localhost.xml").as_uri()

SHARED_DYNAMICS = REPO_ROOT.parent / "shared" / "fixtures" / "dynamics"
# The node's default file leaves the robot-specific values to be derived from the robot;
# the tests read it resolved by the node's executable (gpn_mujoco.resolve), as the driver
# does. GPN_NODE names the executable (the Rust test that runs this suite sets it).
SHIPPED_PARAMS = REPO_ROOT / "config" / "sim_default.yaml"


def _resolved_default_params() -> Path:
    import subprocess
    import tempfile

    from gpn_mujoco import resolve

    exe = resolve.find_gp_node()
    if exe is None:
        raise RuntimeError(
            "no gp-node executable to resolve config/sim_default.yaml: build it (cargo build --release) "
            "or set GPN_NODE"
        )
    out = subprocess.run([str(exe), "sim", "--print-params"], capture_output=True, text=True, check=True)
    path = Path(tempfile.mkdtemp(prefix="gpn_driver_tests_")) / "sim_default_resolved.yaml"
    path.write_text(out.stdout, encoding="utf-8")
    return path


DEFAULT_PARAMS = Path(os.environ.get("GPN_TEST_PARAMS") or _resolved_default_params())
# Child processes (controller_process.py) read the same file.
os.environ["GPN_TEST_PARAMS"] = str(DEFAULT_PARAMS)

# A block of domain ids per test process (from its pid), one id per test, so parallel
# runs of the suite on one machine do not hear each other.
_BASE = (os.getpid() * 37) % 200
_COUNTER = itertools.count()


def next_domain_id() -> int:
    """A DDS domain id in 1–232 not used before by this process (within 32 calls)."""
    return 1 + (_BASE + next(_COUNTER) % 32) % 232


@pytest.fixture
def domain_id() -> int:
    return next_domain_id()


@pytest.fixture(scope="session")
def shared_dynamics() -> Path:
    if not SHARED_DYNAMICS.is_dir():
        pytest.fail(f"the shared fixtures are missing: expected {SHARED_DYNAMICS} (../shared beside the repo)")
    return SHARED_DYNAMICS
