#!/usr/bin/env python3
"""Reference values of a *reduced* model: Baxter's left arm alone, every other movable joint
locked at 0 clamped to its limits and merged (Pinocchio 4.1.0's `buildReducedModel`).
Writes testing/robots/reduced/baxter_left_arm.json, in the format of the other fixtures plus
`"locked"`: {joint: position}. Run as generate.py is run (same venv and versions):

    /tmp/pinvenv/bin/python testing/robots/generate_reduced.py
"""

import json
import zlib

import numpy as np
import pinocchio as pin

import generate as g

KEPT = ["left_s0", "left_s1", "left_e0", "left_e1", "left_w0", "left_w1", "left_w2"]


def main():
    g.check_versions()
    urdf = g.HERE / "baxter.urdf"
    full = pin.buildModelFromUrdf(str(urdf))
    facts = g.urdf_facts(urdf)
    names = list(full.names)[1:]
    kinds_full = [g.joint_kind(full.joints[i]) for i in range(1, full.njoints)]
    locked = {}
    for n, k in zip(names, kinds_full):
        if n in KEPT:
            continue
        lim = facts["limits"][n]
        locked[n] = 0.0 if k == "C" else float(np.clip(0.0, lim["lower"], lim["upper"]))
    q_ref = g.to_config(full, kinds_full, np.array([locked.get(n, 0.0) for n in names]))
    lock_ids = [full.getJointId(n) for n in locked]
    model = pin.buildReducedModel(full, lock_ids, q_ref)
    model.gravity.linear = np.array(g.GRAVITY, dtype=float)
    data = model.createData()
    kinds = [g.joint_kind(model.joints[i]) for i in range(1, model.njoints)]
    kept = list(model.names)[1:]
    assert sorted(kept) == sorted(KEPT), kept
    lo, hi, vmax, tmax = g.sample_bounds(model, kinds, facts["limits"])
    rng = np.random.default_rng([g.SEED, zlib.crc32(b"baxter_left_arm")])
    samples, conds = [], []
    for k in range(g.N_SAMPLES):
        q = rng.uniform(lo, hi)
        v = rng.uniform(-vmax, vmax)
        a = rng.uniform(-g.A_BOUND, g.A_BOUND, model.nv)
        tau = rng.uniform(-tmax, tmax)
        if k == 0:
            q, v, a = np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv)
        out, c = g.dynamics(model, data, kinds, q, v, a, tau)
        conds.append(c)
        s = dict(q=q, v=v, a=a, **out)
        samples.append({key: np.asarray(val).tolist() for key, val in s.items()})
    doc = dict(
        robot="baxter_left_arm",
        urdf="../baxter.urdf",
        generator=f"pinocchio {g.PIN_VERSION} buildReducedModel",
        gravity=g.GRAVITY,
        nv=model.nv,
        joints=kept,
        note=g.NOTE,
        locked=locked,
        cond_M=dict(max=float(np.max(conds)), median=float(np.median(conds))),
        samples=samples,
    )
    out = g.HERE / "reduced" / "baxter_left_arm.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc, indent=1))
    print(f"{out}: {model.nv} joints kept, {len(locked)} locked, cond(M) max {np.max(conds):.3g}")


if __name__ == "__main__":
    main()
