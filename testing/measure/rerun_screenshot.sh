#!/bin/bash
# The README's screenshot of the rerun layout (docs/images/rerun-layout.png): a default
# `gp-node sim` recording opened in the rerun viewer on a virtual display. Not in CI.
# Needs the Debian packages xvfb, mesa-vulkan-drivers (software Vulkan) and x11-apps (xwd),
# and the CI venv (`bash .ci/run` makes .venv: rerun-sdk with its viewer, Pillow, NumPy).
# Usage: bash testing/measure/rerun_screenshot.sh [OUT.png]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/docs/images/rerun-layout.png}
py=$root/.venv/bin/python
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$root/target/release/gp-node" sim --rrd "$tmp/run.rrd" > "$tmp/sim.out"
# -extension Composite: without it the viewer's window stays black.
Xvfb :97 -screen 0 1600x1000x24 -extension Composite &
sleep 2
DISPLAY=:97 "$root/.venv/bin/rerun" --port 9877 "$tmp/run.rrd" > "$tmp/rerun.log" 2>&1 &
sleep 30  # software rendering: loading 60 MB and drawing the first frames takes a while
DISPLAY=:97 xwd -root -silent > "$tmp/shot.xwd"
"$py" - "$tmp/shot.xwd" "$out" <<'PY'
import struct, sys
from PIL import Image
data = open(sys.argv[1], "rb").read()
h = struct.unpack(">25I", data[:100])  # the XWD header, big-endian 32-bit fields
header_size, width, height, bytes_per_line, byte_order, ncolors = h[0], h[4], h[5], h[12], h[7], h[19]
pixels = data[header_size + 12 * ncolors:][: bytes_per_line * height]
mode = "BGRX" if byte_order == 0 else "XRGB"
img = Image.frombuffer("RGBX", (width, height), pixels, "raw", mode, bytes_per_line, 1)
img.convert("RGB").quantize(colors=128).save(sys.argv[2], optimize=True)
print("wrote", sys.argv[2])
PY
