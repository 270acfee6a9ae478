"""Independent NumPy/SciPy cross-check of the synthetic-set finding in docs/results/vbks-eval.md.

Generates dataset A of the VBKS paper (true kernel (PER+RQ)*LIN) the same way as
plugins/vbks/tests/common/synthetic.rs (own RNG, so other draws), then maximises the collapsed
(Titsias) bound with L-BFGS-B (SciPy, finite-difference gradients) with M = 16 fixed k-means
inducing inputs, and with the inducing inputs learned too, for the true kernel started at
its true hyperparameters and for PER*LIN+SE. Not run by CI (needs numpy and scipy):

    python3 synthetic_check.py A 1
"""
import sys
import numpy as np
import scipy.optimize as so
from sparse_bound import parse, build, kfun, bound, kmeans


def k_true(which, a, b):
    r = a[:, None] - b[None, :]
    per = lambda ell, p: np.exp(-2 * np.sin(np.pi * r / p) ** 2 / ell ** 2)
    rq = lambda ell: (1 + r ** 2 / (2 * ell ** 2)) ** -1.0
    if which == "A":
        return (0.01 * per(2.0, 2 * np.pi) + 0.01 * rq(3.0)) * np.outer(a, b) / 25
    return 0.01 * per(1.0, 2 * np.pi) * np.outer(a, b) / 9 * 0.01 * rq(8.0)


def generate(which, seed):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-10, 10, 256)
    k0 = k_true(which, x0, x0)
    k0 += 1e-4 * np.mean(np.diag(k0)) * np.eye(256)
    f0 = np.linalg.cholesky(k0) @ rng.normal(size=256)
    x = rng.uniform(-10, 10, 1000)
    return x, k_true(which, x, x0) @ np.linalg.solve(k0, f0)


def fit(text, th0, xs, ys, z0):
    e = parse(text)
    leaves = build(e)
    p = len(th0)
    f = lambda t, z: -bound(kfun(e, leaves, t[: p - 1]), xs, ys, z, max(t[p - 1], -14))
    fixed = so.minimize(lambda t: f(t, z0), th0, method="L-BFGS-B", options={"maxiter": 300})
    learned = so.minimize(
        lambda t: f(t[:p], t[p:]), np.concatenate([fixed.x, z0]), method="L-BFGS-B",
        options={"maxiter": 300},
    )
    return -fixed.fun, -learned.fun


if __name__ == "__main__":
    which, seed = sys.argv[1], int(sys.argv[2])
    x, y = generate(which, seed)
    sx, sy = x.std(), y.std()
    xs, ys = x / sx, (y - y.mean()) / sy
    z0 = kmeans(xs, 16, np.random.default_rng(seed + 100))
    # (PER+RQ)*LIN at the truth: PER (var, ell, period), RQ (var, ell, alpha), LIN scale, noise.
    truth = np.log([0.01 / sy**2, 2, 2 * np.pi / sx, 0.01 / sy**2, 3 / sx, 1.0, 5 / sx, 1e-3])
    print("(PER+RQ)*LIN from the truth: fixed Z, learned Z =", fit("(PER+RQ)*LIN", truth, xs, ys, z0))
    other = np.log([1.0, 1.0, 1.0, 0.5, 0.5, 1e-2])  # PER (ell, period), LIN, SE (var, ell), noise
    for p0 in [1.7, 1.36, 1.09]:
        other[1] = np.log(p0)
        print(f"PER*LIN+SE, period start {p0}: fixed Z, learned Z =", fit("PER*LIN+SE", other, xs, ys, z0))
