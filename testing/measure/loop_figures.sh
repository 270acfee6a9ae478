#!/usr/bin/env bash
# BEFORE/AFTER figures of the control loop: two release builds, N interleaved rounds of
#  (a) ROS loopback latency: `gp-node run --nominal --json` (state received -> command
#      published, `latency_us` of its summary) against testing/measure/loopback_peer.py, a
#      Cyclone DDS robot in lock-step (STATES joint states paced at RATE Hz);
#  (b) hot swap: `gp-node sim --realtime --learned-only --no-viz --swap-every 0.25
#      --swap-to 'skygp:{"variant":"fast"}' --json` with learn.replay_capacity 3000
#      (docs/results/hot-swap.md);
# then a table: min and median per binary, and after/before of the medians.
#
#   testing/measure/loop_figures.sh BEFORE_DIR AFTER_DIR
#
# Each DIR is a checkout with a release build of gp-node (the `ros` feature is needed, e.g.
# `cargo build --release -p gp_node --no-default-features --features ros --bin gp-node`):
# the binary is $DIR/target/release/gp-node, or <target>/release/gp-node with
# BEFORE_TARGET / AFTER_TARGET set to that checkout's CARGO_TARGET_DIR. The plugins
# (libgpn_skygp.so) are found in <target>/release/deps, where building gp-node puts them.
# Parameters come from each checkout's config/sim_default.yaml; for (a) with DDS on
# loopback, the nominal law, no hyperparameter fit (learn.fit_samples 1e6) and a 1 s watchdog.
#
# Environment (all optional):
#   ROUNDS=5            rounds; each runs (a) then (b) for both binaries, the order of the
#                       two binaries alternating from round to round (before first in odd rounds)
#   STATES=2000         joint states per loopback run      RATE=1000   their rate, Hz (0: back to back)
#   SWAP_DURATION=30    seconds of the hot-swap run
#   PYTHON              a Python with cyclonedds (default: $GPN_PYTHON, else this
#                       repository's .venv/bin/python)
#   PEER=cyclone        the loopback robot: cyclone (loopback_peer.py, Cyclone DDS) or rclpy
#                       (loopback_peer_rclpy.py, ROS 2 Jazzy on Fast DDS, run by $ROS_PYTHON,
#                       default $GPN_ROS_PYTHON: source .venv-jazzy/gpn/env.sh first)
#   OUT                 where the raw JSON and logs go (default: a new temporary directory; kept)
#   DOMAIN_BASE         DDS domains are 20 + (DOMAIN_BASE + run) % 200 (default: PID % 100)
#   SKIP_LOOPBACK=1 / SKIP_SWAP=1   leave one measurement out
#   BEFORE_ARGS / AFTER_ARGS   extra `gp-node run` arguments of (a) per side, split on
#                       spaces; with the same DIR twice they compare one build with itself,
#                       e.g. AFTER_ARGS="--rerun save /tmp/run.rrd" (rerun logging on vs off)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if [ $# -ne 2 ]; then
  sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
before_dir="$(cd "$1" && pwd)"
after_dir="$(cd "$2" && pwd)"

ROUNDS="${ROUNDS:-5}"
STATES="${STATES:-2000}"
RATE="${RATE:-1000}"
SWAP_DURATION="${SWAP_DURATION:-30}"
PYTHON="${PYTHON:-${GPN_PYTHON:-$repo/.venv/bin/python}}"
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/loop_figures.XXXXXX")}"
DOMAIN_BASE="${DOMAIN_BASE:-$(( $$ % 100 ))}"
PEER="${PEER:-cyclone}"
case "$PEER" in
  cyclone) peer="$here/loopback_peer.py"; peer_python="$PYTHON" ;;
  rclpy) peer="$here/loopback_peer_rclpy.py"; peer_python="${ROS_PYTHON:-${GPN_ROS_PYTHON:-}}" ;;
  *) echo "loop_figures: PEER is cyclone or rclpy, not $PEER" >&2; exit 2 ;;
esac

die() { echo "loop_figures: $*" >&2; exit 1; }

binary_of() { # DIR TARGET_OVERRIDE
  local target="${2:-$1/target}"
  echo "$target/release/gp-node"
}
before_bin="$(binary_of "$before_dir" "${BEFORE_TARGET:-}")"
after_bin="$(binary_of "$after_dir" "${AFTER_TARGET:-}")"
for b in "$before_bin" "$after_bin"; do
  [ -x "$b" ] || die "no binary $b (build it, or set BEFORE_TARGET / AFTER_TARGET)"
done
[ -x "$PYTHON" ] || command -v "$PYTHON" >/dev/null || die "no python $PYTHON (set PYTHON or GPN_PYTHON)"
if [ "$PEER" = rclpy ]; then
  "$peer_python" -c 'import rclpy' 2>/dev/null || die "no rclpy in '$peer_python' (set ROS_PYTHON, or source .venv-jazzy/gpn/env.sh)"
else
  "$PYTHON" -c 'import cyclonedds' 2>/dev/null || die "$PYTHON has no cyclonedds"
fi
[ -f "$peer" ] || die "missing $peer"

# Every process the script starts runs in the background and is waited for (a signal then
# reaches the trap at once); whatever is still running is stopped on any exit.
node_pid=""
child_pid=""
cleanup() {
  local p
  [ -n "$child_pid" ] && kill -TERM "$child_pid" 2>/dev/null # `timeout`: passes it on
  [ -n "$node_pid" ] && kill -INT "$node_pid" 2>/dev/null     # gp-node run: as Ctrl-C
  sleep 1
  for p in $child_pid $node_pid; do
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# edit FILE FROM TO: replace the first FROM by TO; fail if FROM is absent.
edit() {
  grep -qF -- "$2" "$1" || die "$1 has no '$2' (the parameter file changed?)"
  FROM="$2" TO="$3" "$PYTHON" - "$1" <<'PY'
import os, sys
p = sys.argv[1]
t = open(p).read().replace(os.environ["FROM"], os.environ["TO"], 1)
open(p, "w").write(t)
PY
}

# Parameter files per side, from that checkout's defaults.
for side in before after; do
  dir="$before_dir"; [ "$side" = after ] && dir="$after_dir"
  mkdir -p "$OUT/$side"
  yaml="$dir/config/sim_default.yaml"
  [ -f "$yaml" ] || die "no $yaml"
  # (a): DDS on loopback, nominal law, no hyperparameter fit during the run, watchdog 1 s
  # (no safe outputs while the peer discovers the node).
  cp "$yaml" "$OUT/$side/run.yaml"
  edit "$OUT/$side/run.yaml" "localhost_only: false" "localhost_only: true"
  # The node commands only when active (`--autostart`).
  edit "$OUT/$side/run.yaml" "      active: false" "      active: true"
  # The node reads the robot description topic when robot.urdf is empty: name the file.
  edit "$OUT/$side/run.yaml" '      urdf: ""' "      urdf: \"$dir/urdf/panda.urdf\""
  edit "$OUT/$side/run.yaml" "use_model: true" "use_model: false"
  edit "$OUT/$side/run.yaml" "fit_samples: 1000 " "fit_samples: 1000000 "
  edit "$OUT/$side/run.yaml" "watchdog_timeout_s: 0.1 " "watchdog_timeout_s: 1.0 "
  # (b): the hot-swap measurement's replay buffer.
  cp "$yaml" "$OUT/$side/swap.yaml"
  edit "$OUT/$side/swap.yaml" "      replay_capacity: 10000" "      replay_capacity: 3000"
done

run_count=0
domain=0
next_domain() { run_count=$((run_count + 1)); domain=$(( 20 + (DOMAIN_BASE + run_count) % 200 )); }

# in_background CMD...: runs CMD (its output redirected by the caller) and waits for it.
in_background() {
  "$@" &
  child_pid=$!
  local rc=0
  wait "$child_pid" || rc=$?
  child_pid=""
  return "$rc"
}

loopback() { # SIDE BIN ROUND
  local side="$1" bin="$2" i="$3"
  local dir="$before_dir"
  [ "$side" = after ] && dir="$after_dir"
  local extra="${BEFORE_ARGS:-}"
  [ "$side" = after ] && extra="${AFTER_ARGS:-}"
  local -a extra_args=()
  read -r -a extra_args <<<"$extra"
  next_domain
  "$bin" run --params "$OUT/$side/run.yaml" --domain-id "$domain" --nominal --json "${extra_args[@]}" \
    >"$OUT/$side/loop_$i.json" 2>"$OUT/$side/loop_$i.log" &
  node_pid=$!
  if ! in_background timeout 300 "$peer_python" "$peer" "$dir/config/sim_default.yaml" "$domain" "$STATES" "$RATE" >"$OUT/$side/peer_$i.json" 2>"$OUT/$side/peer_$i.log"; then
    echo "loop_figures: peer failed ($side round $i, domain $domain): $(tail -c 400 "$OUT/$side/peer_$i.json" "$OUT/$side/peer_$i.log")" >&2
  fi
  kill -INT "$node_pid" 2>/dev/null || true
  local waited=0
  while kill -0 "$node_pid" 2>/dev/null && [ $waited -lt 200 ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$node_pid" 2>/dev/null; then
    kill -KILL "$node_pid" 2>/dev/null || true
    echo "loop_figures: gp-node run ($side round $i) did not stop within 20 s of SIGINT" >&2
  fi
  local rc=0
  wait "$node_pid" 2>/dev/null || rc=$?
  [ $rc -eq 0 ] || echo "loop_figures: gp-node run ($side round $i) exited with $rc; see $OUT/$side/loop_$i.log" >&2
  node_pid=""
}

swap() { # SIDE BIN ROUND
  local side="$1" bin="$2" i="$3"
  in_background timeout $(( SWAP_DURATION * 4 + 300 )) "$bin" sim --params "$OUT/$side/swap.yaml" --duration "$SWAP_DURATION" \
    --realtime --learned-only --no-viz --swap-every 0.25 --swap-to 'skygp:{"variant":"fast"}' --json \
    >"$OUT/$side/swap_$i.json" 2>"$OUT/$side/swap_$i.log" \
    || echo "loop_figures: gp-node sim ($side round $i) exited with $?; see $OUT/$side/swap_$i.log" >&2
}

echo "loop_figures: before $before_bin" >&2
echo "loop_figures: after  $after_bin" >&2
echo "loop_figures: $ROUNDS rounds, raw results in $OUT" >&2
for i in $(seq 1 "$ROUNDS"); do
  if [ $((i % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
  for what in loopback swap; do
    [ "$what" = loopback ] && [ "${SKIP_LOOPBACK:-0}" = 1 ] && continue
    [ "$what" = swap ] && [ "${SKIP_SWAP:-0}" = 1 ] && continue
    for side in $order; do
      bin="$before_bin"; [ "$side" = after ] && bin="$after_bin"
      echo "loop_figures: round $i/$ROUNDS $what $side ($(date +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))" >&2
      "$what" "$side" "$bin" "$i"
    done
  done
done

"$PYTHON" - "$OUT" "$ROUNDS" <<'PY'
import json, pathlib, statistics, sys

out, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])

def load(side, name, i):
    p = out / side / f"{name}_{i}.json"
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None

def delays(s):
    d = []
    for k, n in s["swaps"]["summary"]["adoption_delay_ticks"]:
        d += [k] * n
    return d

metrics = [
    # (group, label, file, extractor)
    ("loopback", "state->command p50 us (node)", "loop", lambda j: j["latency_us"]["p50"]),
    ("loopback", "state->command p99 us (node)", "loop", lambda j: j["latency_us"]["p99"]),
    ("loopback", "state->command max us (node)", "loop", lambda j: j["latency_us"]["max"]),
    ("loopback", "tick p50 us (node)", "loop", lambda j: j["tick_us"]["p50"]),
    ("loopback", "tick p99 us (node)", "loop", lambda j: j["tick_us"]["p99"]),
    ("loopback", "round trip p50 us (peer)", "peer", lambda j: j["roundtrip_us"]["p50"]),
    ("loopback", "round trip p99 us (peer)", "peer", lambda j: j["roundtrip_us"]["p99"]),
    ("loopback", "commands published", "loop", lambda j: j["commands_published"]),
    ("loopback", "states unanswered (peer)", "peer", lambda j: j["unanswered"]),
    ("loopback", "states dropped busy (node)", "loop", lambda j: j["joint_states_dropped_busy"]),
    ("hot swap", "swaps planned", "swap", lambda j: j["swaps"]["summary"]["planned"]),
    ("hot swap", "swaps adopted", "swap", lambda j: j["swaps"]["summary"]["adopted"]),
    ("hot swap", "adoption delay ticks, median", "swap", lambda j: statistics.median(delays(j))),
    ("hot swap", "adoption delay ticks, max", "swap", lambda j: max(delays(j))),
    ("hot swap", "request->ready median s", "swap", lambda j: j["swaps"]["summary"]["median_build_s"]),
    ("hot swap", "busy ticks", "swap", lambda j: j["swaps"]["summary"]["busy_ticks"]),
    ("hot swap", "tick p50 us", "swap", lambda j: j["tick_us"]["p50"]),
    ("hot swap", "tick p99 us", "swap", lambda j: j["tick_us"]["p99"]),
    ("hot swap", "tick max us", "swap", lambda j: j["tick_us"]["max"]),
    ("hot swap", "late ticks (> 1 ms)", "swap", lambda j: j["late_ticks"]),
]

def values(side, name, f):
    v = []
    for i in range(1, rounds + 1):
        j = load(side, name, i)
        if j is None:
            continue
        try:
            x = f(j)
        except (KeyError, TypeError, ValueError, IndexError):
            continue
        if x is not None:
            v.append(float(x))
    return v

def fmt(x):
    if x is None:
        return "-"
    if x == 0 or abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.1f}"
    return f"{x:.3f}"

hdr = f"| {'measurement':<40} | {'before min':>10} | {'before med':>10} | {'after min':>10} | {'after med':>10} | {'after/before':>12} | {'runs':>5} |"
print(hdr)
print("|" + "|".join("-" * (len(c)) for c in hdr.split("|")[1:-1]) + "|")
for group, label, name, f in metrics:
    b, a = values("before", name, f), values("after", name, f)
    if not b and not a:
        continue
    bmin, bmed = (min(b), statistics.median(b)) if b else (None, None)
    amin, amed = (min(a), statistics.median(a)) if a else (None, None)
    ratio = f"{amed / bmed:.3f}" if bmed and amed is not None else "-"
    print(f"| {group + ': ' + label:<40} | {fmt(bmin):>10} | {fmt(bmed):>10} | {fmt(amin):>10} | {fmt(amed):>10} | {ratio:>12} | {len(b)}+{len(a):<3} |")
print(f"\n(min / median over rounds; ratio = after median / before median; raw JSON in {out})")
PY
