# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 1. The language: one model, its conic program, and how the cones grow
#
# A robustsvm model is a sentence: a loss, a penalty, sign constraints, an
# uncertainty set around each sample, an intercept. This notebook writes one on the
# Wisconsin diagnostic breast cancer data, prints the CVXPY problem it compiles to,
# and measures what each uncertainty set costs the conic solver: which cones, how
# many rows, and how that grows with the number of samples n.
#
# Set the environment variable `FIGURE_DIR` to save the figures (the documentation's
# copies are made that way).

# %%
import os
import time
import warnings
from pathlib import Path

import cvxpy as cp
import matplotlib.pyplot as plt
import numpy as np

import robustsvm as rs
from robustsvm import datasets

FIGURE_DIR = Path(os.environ["FIGURE_DIR"]) if os.environ.get("FIGURE_DIR") else None


def save(fig, name):
    if FIGURE_DIR is not None:
        FIGURE_DIR.mkdir(parents=True, exist_ok=True)
        fig.savefig(FIGURE_DIR / f"{name}.png", dpi=110, bbox_inches="tight")


warnings.filterwarnings("ignore", message=".*dimension greater than 2.*")

# %% [markdown]
# ## The data and one model
#
# WDBC has 569 tumours and 30 features; scikit-learn's copy labels *benign* as class 1.
# The features are standardized. The model below reads: squared hinge loss, an
# elastic-net penalty, a *negative* sign on two size features (a larger tumour is never
# evidence for benign), a box of radius 0.05 around every sample, a free intercept.

# %%
data = datasets.load("wdbc")
X = (data.X - data.X.mean(0)) / data.X.std(0)
y = data.y
names = data.feature_names
print(data.description)

model = rs.Problem(
    loss=rs.SquaredHinge(),
    penalty=rs.L2(1e-2) + rs.L1(1e-3),
    signs={"mean radius": -1, "worst area": -1},
    uncertainty=rs.Box(radius=0.05),
    intercept=True,
)
print(model)

# %% [markdown]
# `to_cvxpy` gives the CVXPY problem. The hyperparameters are `cp.Parameter`s
# (`l2`, `l1`, `radius`), so a change of λ or r re-solves without recompiling; the support
# function of the box, σ(z) = ‖z‖₁, enters through one shared epigraph variable
# `t_support` — not one per sample. A small slice of the data keeps the print short.

# %%
small = rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L2(1e-2) + rs.L1(1e-3), signs=[-1, 0, 0, 0],
                   uncertainty=rs.Box(radius=0.05))
rows = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
cvx_problem = small.to_cvxpy(X[rows, :4], y[rows])
print(cvx_problem)
print("parameters:", sorted(p.name() for p in cvx_problem.parameters()))

# %% [markdown]
# Solving the full model, then checking the answer two ways: the objective is recomputed
# in numpy from (w, b), and a second conic solver (SCS) must agree.

# %%
sol = model.solve(X, y, solver="clarabel", feature_names=names)
print(sol.summary())
check = model.solve(X, y, solver="scs", feature_names=names, tol=1e-9)
print(f"clarabel {sol.objective:.8f}   scs {check.objective:.8f}")
assert abs(sol.objective - check.objective) <= 1e-5 * max(1, sol.objective)
w = dict(zip(names, sol.w, strict=True))
assert w["mean radius"] <= 1e-9 and w["worst area"] <= 1e-9

# %% [markdown]
# ## What each uncertainty set compiles to
#
# The robust margin is `y_i(x_i·w + b) − r_i σ_V(−y_i w)`. Each set brings its support
# function σ_V as cones: the box an ℓ1 norm (linear rows), the Euclidean ball a
# second-order cone, a p-norm ball with p ∉ {1, 2, ∞} power cones, an ellipsoid one SOC,
# a polyhedron an LP dual, a spectrahedron PSD blocks. Counting the rows Clarabel
# receives, by cone:

# %%
d = X.shape[1]
rng = np.random.default_rng(0)
B = rng.normal(size=(d, d))
M = B @ B.T / d + np.eye(d)  # an ellipsoid shape, positive definite
G = np.vstack([np.eye(d), -np.eye(d), np.ones((1, d)), -np.ones((1, d))])
h = np.r_[np.ones(2 * d), 3.0, 3.0]  # a box cut by two half-spaces


def elliptope_blocks(d):
    """A spectrahedron in R^d: d/3 copies of the 3 × 3 elliptope [[1, a, b], [a, 1, c], [b, c, 1]] ⪰ 0."""
    k = d // 3
    A0 = np.eye(3 * k)
    A = np.zeros((d, 3 * k, 3 * k))
    for j in range(k):
        i = 3 * j
        for coord, (r, c) in zip((i, i + 1, i + 2), ((i, i + 1), (i, i + 2), (i + 1, i + 2)), strict=True):
            A[coord, r, c] = A[coord, c, r] = 1.0
    return A0, A


A0, A = elliptope_blocks(d)
sets = {
    "nominal": None,
    "box": rs.Box(0.05),
    "ball (p=2)": rs.Ball(0.05),
    "ball (p=1)": rs.Ball(0.05, p=1),
    "ball (p=3)": rs.Ball(0.05, p=3),
    "ellipsoid": rs.Ellipsoid(shape=M, radius=0.05),
    "polyhedron": rs.Polyhedron(G, h, radius=0.05),
    "spectrahedron": rs.Spectrahedron(A0, A, radius=0.05),
    "box ∩ ball": rs.Box(0.05) & rs.Ball(0.08),
}


def cone_sizes(problem, X, y):
    """Rows of each cone type in the conic program Clarabel receives."""
    start = time.perf_counter()
    data, _, _ = problem.to_cvxpy(X, y).get_problem_data(cp.CLARABEL)
    elapsed = time.perf_counter() - start
    dims = data["dims"]
    return {
        "variables": data["A"].shape[1],
        "zero": dims.zero,
        "nonneg": dims.nonneg,
        "soc": int(sum(dims.soc)),
        "psd blocks": len(dims.psd),
        "power": len(dims.p3d),
        "compile [s]": elapsed,
    }


print(f"{'set':<14}" + "".join(f"{k:>12}" for k in ("variables", "zero", "nonneg", "soc", "psd blocks", "power",
                                                     "compile [s]")))
sizes = {}
for label, uset in sets.items():
    s = cone_sizes(rs.Problem(penalty=rs.L2(1e-2), uncertainty=uset), X, y)
    sizes[label] = s
    print(f"{label:<14}" + "".join(f"{v:>12.3g}" if isinstance(v, float) else f"{v:>12}" for v in s.values()))

# %% [markdown]
# Every robust model adds a fixed number of cones: the support function's epigraph is shared
# by all samples with the same set (one per label for the asymmetric spectrahedron, one for
# the symmetric sets). The only part that grows with n is the hinge rows themselves.
# Measured over n:

# %%
ns = [100, 200, 400, 569]
growth = {label: [] for label in ("nominal", "box", "ball (p=2)", "ellipsoid", "spectrahedron")}
for n in ns:
    for label in growth:
        s = cone_sizes(rs.Problem(penalty=rs.L2(1e-2), uncertainty=sets[label]), X[:n], y[:n])
        growth[label].append(s)

from matplotlib.ticker import MaxNLocator  # noqa: E402

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
# several sets add the same rows (their lines coincide): each gets its own line style, marker
# and width, drawn widest first, so that every one stays visible where they overlap
styles = {"nominal": ("-", "o", 5.0, 9), "box": ("--", "s", 4.0, 8), "ball (p=2)": (":", "^", 3.0, 7),
          "ellipsoid": ("-.", "D", 2.0, 5), "spectrahedron": ((0, (1, 1)), "v", 1.2, 4)}
for label, rows in growth.items():
    ls, marker, lw, ms = styles[label]
    kw = dict(linestyle=ls, marker=marker, linewidth=lw, markersize=ms, label=label, alpha=0.85)
    axes[0].plot(ns, [r["zero"] + r["nonneg"] + r["soc"] for r in rows], **kw)
    axes[1].plot(ns, [r["psd blocks"] for r in rows], **kw)
axes[0].set_xlabel("n (samples)")
axes[0].set_ylabel("linear + SOC rows")
axes[1].set_xlabel("n (samples)")
axes[1].set_ylabel("PSD blocks")
axes[1].yaxis.set_major_locator(MaxNLocator(integer=True))  # a count: whole numbers only
axes[0].legend(fontsize="small")
axes[0].set_title("rows grow with n, by the same amount for every set")
axes[1].set_title("PSD blocks do not grow with n")
save(fig, "nb1_cone_growth")

spec = [r["psd blocks"] for r in growth["spectrahedron"]]
assert len(set(spec)) == 1 and spec[0] > 0  # O(1) PSD blocks, whatever n
extra = [r["nonneg"] - g["nonneg"] for r, g in zip(growth["box"], growth["nominal"], strict=True)]
assert len(set(extra)) == 1  # the box adds the same rows whatever n

# %% [markdown]
# ## Reading the model back
#
# `Problem.to_dict` is the model as data; a solution stored with `Solution.to_json` carries
# it, with a fingerprint of (X, y), so that anyone can re-check the numbers later with
# `rs.validate` (see the *Certificates and validation* page).

# %%
import json  # noqa: E402
import tempfile  # noqa: E402

print(json.dumps(model.to_dict(), indent=1)[:400])
with tempfile.TemporaryDirectory() as tmp:
    path = sol.to_json(Path(tmp) / "wdbc_box.json", X, y)
    report = rs.validate(rs.Solution.from_json(path), X, y)
print(report)
assert report.ok
