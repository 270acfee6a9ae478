#!/usr/bin/env python3
"""Runs `gp-node sim --urdf R --seed S` on every robot of testing/robots and judges each run
by the any-robot acceptance line (issue 22):

* every joint whose nominal RMS tracking error exceeds 1e-3 rad is tracked ≥ 10× better by
  the learned law, and its learned RMS is ≤ 2 % of its reference amplitude;
* η_cal coverage ≥ 0.95;
* no tick of the learned run at a position or velocity limit.

Usage: any_robot_set.py [--bin PATH] [--seeds 1,2,3] [--jobs 2] [--out DIR]
                        [--robots a,b] [-- extra gp-node sim arguments]

Prints one line per run and the passing count per seed; keeps each run's JSON in --out.
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def verdict(report):
    nominal = report["nominal"]["rms_tracking_error_rad"]
    learned = report["learned"]["rms_tracking_error_rad"]
    amplitude = report["robot"]["amplitude_rad"]
    joints = report["joints"]
    worst = (float("inf"), None)
    reasons = []
    for j, name in enumerate(joints):
        if nominal[j] <= 1e-3:
            continue
        ratio = nominal[j] / learned[j] if learned[j] > 0 else float("inf")
        if ratio < worst[0]:
            worst = (ratio, name)
        if ratio < 10:
            reasons.append(f"{name} {ratio:.1f}x")
        if learned[j] > 0.02 * amplitude[j]:
            reasons.append(f"{name} {100 * learned[j] / amplitude[j]:.2f}% of amp")
    cov = report["bound_coverage"]
    if cov < 0.95:
        reasons.append(f"coverage {cov:.3f}")
    for j, ticks in enumerate(report["limit_ticks"]["learned"]):
        if ticks["position"] or ticks["velocity"]:
            reasons.append(f"{joints[j]} limit {ticks}")
    return (not reasons), worst, cov, reasons


def run(binary, urdf, seed, extra, out):
    path = out / f"{urdf.stem}_{seed}.json"
    cmd = [binary, "sim", "--urdf", str(urdf), "--seed", str(seed), "--json", "--no-viz"]
    cmd += extra
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return urdf.stem, seed, None, proc.stderr.strip().splitlines()[-1:]
    path.write_text(proc.stdout)
    return urdf.stem, seed, json.loads(proc.stdout), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "target/release/gp-node"))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="any-robot-runs")
    ap.add_argument("--robots", default="")
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    urdfs = sorted((ROOT / "testing/robots").glob("*.urdf"))
    if a.robots:
        wanted = set(a.robots.split(","))
        urdfs = [u for u in urdfs if u.stem in wanted]
    seeds = [int(s) for s in a.seeds.split(",")]
    passed = {s: 0 for s in seeds}
    jobs = [(u, s) for s in seeds for u in urdfs]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = [pool.submit(run, a.bin, u, s, a.extra, out) for u, s in jobs]
        for f in futures:
            robot, seed, report, err = f.result()
            if report is None:
                print(f"{robot:20s} seed {seed}: ERROR {err}", flush=True)
                continue
            ok, worst, cov, reasons = verdict(report)
            passed[seed] += ok
            print(
                f"{robot:20s} seed {seed}: {'PASS' if ok else 'fail'} worst {worst[0]:6.1f}x "
                f"({worst[1]}) cov {cov:.3f} fit {report['fit_s']:.1f}s "
                f"experts {report['experts']} {'; '.join(reasons)}",
                flush=True,
            )
    print("passing per seed:", ", ".join(f"{s}: {passed[s]}/{len(urdfs)}" for s in seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
