#!/usr/bin/env python3
"""Regenerates docs/results/models.md: every model plugin we ship, with its own defaults,
on the benchmark streams and in the control loop (issue 25 item 6).

* `gp-node eval` on KIN40K, PUMADYN32NM and ELECTRIC (../shared/data, hyperparameters from
  its hyperparams.json) and on a robot stream recorded by `gp-node sim --record` (the
  built-in Panda, default scenario, seed 1; hyperparameters fitted once by `gp-node eval`,
  kept in testing/measure/robot_stream_hyper.json and shared by every plugin), each clean and with `--contaminate asymmetric:0.1`:
  SMSE and MSLL (final), η_cal coverage (second half; against the noisy target on the
  benchmarks, the noise-free residual on the robot stream), predict and update µs (mean, p99).
* the robot stream again with a robot's faults in what the model learns from
  (`--contaminate torque-spike|encoder-spike|drop|duplicate:0.1`): residual RMSE against
  the noise-free residual, and each plugin's ratio to SkyGP's.
* with `--bag PATH` (repeatable), each rosbag2 recording as one more stream (`gp-node eval
  --bag`: the learning samples the node forms from it, the robot stream's hyperparameters;
  a recording has no noise-free truth, so its coverage cell is empty).
* `gp-node sim --plugin P --scenario S --seed K` for the default, payload-step and glitches
  scenarios: pooled RMS tracking error of the learned run, η_cal coverage, control tick p99.

Usage: models_table.py [--bin PATH] [--data DIR] [--seeds 1,2,3] [--jobs 2] [--work DIR]
                       [--out FILE] [--quick] [--plugins a,b] [--realtime] [--refit-robot-hyper]
                       [--bag PATH]...

Every run's JSON is kept in --work (default target/models-table), and a run whose JSON is
there is not run again: delete the folder to start over. --quick (what CI runs): the first
300 rows of each stream, 4 s simulations (and recording), seed 1. Either way the script
exits 1 unless every cell is a finite number. The full table took 14 minutes on two cores
before the robot-fault section, which adds about 10 (VBKS is most of both); the quick one
about 40 s (release build).
"""

import argparse
import concurrent.futures
import csv
import datetime
import json
import math
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BENCHMARKS = [
    # (name in the table, file, inputs, target, hyperparams.json key)
    ("KIN40K", "kin40k.csv", "x1..x8", "y", "kin40k"),
    ("PUMADYN32NM", "pumadyn32nm.csv", "x1..x32", "y", "pumadyn32nm"),
    ("ELECTRIC", "electric.csv", "0..7", "global_active_power", "electric"),
]
ROBOT = ("robot stream", "x_0..x_20", "y_0..y_6", "y_true_0..y_true_6")
ROBOT_ROWS = 10_000
SCENARIOS = ["default", "payload-step", "glitches"]
CONTAMINATION = "asymmetric:0.1"
# What reaches only the learner's copy of the robot stream (issue 25 item 3): the paper's
# asymmetric protocol, then a robot's own sensor and transport faults at the same rate.
ROBOT_FAULTS = ["torque-spike:0.1", "encoder-spike:0.1", "drop:0.1", "duplicate:0.1"]


def run_json(cmd, path):
    """Runs cmd (a gp-node command printing one JSON object) unless path holds its output."""
    if path.exists():
        return json.loads(path.read_text())
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    # `gp-node sim` exits 3 when the learned run tracked worse than the nominal one: a
    # result for this table (its report is printed all the same).
    if proc.returncode not in (0, 3) or not proc.stdout.strip():
        tail = "\n".join(proc.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{tail}")
    path.write_text(proc.stdout)
    return json.loads(proc.stdout)


def run_all(jobs, parallel):
    """Runs every (key, cmd, json path) of `jobs`, `parallel` at a time, printing progress;
    returns ({key: report}, [failure messages])."""
    results, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        futures = {pool.submit(run_json, cmd, path): key for key, cmd, path in jobs}
        for done, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            key = futures[fut]
            try:
                results[key] = fut.result()
                print(f"[{done}/{len(jobs)}] {key}", file=sys.stderr)
            except RuntimeError as e:
                failures.append(str(e))
                print(f"[{done}/{len(jobs)}] {key} FAILED", file=sys.stderr)
    return results, failures


def write_page(path, lines, failures, ok):
    """Writes the Markdown page (with the failed runs listed at its end); returns the exit
    code: 1 if a run failed or a cell is missing or not finite."""
    if failures:
        lines = lines + ["", "## Runs that failed", ""] + [f"- `{f}`" for f in failures]
    out = pathlib.Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    if not ok or failures:
        print("some cells are missing or not finite", file=sys.stderr)
        return 1
    return 0


def prepare_benchmark(src, dst, target, rows):
    """A copy of src with the target duplicated as `truth` (eval's coverage needs a truth
    column), cut to `rows` data rows if given."""
    if dst.exists():
        return
    with open(src, newline="") as f, open(dst, "w", newline="") as g:
        reader, writer = csv.reader(f), csv.writer(g)
        header = next(reader)
        at = header.index(target)
        writer.writerow(header + ["truth"])
        for i, row in enumerate(reader):
            if rows is not None and i >= rows:
                break
            writer.writerow(row + [row[at]])


def cut_rows(src, dst, rows):
    """src's header and first `rows` data rows (all if None) in dst."""
    if dst.exists():
        return
    with open(src) as f, open(dst, "w") as g:
        for i, line in enumerate(f):
            if rows is not None and i > rows:
                break
            g.write(line)


def plugins_shipped():
    """The plugins the ROS 2 package ships: `set(PLUGINS …)` of its CMakeLists.txt (the test
    doubles beside a test build's gp-node are plugins too, but not models to compare)."""
    text = (ROOT / "gp_learning_node_plugins/CMakeLists.txt").read_text()
    match = re.search(r"set\(PLUGINS ([^)]*)\)", text)
    if not match:
        raise SystemExit("no set(PLUGINS …) in gp_learning_node_plugins/CMakeLists.txt")
    return match.group(1).split()


def mean(xs):
    return sum(xs) / len(xs)


def pooled_rms_mrad(report, run="learned"):
    rms = report[run]["rms_tracking_error_rad"]
    return 1e3 * math.sqrt(sum(r * r for r in rms) / len(rms))


def eval_cells(r):
    return {
        "smse": mean(r["smse_final"]),
        "msll": mean(r["msll_final"]),
        # A recording (--bag) has no noise-free truth to cover.
        "coverage": min(r["bound_coverage"]) if "bound_coverage" in r else None,
        "predict": (r["predict_us_mean"], r["predict_us_p99"]),
        "update": (r["update_us_mean"], r["update_us_p99"]),
    }


def pooled_truth_rmse(r):
    """RMS over the joints of each joint's RMSE against the noise-free residual, N·m."""
    return math.sqrt(mean([v * v for v in r["truth_rmse"]]))


def robot_fault_lines(results, plugins):
    """The robot stream with each fault in what update receives: residual RMSE per plugin."""
    name = ROBOT[0]
    faults = [("clean", False), (CONTAMINATION, True)] + [(f, f) for f in ROBOT_FAULTS]
    lines = [
        "",
        "## Robot stream with faults in what the model learns from",
        "",
        "The robot stream above; each fault changes only the copy `update` receives (`gp-node eval",
        "--contaminate`, seed 0): `asymmetric` the RCaGP paper's protocol; `torque-spike` each",
        "joint's torque sensor on its own 10 % of the samples, +3–9 σ̄ (one sign); `encoder-spike` one",
        "joint's position off by ±0.05 rad in 10 % of the samples, input and every target recomputed",
        "from the robot (`--urdf urdf/panda.urdf`); `drop` 10 % of the samples never reach `update`;",
        "`duplicate` 10 % reach it twice. Cells: RMSE of μ against the noise-free residual, RMS over",
        "the 7 joints (N·m), then the plugin's RMSE over SkyGP's on the same stream (below 1: better).",
        "",
        "| what update receives | " + " | ".join(plugins) + " |",
        "|---|" + "---|" * len(plugins),
    ]
    for label, key in faults:
        runs = {p: results.get((p, name, key)) for p in plugins}
        base = runs.get("skygp")
        cells = []
        for p in plugins:
            r = runs[p]
            if r is None:
                cells.append("failed")
                continue
            v = pooled_truth_rmse(r)
            ratio = f" (×{v / pooled_truth_rmse(base):.2f})" if base is not None and p != "skygp" else ""
            cells.append(f"{v:.4f}{ratio}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def fmt(v, digits=3):
    return "—" if v is None else f"{v:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target/release/gp-node"))
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data"))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default=str(ROOT / "target/models-table"))
    ap.add_argument("--out", default=str(ROOT / "docs/results/models.md"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--plugins", default="", help="comma-separated; default: every shipped plugin")
    ap.add_argument("--realtime", action="store_true",
                    help="pace the simulations to the wall clock (gp-node sim --realtime): what a robot gives a "
                         "plugin's background threads; about 1 minute per run, best with --jobs 1")
    ap.add_argument("--bag", action="append", default=[], metavar="PATH",
                    help="also score every plugin on this rosbag2 recording (gp-node eval --bag: the node's "
                         "learning samples of it, the robot stream's hyperparameters); repeatable")
    ap.add_argument("--refit-robot-hyper", action="store_true",
                    help="fit the robot stream's hyperparameters again (testing/measure/robot_stream_hyper.json)")
    a = ap.parse_args()

    binary = pathlib.Path(a.bin).resolve()
    data = pathlib.Path(a.data)
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    plugins = a.plugins.split(",") if a.plugins else plugins_shipped()
    seeds = [1] if a.quick else [int(s) for s in a.seeds.split(",")]
    rows = 300 if a.quick else None
    duration = ["--duration", "4"] if a.quick else []
    print(f"plugins: {', '.join(plugins)}; work folder {work}", file=sys.stderr)

    # The robot stream: SkyGP-driven, default scenario, seed 1; hyperparameters fitted once.
    recorded = work / "robot_recorded.csv"
    if not recorded.exists():
        print("recording the robot stream (gp-node sim --record)", file=sys.stderr)
        subprocess.run([binary, "sim", "--seed", "1", "--no-viz", "--record", recorded, *duration],
                       check=True, capture_output=True)
    robot_csv = work / f"robot{'_quick' if a.quick else ''}.csv"
    # 10 s of the 30 s recording: VBKS takes about a minute per 1000 rows of it.
    cut_rows(recorded, robot_csv, rows or ROBOT_ROWS)
    _, inputs, targets, truth = ROBOT
    robot_hyper = ROOT / "testing/measure/robot_stream_hyper.json"
    if a.refit_robot_hyper:
        # Minutes on two cores: the marginal-likelihood fit of 21 lengthscales on 7 joints.
        print("fitting the robot stream's hyperparameters (gp-node eval)", file=sys.stderr)
        fit = run_json([binary, "eval", "--plugin", "skygp", "--data", robot_csv, "--inputs", inputs,
                        "--targets", targets, "--truth", truth, "--max-refits", "0", "--json"],
                       work / "robot_fit.json")
        note = json.loads(robot_hyper.read_text())["_note"]
        robot_hyper.write_text(json.dumps({"_note": note, "fit": fit["fit"], "hyper": fit["hyper"]}, indent=1) + "\n")

    jobs = []  # (key, cmd, json path)
    streams = []
    for name, file, cols, target, key in BENCHMARKS:
        prepared = work / f"{key}{'_quick' if a.quick else ''}.csv"
        prepare_benchmark(data / file, prepared, target, rows)
        streams.append((name, ["--data", prepared, "--inputs", cols, "--targets", target,
                               "--truth", "truth", "--hyper", data / "hyperparams.json",
                               "--hyper-key", key]))
    streams.append((ROBOT[0], ["--data", robot_csv, "--inputs", inputs, "--targets", targets,
                               "--truth", truth, "--hyper", robot_hyper, "--dt-secs", "0.001",
                               "--var-floor", "rel:1e-3"]))
    for bag in a.bag:
        streams.append((f"recording {pathlib.Path(bag).name}",
                        ["--bag", pathlib.Path(bag).resolve(), "--hyper", robot_hyper, "--var-floor", "rel:1e-3"]))
    robot_stream = next(args for name, args in streams if name == ROBOT[0])
    for plugin in plugins:
        for name, args in streams:
            for cont in ["", CONTAMINATION]:
                tag = f"eval_{plugin}_{name.replace(' ', '_')}_{'cont' if cont else 'clean'}"
                cmd = [binary, "eval", "--plugin", plugin, *args, "--json"]
                if cont:
                    cmd += ["--contaminate", cont]
                jobs.append(((plugin, name, bool(cont)), cmd, work / f"{tag}.json"))
        for fault in ROBOT_FAULTS:
            kind = fault.split(":")[0]
            cmd = [binary, "eval", "--plugin", plugin, *robot_stream, "--json", "--contaminate", fault,
                   "--urdf", ROOT / "urdf/panda.urdf"]
            jobs.append(((plugin, ROBOT[0], fault), cmd, work / f"eval_{plugin}_robot_stream_{kind}.json"))
        for scenario in SCENARIOS:
            for seed in seeds:
                cmd = [binary, "sim", "--plugin", plugin, "--scenario", scenario, "--seed", str(seed),
                       "--json", "--no-viz", *duration, *(["--realtime"] if a.realtime else [])]
                tag = f"sim_{plugin}_{scenario}_{seed}{'_realtime' if a.realtime else ''}"
                jobs.append(((plugin, scenario, seed), cmd, work / f"{tag}.json"))

    results, failures = run_all(jobs, a.jobs)

    lines = [
        "# Every model plugin, one table",
        "",
        "Generated by `python3 testing/measure/models_table.py` (this page is its output; CI runs",
        "`--quick`). Every plugin with its own defaults (so `skygp` is SkyGP-Fast in `gp-node eval`, and",
        "SkyGP-Dense in `gp-node sim`, whose built-in parameters choose it); release build, 2 cores, two",
        f"runs at a time, so times are those of a shared machine. Generated {datetime.date.today()}.",
        "",
        "## Streams (`gp-node eval`)",
        "",
        "Predict-then-update in file order. Benchmarks: hyperparameters of `shared/data/hyperparams.json`,",
        "whole-file centring, coverage against the (noisy) target. Robot stream: the first 10 s of",
        "`gp-node sim --record` (built-in Panda, default scenario, seed 1, SkyGP-driven), 1 kHz stamps (`--dt-secs 0.001`:",
        "plugins that space admissions by time admit as on the robot), hyperparameters fitted by",
        "`gp-node eval` (`testing/measure/robot_stream_hyper.json`) and shared, coverage against the noise-free residual, MSLL floor",
        "`rel:1e-3`; the 7 joints averaged (coverage: the worst joint). Contaminated:",
        f"`--contaminate {CONTAMINATION}` (10 % of the targets `update` receives pulled down by 3–9 σ̄;",
        "scored against the clean targets). SMSE and MSLL at the end of the stream; times µs, mean / p99.",
        "",
        "| stream | plugin | SMSE | MSLL | coverage | contaminated SMSE | contaminated MSLL | contaminated coverage | predict µs | update µs |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    ok = True
    for name, _ in streams:
        for plugin in plugins:
            clean, cont = results.get((plugin, name, False)), results.get((plugin, name, True))
            if clean is None or cont is None:
                ok = False
                lines.append(f"| {name} | {plugin} | failed | | | | | | | |")
                continue
            c, k = eval_cells(clean), eval_cells(cont)
            for v in [c["smse"], c["msll"], c["coverage"], k["smse"], k["msll"], k["coverage"]]:
                ok &= v is None or math.isfinite(v)
            lines.append(
                f"| {name} | {plugin} | {fmt(c['smse'], 4)} | {fmt(c['msll'])} | {fmt(c['coverage'])} | "
                f"{fmt(k['smse'], 4)} | {fmt(k['msll'])} | {fmt(k['coverage'])} | "
                f"{c['predict'][0]:.1f} / {c['predict'][1]:.1f} | {c['update'][0]:.1f} / {c['update'][1]:.1f} |")
    lines += robot_fault_lines(results, plugins)
    ok &= all(math.isfinite(results[(p, ROBOT[0], f)]["truth_rmse"][0])
              for p in plugins for f in ROBOT_FAULTS if (p, ROBOT[0], f) in results)
    ok &= all((p, ROBOT[0], f) in results for p in plugins for f in ROBOT_FAULTS)
    lines += [
        "",
        "## In the control loop (`gp-node sim`)",
        "",
        f"The built-in Panda, seeds {', '.join(map(str, seeds))}{' (4 s runs)' if a.quick else ''}, "
        + ("paced to the wall clock (`--realtime`)." if a.realtime else
           "as fast as the machine allows: a plugin's background threads (RCaGP's worker, VBKS's "
           "offline phase) get less time per simulated second than on a robot, so their rows are "
           "pessimistic (`docs/results/models-in-the-loop.md`; `--realtime` measures what a robot gives).")
        + " Per scenario and plugin:",
        "pooled RMS tracking error of the learned run over the joints (geometric mean over the seeds,",
        "range in parentheses), η_cal coverage (lowest over the seeds), control tick p99 (µs, highest),",
        "how many times better than the nominal law (nominal over learned pooled RMS, geometric",
        "mean; below 1: the learned law tracked worse), change alarms (all seeds).",
        "",
        "| scenario | plugin | tracking RMS, mrad | × better than nominal | coverage | tick p99 µs | change alarms |",
        "|---|---|---|---|---|---|---|",
    ]
    for scenario in SCENARIOS:
        for plugin in plugins:
            runs = [results.get((plugin, scenario, s)) for s in seeds]
            if any(r is None for r in runs):
                ok = False
                lines.append(f"| {scenario} | {plugin} | failed | | | | |")
                continue
            rms = [pooled_rms_mrad(r) for r in runs]
            gm = math.exp(mean([math.log(v) for v in rms]))
            gain = math.exp(mean([math.log(pooled_rms_mrad(r, "nominal") / v) for r, v in zip(runs, rms)]))
            cov = min(r["bound_coverage"] for r in runs)
            p99 = max(r["tick_us"]["p99"] for r in runs)
            alarms = sum(len(r["changes"]) for r in runs)
            ok &= all(math.isfinite(v) for v in rms + [cov, p99])
            spread = f" ({min(rms):.2f}–{max(rms):.2f})" if len(rms) > 1 else ""
            lines.append(f"| {scenario} | {plugin} | {gm:.2f}{spread} | {gain:.1f} | {cov:.3f} | {p99:.0f} | {alarms} |")
    return write_page(a.out, lines, failures, ok)


if __name__ == "__main__":
    sys.exit(main())
