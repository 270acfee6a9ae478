#!/usr/bin/env python3
"""Per-call timing of the driver's own work in one lock-step tick (no DDS peer needed):
plant step (MuJoCo RK4 with the friction hook), sensor measurement, JointState build and
CDR serialisation. Prints p50/p99/max in µs per part for the default scenario.

    .venv/bin/python mujoco_driver/bench_step.py [--params config/sim_default.yaml] [--steps 5000]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpn_mujoco import scenario, urdf  # noqa: E402
from gpn_mujoco.driver import T0_NANOS, stamp_nanos  # noqa: E402
from gpn_mujoco.messages import Header_, JointState_, time_from_nanos  # noqa: E402
from gpn_mujoco.plant import Plant  # noqa: E402
from gpn_mujoco.reference import SineReference  # noqa: E402
from gpn_mujoco.sensors import Sensors  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    repo = Path(__file__).resolve().parents[1]
    p.add_argument("--params", default=str(repo / "config" / "sim_default.yaml"))
    p.add_argument("--steps", type=int, default=5000)
    args = p.parse_args()
    sc = scenario.from_file(args.params)
    robot = urdf.load(sc.urdf)
    plant = Plant(robot, sc, T0_NANOS / 1e9)
    sensors = Sensors(sc.sim)
    ref = SineReference(sc.run.reference)
    q0, v0, _ = ref.sample(0.0)
    plant.reset(q0, v0)
    tau = np.zeros(len(robot.joints))
    times = {"plant.step": [], "sensors.measure": [], "JointState build+serialize": [], "total": []}
    for k in range(args.steps):
        t0 = time.perf_counter_ns()
        m = sensors.measure(plant.q(), plant.v(), tau)
        t1 = time.perf_counter_ns()
        msg = JointState_(
            header=Header_(stamp=time_from_nanos(stamp_nanos(k, sc.sim.rate_hz)), frame_id=""),
            name=robot.joint_names,
            position=m.q.tolist(),
            velocity=m.v.tolist(),
            effort=m.tau.tolist(),
        )
        msg.serialize()
        t2 = time.perf_counter_ns()
        q_d, _, _ = ref.sample(k / sc.sim.rate_hz)
        tau = np.clip(20.0 * (q_d - plant.q()), -robot.effort_limits, robot.effort_limits)
        t3 = time.perf_counter_ns()
        plant.step(tau)
        t4 = time.perf_counter_ns()
        times["sensors.measure"].append(t1 - t0)
        times["JointState build+serialize"].append(t2 - t1)
        times["plant.step"].append(t4 - t3)
        times["total"].append(t4 - t0)
    print(f"{args.steps} steps, {len(robot.joints)} joints, {sc.sim.integrator}, {sc.sim.substeps} substep(s)")
    for name, ns in times.items():
        us = np.asarray(ns[100:], dtype=float) / 1e3
        print(f"{name:28s} p50 {np.percentile(us, 50):7.1f} µs  p99 {np.percentile(us, 99):7.1f} µs  max {us.max():8.1f} µs")


if __name__ == "__main__":
    main()
