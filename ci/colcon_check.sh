#!/usr/bin/env bash
# The ROS 2 package as a user gets it (issue 20), run by ci/test.sh after the cargo tests:
#  1. gp_learning_node/Cargo.lock is the repository's, pruned;
#  2. `colcon build` of the repository (msgs/, gp_learning_node_plugins/, gp_learning_node/)
#     with the PyPI Jazzy environment, into $CARGO_TARGET_DIR/colcon;
#  3. the install tree has the executable, the plugins, share/{launch,config,urdf} and the
#     ament index entries;
#  4. the installed executable runs from another directory: it finds the plugins with no
#     environment variable of ours, with and without the install's setup script sourced,
#     and runs the node for two seconds;
#  5. the launch files, imported against the stand-in of the launch API, start the installed
#     node with the arguments ros2 launch would give it (testing/launch_tests).
# Needs the environment of ci/ros2_jazzy/setup.sh --msgs sourced (ci/test.sh does).
# `--build` does 1 and 2 only, `--check` 3 to 5 on what `--build` left (ci/test.sh runs the
# build beside the cargo tests); no argument does all.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
ws="$target/colcon"
fail() { echo "error: $*" >&2; exit 1; }
phase="${1:-all}"
case "$phase" in
  all | --build | --check) ;;
  *) fail "usage: colcon_check.sh [--build | --check]" ;;
esac

if [ "$phase" != --check ]; then
  echo "--- gp_learning_node/Cargo.lock"
  bash "$repo/ci/package_lock.sh" --check

  echo "--- colcon build"
  # colcon-cargo 0.1 crawls the tree: the target folder is not a source of packages.
  touch "$target/COLCON_IGNORE"
  rm -rf "$ws/install" "$ws/log"
  # colcon gives cargo `--target-dir build/gp_learning_node`, a folder of its own: r2r's build
  # script caches its generated code per ROS environment and, taking code from that cache,
  # omits the cfg flags of the message packages, so a target folder built alternately in two
  # environments (the tests' and colcon's, which lists each package's prefix) breaks.
  # gp_learning_node_plugins (no ROS code) builds in $CARGO_TARGET_DIR itself.
  [ -L "$ws/build/gp_learning_node" ] && rm "$ws/build/gp_learning_node"
  mkdir -p "$ws/build"
  start=$SECONDS
  (cd "$ws" && colcon --log-base "$ws/log" build --base-paths "$repo" --build-base "$ws/build" \
    --install-base "$ws/install" >"$ws/build.log" 2>&1) \
    || { tail -50 "$ws/build.log" >&2; fail "colcon build failed; the log is $ws/build.log"; }
  grep -E "^(Starting|Finished|Summary)" "$ws/build.log" || true
  echo "colcon build: $((SECONDS - start)) s"
fi
[ "$phase" = --build ] && exit 0
[ -d "$ws/install" ] || fail "no colcon install in $ws: run colcon_check.sh --build first"

echo "--- the install tree"
install="$ws/install"
[ "$(cat "$install/.colcon_install_layout")" = isolated ] || fail "not colcon's isolated layout"
for path in \
  gp_learning_node/lib/gp_learning_node/gp_learning_node \
  gp_learning_node/share/gp_learning_node/package.xml \
  gp_learning_node/share/gp_learning_node/launch/gp_learning_node.launch.py \
  gp_learning_node/share/gp_learning_node/launch/mujoco_sim.launch.py \
  gp_learning_node/share/gp_learning_node/config/sim_default.yaml \
  gp_learning_node/share/gp_learning_node/config/ros2_controllers.yaml \
  gp_learning_node/share/gp_learning_node/config/gazebo/empty.sdf \
  gp_learning_node/share/gp_learning_node/launch/gazebo.launch.py \
  gp_learning_node/share/gp_learning_node/urdf/ros2_control.urdf.xacro \
  gp_learning_node/share/gp_learning_node/urdf/gp_learning_node_ros2_control.xacro \
  gp_learning_node/share/gp_learning_node/urdf/panda.urdf \
  gp_learning_node/share/gp_learning_node/mujoco_driver/mujoco_driver.py \
  gp_learning_node/share/ament_index/resource_index/packages/gp_learning_node \
  gp_learning_node_plugins/lib/gp_learning_node_plugins/libgpn_skygp.so \
  gp_learning_node_plugins/lib/gp_learning_node_plugins/libgpn_rcagp.so \
  gp_learning_node_plugins/lib/gp_learning_node_plugins/libgpn_vbks.so \
  gp_learning_node_plugins/lib/gp_learning_node_plugins/libgpn_loggp.so \
  gp_learning_node_plugins/share/ament_index/resource_index/packages/gp_learning_node_plugins \
  gp_learning_node_plugins/share/ament_index/resource_index/gp_learning_node__plugins/gp_learning_node_plugins \
  gp_learning_node_msgs/share/ament_index/resource_index/packages/gp_learning_node_msgs \
  gp_learning_node_msgs/share/gp_learning_node_msgs/msg/ResidualEstimate.msg; do
  [ -e "$install/$path" ] || fail "the install tree lacks $path"
done
[ -x "$install/gp_learning_node/lib/gp_learning_node/gp_learning_node" ] || fail "the executable is not executable"
echo "install tree: complete"

echo "--- the installed node, from another directory"
exe="$install/gp_learning_node/lib/gp_learning_node/gp_learning_node"
share="$install/gp_learning_node/share/gp_learning_node"
elsewhere="$(mktemp -d)"
trap 'rm -rf "$elsewhere"' EXIT
check_plugins() {
  local listed
  listed="$(cd "$elsewhere" && env -u GPN_PLUGIN_PATH "$@" plugins)"
  echo "$listed"
  for name in skygp rcagp vbks loggp; do
    grep -q "^$name " <<<"$listed" || fail "the installed node does not find the plugin $name ($*)"
  done
}
# Without the install's setup script: the executable finds its install's plugin packages.
check_plugins "$exe"
# With it sourced, as for `ros2 run` (which runs lib/<package>/<executable>).
(
  # colcon's setup scripts read unset variables.
  set +u
  # shellcheck source=/dev/null
  source "$install/setup.bash"
  set -u
  check_plugins "$exe"
  cd "$elsewhere"
  domain=$(( ($$ % 100) + 100 ))
  ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST "$exe" run --params "$share/config/sim_default.yaml" \
    --domain-id "$domain" --duration 2 --json --ros-args -p "robot.urdf:=$share/urdf/panda.urdf" \
    >"$elsewhere/run.json" \
    || fail "the installed node did not run for 2 s"
  python3 - "$elsewhere/run.json" "$share/urdf/panda.urdf" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
assert summary["robot"] == sys.argv[2], summary["robot"]
assert summary["plugin"] == "skygp", summary
print(f"installed node ran {summary['wall_s']:.1f} s as {summary['node']} on {summary['robot']}")
PY
)

echo "--- launch files (stand-in of the launch API, installed node)"
GPN_INSTALL="$install" python -m pytest "$repo/testing/launch_tests" -q
