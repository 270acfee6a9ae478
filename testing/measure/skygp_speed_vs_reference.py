#!/usr/bin/env python3
"""SkyGP speed against the public reference Python code, side by side (issue 26, item 3).

Runs the reference (GitHub zdf6288/SkyGP, class `SkyGP_rBCM` of `models/SkyGP_rBCM.py`,
unchanged) and `gp-node eval --set preset=reference` on the same streams, alternating
processes, and reports per-sample times (predict + update) as min and median over the runs.
The protocol is `shared/anchors/README.md` §1: file order, whole-file centring, step 0 not
predicted, `time.perf_counter()` around `predict` and `add_point`, rBCM, N̄ 50, W̄ 40,
Ncal 4, Fast = no replacement and timescale 0.04, Dense = replacement and timescale 0.03.
Both sides must reach the same final SMSE (same work), which the script checks.

Nothing here downloads. Get the reference once, e.g.
    git clone https://github.com/zdf6288/SkyGP /tmp/SkyGP
and a Python with NumPy 1.26 and SciPy (the anchors' environment):
    python3.11 -m venv /tmp/skyref && /tmp/skyref/bin/pip install numpy==1.26.4 scipy==1.13.1
then
    python3 testing/measure/skygp_speed_vs_reference.py --reference /tmp/SkyGP \
        --python /tmp/skyref/bin/python --runs 5
BLAS runs on one thread (OPENBLAS_NUM_THREADS=1 and friends are set for the reference).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
STREAMS = {"kin40k": "kin40k.csv", "pumadyn32nm": "pumadyn32nm.csv", "electric": "electric.csv"}

# The reference loop, run by the reference's Python with the reference directory on sys.path.
REFERENCE_LOOP = r"""
import json, sys, time
import numpy as np
ref_dir, csv, hyper_file, key, variant = sys.argv[1:6]
sys.path.insert(0, ref_dir)
from models.SkyGP_rBCM import SkyGP_rBCM
data = np.loadtxt(csv, delimiter=",", skiprows=1)
X = data[:, :-1] - data[:, :-1].mean(axis=0)
Y = (data[:, -1] - data[:, -1].mean()).reshape(-1, 1)
h = json.load(open(hyper_file))["datasets"][key]
params = (np.array([h["sigma_f"]]), np.array([h["sigma_n"]]), np.array(h["lengthscales"]))
dense = variant == "dense"
model = SkyGP_rBCM(x_dim=X.shape[1], y_dim=1, max_data_per_expert=50, nearest_k=4,
                   max_experts=40, replacement=dense, timescale=0.03 if dense else 0.04)
model.init_model_params(0, pretrained_params=params)
t_pred = t_up = 0.0
sq = 0.0
for i in range(X.shape[0]):
    x, y = X[i], Y[i]
    if i > 0:
        t0 = time.perf_counter()
        mu, var = model.predict(x)
        t_pred += time.perf_counter() - t0
        sq += (y.item() - np.atleast_1d(mu)[0]) ** 2
    t0 = time.perf_counter()
    model.add_point(x, y)
    t_up += time.perf_counter() - t0
n = X.shape[0]
smse = sq / ((n - 1) * np.var(Y))
print(json.dumps({"predict_us": 1e6 * t_pred / (n - 1), "update_us": 1e6 * t_up / n, "smse": smse}))
"""


def run_reference(args, key, variant):
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    out = subprocess.run(
        [args.python, "-c", REFERENCE_LOOP, str(args.reference), str(DATA / STREAMS[key]),
         str(DATA / "hyperparams.json"), key, variant],
        capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_ours(args, key, variant):
    header = (DATA / STREAMS[key]).read_text().split("\n", 1)[0].split(",")
    cmd = [str(args.gp_node), "eval", "--set", f"variant={variant}", "--set", "preset=reference",
           "--data", str(DATA / STREAMS[key]), "--inputs", ",".join(header[:-1]),
           "--targets", header[-1], "--hyper", str(DATA / "hyperparams.json"),
           "--hyper-key", key]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    times = dict(re.findall(r"(predict|update)\s+µs/sample: mean ([0-9.]+)", out))
    smse = float(re.search(rf"^{re.escape(header[-1])}\s+([0-9.]+)", out, re.M).group(1))
    return {"predict_us": float(times["predict"]), "update_us": float(times["update"]),
            "smse": smse}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, required=True,
                    help="checkout of github.com/zdf6288/SkyGP")
    ap.add_argument("--python", default=sys.executable, help="Python with NumPy 1.26 and SciPy")
    ap.add_argument("--gp-node", type=Path, default=ROOT / "target" / "release" / "gp-node")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--streams", default=",".join(STREAMS))
    ap.add_argument("--variants", default="fast,dense")
    ap.add_argument("--json", type=Path, help="write every run's numbers here")
    args = ap.parse_args()
    if not (args.reference / "models" / "SkyGP_rBCM.py").is_file():
        sys.exit(f"{args.reference}: not a checkout of zdf6288/SkyGP (models/SkyGP_rBCM.py missing)")
    if not args.gp_node.is_file():
        sys.exit(f"{args.gp_node}: build it first (cargo build --release -p gp_node)")
    cases = [(k, v) for k in args.streams.split(",") for v in args.variants.split(",")]
    runs = {c: {"reference": [], "ours": []} for c in cases}
    started = time.time()
    for r in range(args.runs):
        for key, variant in cases:
            # Alternate which side goes first, so drift of the host hits both alike.
            sides = [("reference", run_reference), ("ours", run_ours)]
            if r % 2:
                sides.reverse()
            for side, fn in sides:
                runs[(key, variant)][side].append(fn(args, key, variant))
            print(f"run {r + 1}/{args.runs} {key} {variant} done "
                  f"({time.time() - started:.0f} s)", file=sys.stderr)
    print("| stream | variant | reference µs/sample min / median | ours min / median "
          "| speed-up (min) | speed-up (median) | SMSE ref / ours |")
    print("|---|---|---|---|---|---|---|")
    for (key, variant), sides in runs.items():
        tot = {s: [m["predict_us"] + m["update_us"] for m in ms] for s, ms in sides.items()}
        ref_min, our_min = min(tot["reference"]), min(tot["ours"])
        ref_med, our_med = statistics.median(tot["reference"]), statistics.median(tot["ours"])
        s_ref, s_our = sides["reference"][0]["smse"], sides["ours"][0]["smse"]
        if abs(s_ref - s_our) > 1e-3 * max(1.0, s_ref):
            print(f"warning: {key} {variant}: final SMSE differ ({s_ref} vs {s_our}): "
                  "not the same work", file=sys.stderr)
        print(f"| {key} | {variant} | {ref_min:.1f} / {ref_med:.1f} | {our_min:.2f} / {our_med:.2f} "
              f"| {ref_min / our_min:.0f}× | {ref_med / our_med:.0f}× | {s_ref:.4f} / {s_our:.4f} |")
    if args.json:
        args.json.write_text(json.dumps({f"{k}/{v}": s for (k, v), s in runs.items()}, indent=1))


if __name__ == "__main__":
    main()
