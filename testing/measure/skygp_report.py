#!/usr/bin/env python3
"""Regenerates docs/results/skygp.md: SkyGP on the public streams against its reference.

Per stream of `shared/data` and per variant (Fast, Dense): the reference Python code, our
reference preset and our recommended preset (SMSE and MSLL, final and curve mean;
µs per sample; bytes of model state), and the speed ratio of the reference preset to the
reference measured side by side. Issue 26's acceptance table.

The reference is GitHub zdf6288/SkyGP, class `SkyGP_rBCM` of `models/SkyGP_rBCM.py`, run
unchanged. The protocol is `shared/anchors/README.md` §1: file order, whole-file centring,
step 0 not predicted, the anchors' SMSE/MSLL curves, `time.perf_counter()` around
`predict` and `add_point`, rBCM, N̄ 50, W̄ 40, Ncal 4, Fast = no replacement and timescale
0.04, Dense = replacement and timescale 0.03, the given hyperparameters. The reference and
our reference preset alternate process by process (the first alternates between rounds);
times are the minimum and the median over the rounds of (mean predict + mean update).

Nothing here downloads. Get the reference and an environment like the anchors' once:
    git clone https://github.com/zdf6288/SkyGP /tmp/SkyGP
    python3.11 -m venv /tmp/skyref && /tmp/skyref/bin/pip install numpy==1.26.4 scipy==1.13.1
build gp-node (`cargo build --release -p gp_node -p gpn_skygp`), then
    python3 testing/measure/skygp_report.py --reference /tmp/SkyGP --python /tmp/skyref/bin/python
BLAS runs on one thread (OPENBLAS_NUM_THREADS=1 and friends are set for the reference).
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "docs" / "results" / "skygp.md"
STREAMS = {"kin40k": ("KIN40K", "kin40k.csv"), "pumadyn32nm": ("PUMA", "pumadyn32nm.csv"),
           "electric": ("ELECTRIC", "electric.csv")}
VARIANTS = {"fast": "Fast", "dense": "Dense"}

# The reference loop, run by the reference's Python with the reference directory on sys.path.
# Metrics as anchors §1.4, computed after the timed loop.
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
n = X.shape[0]
mus, vs = np.zeros(n), np.ones(n)
t_pred = t_up = 0.0
for i in range(n):
    x, y = X[i], Y[i]
    if i > 0:
        t0 = time.perf_counter()
        mu, var = model.predict(x)
        t_pred += time.perf_counter() - t0
        mus[i], vs[i] = np.atleast_1d(mu)[0], np.atleast_1d(var)[0]
    t0 = time.perf_counter()
    model.add_point(x, y)
    t_up += time.perf_counter() - t0
y = Y[:, 0]
idx = np.arange(n)
sq = np.concatenate([[0.0], np.cumsum((y[1:] - mus[1:]) ** 2)])
run_var = np.array([np.var(y[: i + 1]) for i in range(n)])
smse = np.ones(n)
smse[1:] = sq[1:] / (idx[1:] * run_var[1:])
s2 = np.maximum(vs, 1e-3) + h["sigma_n"] ** 2
nll = 0.5 * np.log(2 * np.pi * s2) + (y - mus) ** 2 / (2 * s2)
nll[0] = 0.0
m, v = y.mean(), y.var()
nll0 = 0.5 * np.log(2 * np.pi * v) + (y - m) ** 2 / (2 * v)
msll = np.cumsum(nll - nll0) / (idx + 1)
arrays = 0
for value in vars(model).values():
    items = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else [value]
    arrays += sum(a.nbytes for a in items if isinstance(a, np.ndarray))
print(json.dumps({
    "predict_us": 1e6 * t_pred / (n - 1), "update_us": 1e6 * t_up / n,
    "smse_final": smse[-1], "smse_curve_mean": smse.mean(),
    "msll_final": msll[-1], "msll_curve_mean": msll.mean(),
    "experts": len(model.X_list), "bytes": arrays,
}))
"""


def run_reference(args, key, variant):
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    out = subprocess.run(
        [args.python, "-c", REFERENCE_LOOP, str(args.reference), str(DATA / STREAMS[key][1]),
         str(DATA / "hyperparams.json"), key, variant],
        capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_ours(args, key, variant, preset):
    header = (DATA / STREAMS[key][1]).read_text().split("\n", 1)[0].split(",")
    cmd = [str(args.gp_node), "eval", "--set", f"variant={variant}", "--set", f"preset={preset}",
           "--data", str(DATA / STREAMS[key][1]), "--inputs", ",".join(header[:-1]),
           "--targets", header[-1], "--hyper", str(DATA / "hyperparams.json"),
           "--hyper-key", key, "--json"]
    j = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return {"predict_us": j["predict_us_mean"], "update_us": j["update_us_mean"],
            "smse_final": j["smse_final"][0], "smse_curve_mean": j["smse_curve_mean"][0],
            "msll_final": j["msll_final"][0], "msll_curve_mean": j["msll_curve_mean"][0],
            "experts": j["experts"], "bytes": j["memory_bytes"]}


def per_sample(runs):
    t = [r["predict_us"] + r["update_us"] for r in runs]
    return min(t), statistics.median(t)


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def render(args, results, ref_env):
    lines = [
        "# SkyGP against its reference implementation, on the public streams",
        "",
        f"Generated {datetime.date.today()} by `python3 testing/measure/skygp_report.py` "
        f"({args.runs} rounds; do not edit by hand). Machine: {cpu_model()}, "
        f"{os.cpu_count()} cores, shared. Reference: GitHub zdf6288/SkyGP `SkyGP_rBCM`, "
        f"{ref_env}. Ours: `gp-node eval` (release build) with the given hyperparameters of "
        "`shared/data/hyperparams.json`.",
        "",
        "Protocol: `shared/anchors/README.md` §1 (file order, whole-file centring, step 0 not "
        "predicted; rBCM, N̄ 50, W̄ 40, Ncal 4). µs/sample is mean predict + mean update per "
        "run, min / median over the rounds; the reference and the reference preset alternate "
        "process by process. Bytes: the reference's NumPy arrays of the model at the end; ours "
        "`stats().memory_bytes` at the end (experts made, the chunk in preparation, caches). "
        "The speed-up is the reference's time over the reference preset's (min / median).",
        "",
        "| stream | variant | model | SMSE final | SMSE curve mean | MSLL final | MSLL curve mean "
        "| µs/sample min / median | experts | bytes | speed-up |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (key, variant), models in results.items():
        ref_min, ref_med = per_sample(models["reference"])
        for name, label in (("reference", "reference code (Python)"),
                            ("ours_reference", "reference preset"),
                            ("ours_recommended", "recommended preset")):
            runs = models[name]
            r = runs[0]
            t_min, t_med = per_sample(runs)
            speed = (f"{ref_min / t_min:.0f}× / {ref_med / t_med:.0f}×"
                     if name == "ours_reference" else "")
            lines.append(
                f"| {STREAMS[key][0]} | {VARIANTS[variant]} | {label} | {r['smse_final']:.4f} "
                f"| {r['smse_curve_mean']:.4f} | {r['msll_final']:.3f} | {r['msll_curve_mean']:.3f} "
                f"| {t_min:.2f} / {t_med:.2f} | {r['experts']} | {r['bytes'] / 1e6:.2f} MB | {speed} |")
    lines += [
        "",
        "Accuracy is deterministic: every round gives the same SMSE and MSLL (checked). The "
        "reference preset matches the reference code's SMSE and MSLL to the printed digits "
        "(checked by this script, which stops otherwise). Criterion benches of predict and "
        "update per variant: `cargo bench -p gpn_skygp --bench skygp`. Analysis and history: "
        "`docs/results/skygp-eval.md`.",
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, required=True,
                    help="checkout of github.com/zdf6288/SkyGP")
    ap.add_argument("--python", default=sys.executable, help="Python with NumPy 1.26 and SciPy")
    ap.add_argument("--gp-node", type=Path, default=ROOT / "target" / "release" / "gp-node")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--json", type=Path, help="also write every run's numbers here")
    args = ap.parse_args()
    if not (args.reference / "models" / "SkyGP_rBCM.py").is_file():
        sys.exit(f"{args.reference}: not a checkout of zdf6288/SkyGP (models/SkyGP_rBCM.py missing)")
    if not args.gp_node.is_file():
        sys.exit(f"{args.gp_node}: build it first (cargo build --release -p gp_node -p gpn_skygp)")
    ref_env = subprocess.run(
        [args.python, "-c", "import sys, numpy, scipy; print(f'CPython {sys.version.split()[0]}, "
         "NumPy {numpy.__version__}, SciPy {scipy.__version__}')"],
        capture_output=True, text=True, check=True).stdout.strip()
    cases = [(k, v) for k in STREAMS for v in VARIANTS]
    results = {c: {"reference": [], "ours_reference": [], "ours_recommended": []} for c in cases}
    started = time.time()
    for r in range(args.runs):
        for key, variant in cases:
            sides = [("reference", lambda: run_reference(args, key, variant)),
                     ("ours_reference", lambda: run_ours(args, key, variant, "reference"))]
            if r % 2:
                sides.reverse()
            sides.append(("ours_recommended", lambda: run_ours(args, key, variant, "recommended")))
            for name, fn in sides:
                results[(key, variant)][name].append(fn())
            print(f"round {r + 1}/{args.runs} {key} {variant} ({time.time() - started:.0f} s)",
                  file=sys.stderr)
    metrics = ("smse_final", "smse_curve_mean", "msll_final", "msll_curve_mean")
    for (key, variant), models in results.items():
        for name, runs in models.items():
            if any(run[m] != runs[0][m] for run in runs for m in metrics):
                sys.exit(f"{key} {variant} {name}: accuracy differs between rounds")
        ref, ours = models["reference"][0], models["ours_reference"][0]
        for m, digits in zip(metrics, (4, 4, 3, 3)):
            if round(ref[m], digits) != round(ours[m], digits):
                sys.exit(f"{key} {variant}: {m} {ref[m]} (reference) vs {ours[m]} (reference preset)")
    args.out.write_text(render(args, results, ref_env))
    print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({f"{k}/{v}": s for (k, v), s in results.items()}, indent=1))


if __name__ == "__main__":
    main()
