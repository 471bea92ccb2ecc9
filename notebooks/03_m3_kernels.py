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
# # 3. Multiplicative updates (M3) for kernel SVMs on sonar and wisconsin
#
# Sha, Saul and Lee (2002) minimize the SVM dual, a non-negative quadratic program
# `min ½vᵀAv + bᵀv, 0 ≤ v ≤ c`, by a multiplicative update that needs no step size and
# never increases the objective. This notebook runs the `m3` backend on two KEEL data sets
# with polynomial and RBF kernels, checks it against Clarabel on the same model, and draws
# the coefficients as they evolve: those of non-support vectors decay towards zero.

# %%
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import robustsvm as rs
from robustsvm import datasets, plotting
from robustsvm.backends.m3 import m3_solve
from robustsvm.duals import reduce_model

FIGURE_DIR = Path(os.environ["FIGURE_DIR"]) if os.environ.get("FIGURE_DIR") else None


def save(fig, name):
    if FIGURE_DIR is not None:
        FIGURE_DIR.mkdir(parents=True, exist_ok=True)
        fig.savefig(FIGURE_DIR / f"{name}.png", dpi=110, bbox_inches="tight")


warnings.simplefilter("ignore", rs.ConvergenceWarning)

# %% [markdown]
# ## Data and models
#
# Features are scaled to [0, 1] and then divided by the largest row norm, so `x·x′ ≤ 1`
# and the polynomial kernels `(1 + x·x′)^k` stay of moderate size. One 80/20 stratified
# split per data set. The model: hinge loss (mean), `(λ/2)‖w‖²` in feature space with
# λ = 10⁻³, no intercept (the polynomial kernels carry a constant term).

# %%
def load_scaled(name, seed=0):
    ds = datasets.load(name)
    X = (ds.X - ds.X.min(0)) / (ds.X.max(0) - ds.X.min(0))
    X = X / np.linalg.norm(X, axis=1).max()
    return train_test_split(X, ds.y, test_size=0.2, random_state=seed, stratify=ds.y)


kernels = {"poly k=4": rs.Polynomial(4), "poly k=6": rs.Polynomial(6), "RBF σ=0.3": rs.RBF(0.3),
           "RBF σ=1": rs.RBF(1.0), "RBF σ=3": rs.RBF(3.0)}
results = {}
for name in ("sonar", "wisconsin"):
    X_tr, X_te, y_tr, y_te = load_scaled(name)
    for label, kernel in kernels.items():
        model = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), kernel=kernel, intercept=False)
        m3 = model.solve(X_tr, y_tr, solver="m3", max_iter=512)  # 512 updates from v = 1, as in the paper
        ref = model.solve(X_tr, y_tr, solver="clarabel")
        results[(name, label)] = {
            "m3 error": float(np.mean(m3.predict(X_te) != y_te)),
            "clarabel error": float(np.mean(ref.predict(X_te) != y_te)),
            "m3 objective": m3.objective,
            "optimum": ref.objective,
            "m3 history": m3.history["objective"],
        }
        # the multiplicative update never increases the dual objective
        assert np.all(np.diff(m3.history["objective"]) <= 1e-12 * np.abs(m3.history["objective"][:-1]) + 1e-15)
        assert m3.objective >= ref.objective - 1e-6 * max(1, ref.objective)

print(f"{'data':<10}{'kernel':<11}{'m3 error':>9}{'clarabel':>10}{'m3 objective':>14}{'optimum':>11}"
      f"{'rel. excess':>12}")
for (name, label), r in results.items():
    excess = (r["m3 objective"] - r["optimum"]) / r["optimum"]
    print(f"{name:<10}{label:<11}{r['m3 error']:>9.3f}{r['clarabel error']:>10.3f}{r['m3 objective']:>14.6f}"
          f"{r['optimum']:>11.6f}{excess:>12.2e}")

# %% [markdown]
# After 512 updates from v = 1, M3's primal objective is within about 5% of the optimum for
# every RBF kernel and for wisconsin, but still far from it for the polynomial kernels on
# sonar, whose Gram matrices are the worst conditioned; the test errors are close to those of
# the optimal classifier either way (the table above, one split). Given more updates M3
# reaches the optimum; on wisconsin with the RBF kernel σ = 0.3:

# %%
X_tr, X_te, y_tr, y_te = load_scaled("wisconsin")
model = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), kernel=rs.RBF(0.3), intercept=False)
long = model.solve(X_tr, y_tr, solver="m3", max_iter=4000, tol=1e-7)
ref = model.solve(X_tr, y_tr, solver="clarabel")
print(long.summary())
print(f"clarabel objective {ref.objective:.8f}")
print(f"relative excess after {long.iterations} updates: {(long.objective - ref.objective) / ref.objective:.2e}")
assert abs(long.objective - ref.objective) <= 1e-3 * ref.objective

# %% [markdown]
# ## The coefficients over the iterations (Sha et al., Fig. 1)
#
# Recording the dual variables at every update on wisconsin with the RBF kernel σ = 0.3: the
# coefficients of the examples that end up support vectors settle at positive values, the
# others decay geometrically towards zero.

# %%
model = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-3), kernel=rs.RBF(0.3), intercept=False)
dual = reduce_model(model.normalize(X_tr, y_tr))
trace = []
res = m3_solve(dual.nqp, init=1.0, max_iter=512, record=lambda it, v: trace.append(v.copy()))
V = np.array(trace)
scale = V.max()
fig, ax = plotting.m3_coefficients(V / scale, np.arange(V.shape[0]), max_lines=100)
ax.set_ylim(1e-9, 2)
ax.set_ylabel("coefficient / largest coefficient")
ax.set_title(f"M3 on wisconsin, RBF σ = 0.3: 100 of the {V.shape[1]} coefficients")
save(fig, "nb3_m3_coefficients")

final = V[-1] / scale
print(f"after {V.shape[0]} updates: {np.sum(final > 1e-3)} coefficients above 1e-3, "
      f"{np.sum(final < 1e-6)} below 1e-6; KKT residual {res.kkt_residual:.2e}")
assert np.sum(final < 1e-6) > 0.25 * final.size  # many coefficients vanish: not support vectors
assert np.all(np.diff(res.history["objective"]) <= 1e-12)

# %% [markdown]
# ## The dual objective against the update, every model
#
# The distance of the NQP objective `F(v_t)` to its value after the last update, on a log
# scale: a monotone decrease for every kernel, fastest for the smooth, wide RBF kernel.

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True, sharey=True)
for ax, name in zip(axes, ("sonar", "wisconsin"), strict=True):
    for label in kernels:
        r = results[(name, label)]
        hist = r["m3 history"]
        ax.plot(np.arange(hist.size), np.abs(hist - hist[-1]) + 1e-16, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("update")
    ax.set_title(name)
axes[0].set_ylabel("|F_t − F_512| (dual objective)")
axes[0].legend(fontsize="small")
save(fig, "nb3_m3_objective")
