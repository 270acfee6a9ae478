#!/usr/bin/env python3
"""MuJoCo robot driver over DDS for gp-learning-node: ``python3 mujoco_driver/mujoco_driver.py --help``.

The implementation is the package ``gpn_mujoco`` beside this file; see ``mujoco_driver/README.md``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpn_mujoco.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
