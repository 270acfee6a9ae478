#!/usr/bin/env bash
# Long-run soak of the control loop (issue 29; not in CI): `gp-node sim --realtime
# --learned-only` paced at the tick rate for DURATION seconds, with a hot swap every
# SWAP_EVERY seconds (the configured model and SWAP_TO in turn), the resident memory
# (VmRSS) sampled every second.
#
#   testing/measure/soak.sh [GP_NODE]
#
# GP_NODE is a release build of gp-node (default: this checkout's target/release/gp-node,
# `cargo build --release -p gp_node --bin gp-node -p gpn_skygp`); plugins are found where
# gp-node looks for them (next to it in deps/, or $GPN_PLUGIN_PATH).
#
# Prints ticks, late ticks (per 100 000, and each kept one with its cause), tick latency,
# swaps adopted, and RSS at minute 1 and at the end with their ratio — the issue's lines:
# ≤ 1 late tick per 100 000, RSS from minute 1 to the end within 10 %. Exits 1 when either
# is missed.
#
# Environment (all optional):
#   DURATION=600        seconds of the run          SWAP_EVERY=5   seconds between swaps
#   SWAP_TO='skygp:{"variant":"fast"}'               the other model of the swap cycle
#   OUT                 where report.json, rss.csv and the log go (default: a new temporary
#                       directory; kept)
#   LOCK_MEMORY=true    realtime.lock_memory of the run (the robot setting; false to compare);
#   HEAP_RESERVE_MB     realtime.heap_reserve_mb of the run (default: the parameter's, 128)
#                       the control thread's priority is realtime.thread_priority (default
#                       50: SCHED_FIFO when the user may, else a warning in sim.log)
#   EXTRA_ARGS          further `gp-node sim` arguments, split on spaces
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
gp_node="${1:-$repo/target/release/gp-node}"
duration="${DURATION:-600}"
swap_every="${SWAP_EVERY:-5}"
swap_to="${SWAP_TO:-skygp:{\"variant\":\"fast\"}}"
out="${OUT:-$(mktemp -d -t gpn-soak.XXXXXX)}"
mkdir -p "$out"

if [[ ! -x "$gp_node" ]]; then
  echo "soak: no gp-node at $gp_node (build it: cargo build --release -p gp_node --bin gp-node -p gpn_skygp)" >&2
  exit 2
fi

cat >"$out/params.yaml" <<PARAMS
gp_learning_node:
  ros__parameters:
    realtime:
      lock_memory: ${LOCK_MEMORY:-true}
      heap_reserve_mb: ${HEAP_RESERVE_MB:-128}
PARAMS
# shellcheck disable=SC2206
extra=(${EXTRA_ARGS:-})
echo "soak: $duration s real time, a swap every $swap_every s ($swap_to); output in $out" >&2
"$gp_node" sim --params "$out/params.yaml" --realtime --learned-only --no-viz --duration "$duration" \
  --swap-every "$swap_every" --swap-to "$swap_to" --json "${extra[@]}" \
  >"$out/report.json" 2>"$out/sim.log" &
pid=$!

echo "t_s,rss_kb" >"$out/rss.csv"
start=$(date +%s.%N)
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  if [[ -n "$rss" ]]; then
    now=$(date +%s.%N)
    echo "$(awk -v a="$start" -v b="$now" 'BEGIN {printf "%.1f", b - a}'),$rss" >>"$out/rss.csv"
  fi
  sleep 1
done
status=0
wait "$pid" || status=$?
if [[ $status -ne 0 && $status -ne 3 ]]; then
  echo "soak: gp-node sim exited with $status; its log:" >&2
  cat "$out/sim.log" >&2
  exit "$status"
fi

python3 - "$out" <<'EOF'
import csv, json, sys
out = sys.argv[1]
report = json.load(open(f"{out}/report.json"))
rows = [(float(r["t_s"]), int(r["rss_kb"])) for r in csv.DictReader(open(f"{out}/rss.csv"))]
ticks = report["ticks"]
late = report["late_ticks"]
tick = report["tick_us"]
at_minute = min(rows, key=lambda r: abs(r[0] - 60.0))
end = rows[-1]
ratio = end[1] / at_minute[1]
swaps = report.get("swaps", {}).get("records", [])
adopted = sum(1 for s in swaps if s.get("adopted_at_s") is not None)
per_100k = late / max(ticks, 1) * 1e5
print(f"ticks             {ticks}")
print(f"late ticks        {late} ({per_100k:.2f} per 100 000)")
for t in report.get("late", []):
    # CPU well below the execution time: the thread did not run for the rest of the tick.
    cpu = t.get("cpu_us")
    ran = (f", on the CPU {cpu:.0f} µs, blocked {t.get('blocked')}, preempted {t.get('preempted')}"
           if isinstance(cpu, (int, float)) else "")
    print(f"  at {t['t_s']:.3f} s: {t['exec_us']:.0f} µs (model {t['model_us']:.0f} µs{ran}): {t['cause']}")
print(f"tick µs           p50 {tick['p50']:.0f}, p99 {tick['p99']:.0f}, max {tick['max']:.0f}")
print(f"swaps             {adopted} adopted of {len(swaps)} planned")
print(f"RSS               {at_minute[1] / 1024:.1f} MiB at {at_minute[0]:.0f} s, "
      f"{end[1] / 1024:.1f} MiB at {end[0]:.0f} s: × {ratio:.3f}")
print(f"RSS max           {max(r[1] for r in rows) / 1024:.1f} MiB")
rt = report.get("realtime") or {}
priority = rt.get("thread_priority")
print(f"real time         control thread {f'SCHED_FIFO {priority}' if priority else 'at normal priority'}, "
      f"memory {'locked' if rt.get('memory_locked') else 'not locked'}"
      + (f", {rt['heap_reserved_mb']} MiB of heap reserved" if rt.get("heap_reserved_mb") else ""))
heap = rt.get("heap")
if heap:
    # Held above the reserve: the run asked the kernel for heap after its start.
    print(f"heap at the end   {heap['system_mb']:.1f} MiB held, {heap['in_use_mb']:.1f} MiB in use")
for w in rt.get("warnings", []):
    print(f"  warning: {w}")
ok = per_100k <= 1.0 and abs(ratio - 1.0) <= 0.10
print("soak: " + ("within" if ok else "outside") + " the lines (≤ 1 late per 100 000; RSS within 10 %)")
sys.exit(0 if ok else 1)
EOF
