"""The fake computed-torque controller of ``controller.py`` in a process of its own, so that a
test can SIGKILL it as a crashing node dies (no clean DDS goodbye):

    python controller_process.py DOMAIN_ID

Uses the default scenario's nominal model, prints ``ready`` once its DDS entities exist,
then answers joint states until it is killed. DDS settings come from the environment
(the tests' loopback-only CYCLONEDDS_URI).
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from controller import ComputedTorque, FakeController  # noqa: E402
from gpn_mujoco import resolve, scenario, urdf  # noqa: E402

# The resolved default file of conftest (GPN_TEST_PARAMS), else the shipped one resolved here.
DEFAULT_PARAMS = os.environ.get("GPN_TEST_PARAMS") or HERE.parents[1] / "config" / "sim_default.yaml"


def main() -> None:
    domain_id = int(sys.argv[1])
    sc = resolve.scenario_from_file(DEFAULT_PARAMS)
    controller = FakeController(domain_id, ComputedTorque(urdf.load(sc.urdf), sc))
    controller.start()
    print("ready", flush=True)
    controller.join()  # until killed


if __name__ == "__main__":
    main()
