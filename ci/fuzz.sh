#!/usr/bin/env bash
# Coverage-guided fuzzing of what the node reads from outside (fuzz/: cargo fuzz, libFuzzer):
# URDF text, parameter files, model files, joint-state and trajectory messages as CDR bytes.
# Each target runs FUZZ_SECONDS (default 20) from its committed corpus (fuzz/corpus/<target>)
# and, for the URDF and parameter targets, the repository's own urdf/ and config/ files. New
# inputs go to a scratch folder, so the repository is left as it was. A crash fails the run
# and leaves its input in fuzz/artifacts/<target>/: make it a regression test (a Rust test of
# the crate at fault, and the input in fuzz/corpus/<target>/regression_*), then fix it.
#
# Stable Rust: cargo fuzz passes the compiler unstable flags, which RUSTC_BOOTSTRAP=1 lets the
# stable compiler take; no sanitizer (the targets check panics and their own assertions).
# The instrumented build covers the small crates only (no rerun, no DDS), in fuzz/target.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
TARGETS=(urdf params model_file joint_state trajectory)
seconds="${FUZZ_SECONDS:-20}"

if ! cargo fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
export RUSTC_BOOTSTRAP=1
# The fuzz crate is a workspace of its own, built with other flags: its own target folder.
unset CARGO_TARGET_DIR
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

cd fuzz
cargo fuzz build --sanitizer none
for target in "${TARGETS[@]}"; do
  seeds=()
  [ -d "corpus/$target" ] && seeds+=("corpus/$target")
  case "$target" in
    urdf) seeds+=(../urdf) ;;
    params) seeds+=(../config) ;;
  esac
  mkdir -p "$scratch/$target"
  echo "fuzz: $target for ${seconds} s" >&2
  log="$scratch/$target.log"
  if ! cargo fuzz run --sanitizer none "$target" "$scratch/$target" "${seeds[@]}" -- \
    -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: $target failed; the input is in fuzz/artifacts/$target/" >&2
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|new_units_added)' "$log" >&2
done
