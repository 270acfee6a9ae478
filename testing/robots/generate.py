#!/usr/bin/env python3
"""Generate the pinned robot-description set in testing/robots/.

For every robot in ROBOTS this script
  * copies the URDF byte for byte from the installed example-robot-data 6.0.0 wheel
    into testing/robots/<name>.urdf (mesh files are not copied),
  * builds the FIXED-BASE Pinocchio model (`pinocchio.buildModelFromUrdf(path)`, no root
    joint, default `mimic=False`, i.e. every movable joint is an independent coordinate),
  * writes testing/robots/<name>.json in the format of shared/fixtures/dynamics/*.json
    (plus top-level "cond_M" and "source"),
and then writes testing/robots/README.md and copies the license texts to
testing/robots/LICENSES/.

Run it from a throwaway venv (it refuses any other Pinocchio / example-robot-data version):

    python3 -m venv /tmp/pinvenv
    /tmp/pinvenv/bin/pip install pin==4.1.0 example-robot-data==6.0.0 numpy
    /tmp/pinvenv/bin/python testing/robots/generate.py

(The PyPI package called `pinocchio` is unrelated; Pinocchio's wheel is `pin`.)
The output is deterministic: same versions => same bytes (numpy's default_rng is seeded).
`--facts` additionally prints the per-robot URDF/model facts as JSON on stdout.
"""

import json
import math
import shutil
import sys
import xml.etree.ElementTree as ET
import zlib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np
import pinocchio as pin

PIN_VERSION = "4.1.0"
ERD_VERSION = "6.0.0"
SEED = 20250101  # base seed; each robot uses default_rng([SEED, crc32(name)])
N_SAMPLES = 25
GRAVITY = [0, 0, -9.81]
V_DEFAULT = 2.0  # |v| bound when a joint has no (or a zero) velocity limit
V_CAP = 10.0  # |v| bound at most this (baxter head_pan says 10000, finger_edu 1000: placeholders)
A_BOUND = 5.0  # |a| bound, rad/s^2 or m/s^2
TAU_CAP = 10.0  # |tau_aba| bound: min(effort limit, TAU_CAP), N*m or N
NOTE = (
    "q given as one angle (rad) or displacement (m) per dof, in the joint order above; "
    "M is the joint-space inertia (CRBA); nonlinear = C(q,v) v + g(q); "
    "ddq_aba = forward dynamics for torque tau_aba."
)

# name: output file stem; path: inside example-robot-data's robots/ folder.
ROBOTS = [
    dict(name="ur10", maker="Universal Robots", path="ur_description/urdf/ur10_robot.urdf"),
    dict(name="panda", maker="Franka Emika", path="panda_description/urdf/panda.urdf"),
    dict(name="kinova", maker="Kinova (JACO2 j2s6s200)", path="kinova_description/robots/kinova.urdf"),
    dict(name="xarm7", maker="UFACTORY", path="xarm_description/urdf/xarm7.urdf"),
    dict(name="z1", maker="Unitree", path="z1_description/urdf/z1.urdf"),
    dict(name="so101", maker="TheRobotStudio", path="so_arm_description/urdf/so101.urdf"),
    dict(name="baxter", maker="Rethink Robotics", path="baxter_description/urdf/baxter.urdf"),
    dict(name="talos_left_arm", maker="PAL Robotics", path="talos_data/robots/talos_left_arm.urdf"),
    dict(name="allegro_right_hand", maker="Wonik Robotics", path="allegro_hand_description/urdf/allegro_right_hand.urdf"),
    dict(name="finger_edu", maker="Open Dynamic Robot Initiative", path="finger_edu_description/robots/finger_edu.urdf"),
]

HERE = Path(__file__).resolve().parent


def die(msg):
    sys.exit("generate.py: " + msg)


def check_versions():
    if pin.__version__ != PIN_VERSION:
        die(f"needs pinocchio (PyPI 'pin') {PIN_VERSION}, found {pin.__version__}")
    try:
        dist = distribution("example-robot-data")
    except PackageNotFoundError:
        die(f"needs example-robot-data {ERD_VERSION} (pip install example-robot-data=={ERD_VERSION})")
    if dist.version != ERD_VERSION:
        die(f"needs example-robot-data {ERD_VERSION}, found {dist.version}")
    share = Path(dist.locate_file("cmeel.prefix/share/example-robot-data"))
    pkg_xml = ET.parse(share / "package.xml").getroot()
    if pkg_xml.findtext("version") != ERD_VERSION:
        die(f"{share}/package.xml is not version {ERD_VERSION}")
    lic = None
    for f in dist.files or []:
        if str(f).endswith("licenses/LICENSE"):
            lic = Path(dist.locate_file(f))
    return share, lic


# ---------------------------------------------------------------- URDF facts


def fnum(el, attr, default=None):
    if el is None or el.get(attr) is None:
        return default
    return float(el.get(attr))


def urdf_facts(path):
    """Facts read straight from the URDF XML (top-level <link>/<joint> only;
    <joint> elements inside <transmission>/<gazebo> are ignored)."""
    raw = path.read_bytes()
    root = ET.fromstring(raw)
    links = root.findall("link")
    joints = root.findall("joint")
    f = dict(robot_name=root.get("name"), n_links=len(links), n_joints=len(joints))
    f["non_ascii"] = any(b > 127 for b in raw)
    types = {}
    for j in joints:
        types[j.get("type")] = types.get(j.get("type"), 0) + 1
    f["joint_types"] = types
    children = {j.find("child").get("link") for j in joints}
    f["roots"] = [l.get("name") for l in links if l.get("name") not in children]
    f["no_inertial"], f["zero_mass"], f["neg_mass"], f["zero_tensor"], f["point_mass"] = [], [], [], [], []
    f["not_pd"], f["triangle"] = [], []
    for l in links:
        name = l.get("name")
        inl = l.find("inertial")
        if inl is None:
            f["no_inertial"].append(name)
            continue
        m = fnum(inl.find("mass"), "value", 0.0)
        it = inl.find("inertia")
        c = {k: fnum(it, k, 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        I = np.array([[c["ixx"], c["ixy"], c["ixz"]], [c["ixy"], c["iyy"], c["iyz"]], [c["ixz"], c["iyz"], c["izz"]]])
        if m == 0.0:
            f["zero_mass"].append(name)
        elif m < 0.0:
            f["neg_mass"].append((name, m))
        if not I.any():
            f["zero_tensor"].append(name)
            if m != 0.0:
                f["point_mass"].append((name, m))
            continue
        ev = np.linalg.eigvalsh(I)
        if ev[0] <= 0.0:
            f["not_pd"].append((name, ev.tolist()))
        s = ev.sum()
        if any(s - 2 * e < -1e-12 * abs(s) for e in ev):  # lambda_i + lambda_j >= lambda_k
            f["triangle"].append((name, ev.tolist()))
    f["mimic"] = [
        (j.get("name"), j.get("type"), j.find("mimic").get("joint")) for j in joints if j.find("mimic") is not None
    ]
    f["floating_planar"] = [j.get("name") for j in joints if j.get("type") in ("floating", "planar")]
    lim = {}
    for j in joints:
        if j.get("type") in ("revolute", "prismatic", "continuous"):
            le = j.find("limit")
            lim[j.get("name")] = dict(
                type=j.get("type"),
                lower=fnum(le, "lower"),
                upper=fnum(le, "upper"),
                effort=fnum(le, "effort"),
                velocity=fnum(le, "velocity"),
            )
    f["limits"] = lim
    return f


# ---------------------------------------------------------------- Pinocchio


def joint_kind(jm):
    """('R'|'P'|'C', nq) for 1-dof joints; refuse the rest (nq != nv, spherical, ...)."""
    s = jm.shortname()
    if jm.nv != 1:
        die(f"unsupported joint {s} (nv={jm.nv})")
    if s.startswith("JointModelRUB"):
        return "C"
    if s.startswith("JointModelR"):  # RX/RY/RZ/RevoluteUnaligned
        return "R"
    if s.startswith("JointModelP"):  # PX/PY/PZ/PrismaticUnaligned
        return "P"
    die(f"unsupported joint {s}")


def to_config(model, kinds, q):
    """Angle/displacement per dof -> Pinocchio configuration (continuous: [cos, sin])."""
    qc = np.zeros(model.nq)
    for i in range(1, model.njoints):
        jm = model.joints[i]
        x = q[jm.idx_v]
        if kinds[i - 1] == "C":
            qc[jm.idx_q : jm.idx_q + 2] = [math.cos(x), math.sin(x)]
        else:
            qc[jm.idx_q] = x
    return qc


def sample_bounds(model, kinds, lim):
    names = list(model.names)[1:]
    lo, hi, vmax, tmax = [], [], [], []
    for n, k in zip(names, kinds):
        L = lim[n]
        if k == "C":
            lo.append(-math.pi)
            hi.append(math.pi)
        else:
            if L["lower"] is None or L["upper"] is None or L["upper"] < L["lower"]:
                die(f"joint {n}: unusable position limits {L}")
            lo.append(L["lower"])
            hi.append(L["upper"])
        vmax.append(min(L["velocity"], V_CAP) if L["velocity"] else V_DEFAULT)
        tmax.append(min(L["effort"], TAU_CAP) if L["effort"] else TAU_CAP)
    return [np.array(x) for x in (lo, hi, vmax, tmax)]


def dynamics(model, data, kinds, q, v, a, tau):
    qc = to_config(model, kinds, q)
    tau_rnea = pin.rnea(model, data, qc, v, a).copy()
    M = pin.crba(model, data, qc).copy()
    M = np.triu(M) + np.triu(M, 1).T  # pin 4.1 already returns it full; be explicit
    g = pin.computeGeneralizedGravity(model, data, qc).copy()
    nle = pin.nonLinearEffects(model, data, qc, v).copy()
    ddq = pin.aba(model, data, qc, v, tau).copy()
    # internal consistency (not the agreement test, just a guard against misuse)
    scale = max(1.0, np.abs(tau_rnea).max())
    assert np.abs(M @ a + nle - tau_rnea).max() <= 1e-9 * scale
    c = np.linalg.cond(M, 2)
    assert np.abs(M @ ddq + nle - tau).max() <= 1e-12 * c * max(1.0, np.abs(tau).max(), np.abs(M @ ddq).max())
    return dict(tau_rnea=tau_rnea, M=M, gravity=g, nonlinear=nle, tau_aba=tau, ddq_aba=ddq), c


def tree_or_chain(model):
    chain = all(model.parents[i] == i - 1 for i in range(1, model.njoints))
    if chain:
        return "chain"
    kids = [0] * model.njoints
    for i in range(1, model.njoints):
        kids[model.parents[i]] += 1
    return f"tree ({sum(1 for i in range(model.njoints) if kids[i] == 0)} leaves)"


def build_robot(robot, share):
    name = robot["name"]
    src = share / "robots" / robot["path"]
    dst = HERE / f"{name}.urdf"
    shutil.copyfile(src, dst)
    assert dst.read_bytes() == src.read_bytes()
    facts = urdf_facts(dst)
    if len(facts["roots"]) != 1:
        die(f"{name}: {len(facts['roots'])} root links {facts['roots']}")
    if facts["floating_planar"]:
        die(f"{name}: floating/planar joints {facts['floating_planar']}")

    model = pin.buildModelFromUrdf(str(dst))  # fixed base, mimic=False (default)
    model.gravity.linear = np.array(GRAVITY, dtype=float)
    data = model.createData()
    kinds = [joint_kind(model.joints[i]) for i in range(1, model.njoints)]
    names = list(model.names)[1:]
    movable = {n for n, L in facts["limits"].items()}
    if set(names) != movable or len(names) != model.nv:
        die(f"{name}: Pinocchio joints {names} != URDF movable joints {sorted(movable)}")
    lo, hi, vmax, tmax = sample_bounds(model, kinds, facts["limits"])

    rng = np.random.default_rng([SEED, zlib.crc32(name.encode())])
    samples, conds = [], []
    for k in range(N_SAMPLES):
        q = rng.uniform(lo, hi)
        v = rng.uniform(-vmax, vmax)
        a = rng.uniform(-A_BOUND, A_BOUND, model.nv)
        tau = rng.uniform(-tmax, tmax)
        if k == 0:
            q, v, a = np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv)
        out, c = dynamics(model, data, kinds, q, v, a, tau)
        conds.append(c)
        s = dict(q=q, v=v, a=a, **out)
        samples.append({key: np.asarray(val).tolist() for key, val in s.items()})

    doc = dict(
        robot=name,
        urdf=f"{name}.urdf",
        generator=f"pinocchio {PIN_VERSION}",
        gravity=GRAVITY,
        nv=model.nv,
        joints=names,
        note=NOTE,
        cond_M=dict(max=float(np.max(conds)), median=float(np.median(conds))),
        source=dict(package="example-robot-data", version=ERD_VERSION, path=robot["path"], license=robot["license"]),
        samples=samples,
    )
    (HERE / f"{name}.json").write_text(json.dumps(doc, indent=1))

    # extra facts for the README / report
    mid = np.where(np.array(kinds) == "C", 0.0, (lo + hi) / 2)
    eff = np.array([facts["limits"][n]["effort"] or 0.0 for n in names])
    gq = {}
    for label, q in (("q=0", np.zeros(model.nv)), ("mid", mid)):
        g = pin.computeGeneralizedGravity(model, data, to_config(model, kinds, q))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(eff > 0, np.abs(g) / eff, np.where(np.abs(g) > 0, np.inf, 0.0))
        i = int(np.argmax(r))
        gq[label] = (float(r[i]), names[i], float(g[i]), float(eff[i]))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.array([np.where(eff > 0, np.abs(s["gravity"]) / eff, np.inf) for s in samples])
    k, i = np.unravel_index(int(np.argmax(r)), r.shape)
    gq["samples"] = (float(r[k, i]), names[i], float(samples[k]["gravity"][i]), float(eff[i]))
    zero_outside = [n for n, kd, l, h in zip(names, kinds, lo, hi) if kd != "C" and not l <= 0.0 <= h]
    zero_bodies = [
        model.names[i] for i in range(1, model.njoints) if model.inertias[i].mass == 0.0
    ]
    facts.update(
        nv=model.nv,
        nq=model.nq,
        kinds="".join(kinds),
        pin_joint_types=sorted({model.joints[i].shortname() for i in range(1, model.njoints)}),
        structure=tree_or_chain(model),
        cond_max=float(np.max(conds)),
        cond_median=float(np.median(conds)),
        min_eig=float(min(np.linalg.eigvalsh(np.array(s["M"]))[0] for s in samples)),
        gravity_vs_effort=gq,
        zero_mass_bodies_pin=zero_bodies,
        json_bytes=(HERE / f"{name}.json").stat().st_size,
        urdf_bytes=dst.stat().st_size,
        q0_outside_limits=zero_outside,
        vel_capped=[n for n in names if (facts["limits"][n]["velocity"] or 0) > V_CAP],
        missing_or_zero_effort=[n for n in names if not facts["limits"][n]["effort"]],
        missing_or_zero_velocity=[n for n in names if not facts["limits"][n]["velocity"]],
    )
    return facts


# ---------------------------------------------------------------- licenses / README


def folder_license(share, folder):
    """The 'license:' line of robots/<folder>/README.md."""
    for line in (share / "robots" / folder / "README.md").read_text().splitlines():
        if line.lower().startswith("license:"):
            return line.split(":", 1)[1].strip()
    die(f"no license line in robots/{folder}/README.md")


def copy_licenses(share, pkg_license, folders):
    d = HERE / "LICENSES"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir()
    names = []
    shutil.copyfile(pkg_license, d / "example-robot-data.LICENSE")
    shutil.copyfile(share / "package.xml", d / "example-robot-data.package.xml")
    names += ["example-robot-data.LICENSE", "example-robot-data.package.xml"]
    per_folder = {}
    for folder in folders:
        got = []
        for fn in ("LICENSE", "README.md"):
            p = share / "robots" / folder / fn
            if p.exists():
                out = f"{folder}.{fn}"
                shutil.copyfile(p, d / out)
                got.append(out)
        per_folder[folder] = got
        names += got
    return per_folder


def kinds_text(f):
    t = f["joint_types"]
    parts = [f"{t[k]} {k}" for k in ("revolute", "continuous", "prismatic", "fixed") if t.get(k)]
    parts += [f"{v} {k}" for k, v in t.items() if k not in ("revolute", "continuous", "prismatic", "fixed")]
    return ", ".join(parts)


README_HEAD = """# Robot descriptions with Pinocchio reference dynamics

Generated by `generate.py` (do not edit the `.urdf`/`.json`/`LICENSES/` files by hand).
Same format as `shared/fixtures/dynamics/` (see its README): for each robot `NAME.urdf`
(verbatim copy from the PyPI wheel example-robot-data {erd}; meshes are referenced but
not shipped, a parser must not need them) and `NAME.json` with {n} joint states and the
values Pinocchio {pin} computes for them, gravity (0, 0, -9.81), fixed base.

JSON keys: `robot`, `urdf`, `generator`, `gravity`, `nv`, `joints` (movable joints in
Pinocchio's order; match by name), `note`, `cond_M` (`max`, `median` of the 2-norm
condition number of M over the samples), `source` (`package`, `version`, `path` inside the
package's `robots/` folder, `license` as stated by that folder's README), and
`samples[k]` with `q`, `v`, `a`, `tau_rnea`, `M`, `gravity`, `nonlinear`, `tau_aba`,
`ddq_aba` (meaning as in the shared fixtures; continuous joints are given as one angle,
Pinocchio's `[cos, sin]` is internal).

Sampling (numpy `default_rng([{seed}, crc32(name)])`; per sample the draws are q, v, a,
tau in that order): sample 0 has q = v = a = 0; otherwise q uniform within the URDF
position limits (continuous joints in [-pi, pi]), v uniform in +-min(velocity limit, {vc})
(+-{vd} if none or 0), a uniform in +-{ab} (rad/s^2 or m/s^2). `tau_aba` (all samples, sample 0
included) is drawn independently of the rest, uniform in +-min(effort limit, {tc}) (+-{tc}
if no effort limit), so `ddq_aba` is not `a`.

## Robots

| name | maker | dof | joint types (URDF) | #links | #links zero/no inertia | tree/chain | max cond(M) | source (`robots/...`) | license |
|---|---|---|---|---|---|---|---|---|---|
"""

README_TAIL = """
"#links zero/no inertia" counts URDF links with no `<inertial>`, zero mass or an all-zero
inertia tensor. Tree/chain refers to the movable-joint tree of the Pinocchio model.

### Per-robot notes (generated)

{notes}

## Mimic joints

Pinocchio {pin}: `buildModelFromUrdf(path)` has `mimic=False` by default, and then a
`<mimic>` tag is ignored: the mimicking joint becomes an ordinary independent joint with its
own q/v (e.g. panda: nq = nv = 9 including `panda_finger_joint2`). With `mimic=True` it
would become a `JointModelMimic` with no coordinate of its own (panda: nq = nv = 8). These
files use the default, so every movable joint is an independent coordinate, as in
`shared/fixtures/dynamics/`. A `<mimic>` on a `fixed` joint (talos) has no effect either way.
`<dynamics>` damping/friction and joint limits play no part in the values.

## Agreement rule

For each sample and each quantity, max |engine - reference| over the entries must be

- `tau_rnea`, `M`, `gravity`, `nonlinear`: <= 1e-8 * max(1, max |reference|);
- `ddq_aba` (forward dynamics): <= cond(M) * 1e-14 * max(1, max |reference|), with
  cond(M) the 2-norm condition number of that sample's M (or `cond_M.max` for a
  per-robot bound).

(Many entries are exactly zero, so a purely relative test is meaningless.)

## Regenerate

    python3 -m venv /tmp/pinvenv
    /tmp/pinvenv/bin/pip install pin=={pin} example-robot-data=={erd} numpy
    /tmp/pinvenv/bin/python testing/robots/generate.py

The PyPI package `pinocchio` is unrelated; use `pin`. The script refuses other versions and
is deterministic. It rewrites every file here, including this README and `LICENSES/`.

## Licenses

The URDFs are redistributed from example-robot-data {erd} (the package itself:
BSD-2-Clause, `LICENSES/example-robot-data.LICENSE`; its `package.xml`, copied as
`LICENSES/example-robot-data.package.xml`, lists which robot folder is under which
license). The license column above is the `license:` line of each robot folder's README.md,
copied as `LICENSES/<folder>.README.md` (with the upstream repository). Full license texts
shipped by the package:

{license_files}

Folders without a LICENSE file in the package: {missing}. For these only the license
name (folder README) and the upstream repository are recorded here; the Apache-2.0 text in
`LICENSES/panda_description.LICENSE` is the standard one (so_arm_description, talos_data);
MPL-2.0 (z1_description): https://mozilla.org/MPL/2.0/. The BSD / BSD-3-Clause copyright
notices of ur, kinova, allegro, xarm and finger_edu are not shipped by example-robot-data
(see the upstream repositories). {talos}
"""


def main():
    share, pkg_license = check_versions()
    for r in ROBOTS:
        r["folder"] = r["path"].split("/")[0]
        r["license"] = folder_license(share, r["folder"])
    facts = {}
    for r in ROBOTS:
        facts[r["name"]] = f = build_robot(r, share)
        print(f"{r['name']}: nv={f['nv']} nq={f['nq']} {f['structure']} cond max {f['cond_max']:.3g} "
              f"json {f['json_bytes']} B", file=sys.stderr)
    folders = sorted({r["folder"] for r in ROBOTS})
    per_folder = copy_licenses(share, pkg_license, folders)

    rows, notes = [], []
    for r in ROBOTS:
        f = facts[r["name"]]
        nzero = len(set(f["no_inertial"]) | set(f["zero_mass"]) | set(f["zero_tensor"]))
        rows.append(
            f"| {r['name']} | {r['maker']} | {f['nv']} | {kinds_text(f)} | {f['n_links']} | {nzero} "
            f"| {f['structure']} | {f['cond_max']:.3g} | `{r['path']}` | {r['license']} |"
        )
        n = []
        if f["no_inertial"]:
            n.append(f"links without `<inertial>`: {', '.join(f['no_inertial'])}")
        if f["zero_mass"]:
            n.append(f"zero mass: {', '.join(f['zero_mass'])}")
        if f["zero_tensor"]:
            n.append(f"all-zero inertia tensor: {', '.join(f['zero_tensor'])}")
        if f["point_mass"]:
            n.append("of which point masses: " + ", ".join(f"{l} ({m:g} kg)" for l, m in f["point_mass"]))
        if f["neg_mass"]:
            n.append(f"negative mass: {f['neg_mass']}")
        if f["not_pd"]:
            n.append("inertia not positive definite: " + ", ".join(
                f"{l} (eig {', '.join(f'{e:.3g}' for e in ev)})" for l, ev in f["not_pd"]))
        if f["triangle"]:
            n.append("inertia violates the triangle inequality: " + ", ".join(
                f"{l} (eig {', '.join(f'{e:.3g}' for e in ev)})" for l, ev in f["triangle"]))
        if f["zero_mass_bodies_pin"]:
            n.append("massless moving bodies after merging fixed joints: " + ", ".join(f["zero_mass_bodies_pin"]))
        if f["mimic"]:
            n.append("`<mimic>`: " + ", ".join(f"{j} ({t}) -> {m}" for j, t, m in f["mimic"]))
        if "C" in f["kinds"]:
            n.append("continuous joints: " + ", ".join(
                j for j, k in zip(json.loads((HERE / f"{r['name']}.json").read_text())["joints"], f["kinds"]) if k == "C"))
        if f["missing_or_zero_effort"]:
            n.append("effort limit missing or 0: " + ", ".join(f["missing_or_zero_effort"]))
        if f["missing_or_zero_velocity"]:
            n.append("velocity limit missing or 0: " + ", ".join(f["missing_or_zero_velocity"]))
        if f["vel_capped"]:
            n.append(f"velocity limit > {V_CAP:g} (sampled in +-{V_CAP:g}): " + ", ".join(f["vel_capped"]))
        if f["q0_outside_limits"]:
            n.append("q = 0 (sample 0) is outside the position limits of: " + ", ".join(f["q0_outside_limits"]))
        g0, gm, gs = (f["gravity_vs_effort"][k] for k in ("q=0", "mid", "samples"))
        n.append(f"max |g|/effort: {g0[0]:.2f} at q=0 ({g0[1]}), {gm[0]:.2f} at mid-range q ({gm[1]}), "
                 f"{gs[0]:.2f} over the samples ({gs[1]})")
        notes.append(f"- **{r['name']}** (URDF robot name `{f['robot_name']}`, root link `{f['roots'][0]}`): "
                     + "; ".join(n) + ".")

    lic_files = []
    for folder in folders:
        if f"{folder}.LICENSE" in per_folder[folder]:
            lic_files.append(f"- `LICENSES/{folder}.LICENSE`")
    missing = ", ".join(f for f in folders if f"{f}.LICENSE" not in per_folder[f])
    talos = ("Note: `talos_data/README.md` says Apache-2.0 while the package's `package.xml` "
             "lists talos under BSD-3-Clause." if "talos_data" in folders else "")
    readme = README_HEAD.format(
        erd=ERD_VERSION, pin=PIN_VERSION, n=N_SAMPLES, seed=SEED, vd=V_DEFAULT, vc=V_CAP, ab=A_BOUND, tc=TAU_CAP
    ) + "\n".join(rows) + "\n" + README_TAIL.format(
        notes="\n".join(notes), pin=PIN_VERSION, erd=ERD_VERSION,
        license_files="\n".join(lic_files), missing=missing, talos=talos,
    )
    (HERE / "README.md").write_text(readme)

    # machine-readable facts for whoever runs this (not committed output)
    if "--facts" in sys.argv:
        print(json.dumps(facts, indent=1, default=str))


if __name__ == "__main__":
    main()
