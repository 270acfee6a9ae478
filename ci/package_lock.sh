#!/usr/bin/env bash
# The ROS 2 package gp_learning_node/ is a cargo workspace of its own (see its Cargo.toml); its
# Cargo.lock is the repository's, pruned to what the package uses, so that colcon builds the
# versions the tests ran. `--check` fails when the committed file is not that.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = "--check" ] && check=1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp gp_learning_node/Cargo.lock "$tmp/committed.lock" 2>/dev/null || true
cp Cargo.lock gp_learning_node/Cargo.lock
# Resolving against the copied lock keeps every locked version and drops unused entries.
cargo metadata --offline --format-version 1 --manifest-path gp_learning_node/Cargo.toml >/dev/null
if [ "$check" = 1 ] && ! cmp -s gp_learning_node/Cargo.lock "$tmp/committed.lock"; then
  cp "$tmp/committed.lock" gp_learning_node/Cargo.lock
  echo "error: gp_learning_node/Cargo.lock is not the repository's Cargo.lock pruned; run bash ci/package_lock.sh and commit it" >&2
  exit 1
fi
