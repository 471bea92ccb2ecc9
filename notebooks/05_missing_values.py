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
# # 5. Missing values as uncertainty on WDBC
#
# Shivaswamy, Bhattacharyya and Smola (2006) treat a missing value as a random variable: under a
# Gaussian for the rows, the missing coordinates of a sample have a conditional mean and a conditional
# covariance given its observed ones. The sample becomes the conditional mean (the centre) and an
# ellipsoid over its missing coordinates only, with the radius that makes the ellipsoid hold the true
# values with a chosen probability. This notebook removes values at random from WDBC, builds the sets,
# checks how often they hold the values that were removed, looks at one of them, and trains the robust
# model next to mean imputation and conditional-mean imputation.

# %%
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import robustsvm as rs

FIGURE_DIR = Path(os.environ["FIGURE_DIR"]) if os.environ.get("FIGURE_DIR") else None


def save(fig, name):
    if FIGURE_DIR is not None:
        FIGURE_DIR.mkdir(parents=True, exist_ok=True)
        fig.savefig(FIGURE_DIR / f"{name}.png", dpi=110, bbox_inches="tight")


warnings.simplefilter("ignore", rs.ConvergenceWarning)

# %% [markdown]
# ## The data and the removed values
#
# WDBC (569 × 30, scikit-learn's copy) has no missing values, so the truth is known. We take the
# logarithm of the (positive, right-skewed) features so that a Gaussian describes them better,
# standardize, and remove every entry independently with probability 20 %.

# %%
data = rs.datasets.load("wdbc")
X_true = StandardScaler().fit_transform(np.log(data.X + 1e-3))
y = data.y
rng = np.random.default_rng(0)
removed = rng.random(X_true.shape) < 0.2
X = np.where(removed, np.nan, X_true)
print(f"{removed.mean():.1%} of the values removed; {np.mean(~removed.any(1)):.1%} of the rows are complete")

# %% [markdown]
# ## The Gaussian and its conditional means
#
# EM uses every observed value (with 20 % removed, complete rows are too few for a covariance of 30
# features). The conditional means predict the removed values far better than the column means do.

# %%
gaussian = rs.fit_gaussian(X, method="em")
filled = gaussian.impute(X)
rmse_conditional = np.sqrt(np.mean((filled[removed] - X_true[removed]) ** 2))
rmse_mean = np.sqrt(np.mean((np.nanmean(X, axis=0)[np.nonzero(removed)[1]] - X_true[removed]) ** 2))
print(f"RMSE of the removed values: conditional mean {rmse_conditional:.3f}, column mean {rmse_mean:.3f}")
assert rmse_conditional < rmse_mean

# %% [markdown]
# ## Coverage: how often the sets hold the removed values
#
# The radius `κ = √(χ²_k⁻¹(level))` makes each set hold the true row with probability `level` under
# the Gaussian. On real data the Gaussian is a model, so the coverage is measured: for every level,
# the share of incomplete rows whose true values lie in their set.

# %%
levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99])
incomplete = np.flatnonzero(removed.any(axis=1))
coverage = []
for level in levels:
    mv = rs.missing_as_uncertainty(X, level=level, gaussian=gaussian)
    inside = [mv.uncertainty[i].contains((X_true[i] - mv.X[i]) / mv.uncertainty[i].radius, tol=0.0)
              for i in incomplete]
    coverage.append(np.mean(inside))
coverage = np.array(coverage)
se = np.sqrt(levels * (1 - levels) / incomplete.size)
for lv, cv in zip(levels, coverage, strict=True):
    print(f"level {lv:.2f}: coverage {cv:.3f}")

fig, ax = plt.subplots(figsize=(4.5, 4))
ax.plot([0, 1], [0, 1], color="grey", lw=1, label="coverage = level")
ax.fill_between(levels, levels - 2 * se, levels + 2 * se, color="grey", alpha=0.2, label="±2 binomial s.e.")
ax.plot(levels, coverage, "o-", label="WDBC (log features), 20 % removed")
ax.set_xlabel("level (stated coverage)")
ax.set_ylabel("share of rows whose set holds the true values")
ax.legend(fontsize=8)
save(fig, "nb5_coverage")

# %% [markdown]
# The same check on data that *is* Gaussian (the fitted mean and covariance, 5,000 rows, same
# removal) lands on the diagonal: the departures above come from the data, not from the sets.

# %%
synthetic = rng.multivariate_normal(gaussian.mean, gaussian.covariance, size=5000)
syn_removed = rng.random(synthetic.shape) < 0.2
syn = np.where(syn_removed, np.nan, synthetic)
mv = rs.missing_as_uncertainty(syn, level=0.9, gaussian=gaussian)
rows = np.flatnonzero(syn_removed.any(axis=1))
share = np.mean([mv.uncertainty[i].contains((synthetic[i] - mv.X[i]) / mv.uncertainty[i].radius, tol=0.0)
                 for i in rows])
print(f"Gaussian rows, level 0.9: coverage {share:.3f} (±{2 * np.sqrt(0.09 / rows.size):.3f})")
assert abs(share - 0.9) < 4 * np.sqrt(0.09 / rows.size)

# %% [markdown]
# ## One set, drawn
#
# A row missing (among others) the two features below: its set lives in the space of its missing
# coordinates; drawn is its shadow on the plane of these two (the 2 × 2 block of the conditional
# covariance, radius κ), centred at the conditional mean. The observed coordinates do not move. The
# two features are strongly correlated with the observed ones, so the set is small next to the
# spread of the data (right: zoomed), and it holds the removed values where the column means miss.

# %%
a, b = 0, 20  # mean radius, worst radius
two = np.flatnonzero(removed[:, a] & removed[:, b])[0]
mv90 = rs.missing_as_uncertainty(X, level=0.9, gaussian=gaussian)
s = mv90.uncertainty[two]
pos = [list(s.coordinates).index(a), list(s.coordinates).index(b)]
C2 = s.shape[np.ix_(pos, pos)]
# the shadow of the set on the (a, b) plane: the ellipse of the 2 × 2 block of C, radius κ
t = np.linspace(0, 2 * np.pi, 200)
ellipse = mv90.X[two, [a, b]][:, None] + s.radius * np.linalg.cholesky(C2) @ np.vstack([np.cos(t), np.sin(t)])
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
for ax in axes:
    ax.scatter(X_true[:, a], X_true[:, b], s=4, color="lightgrey", label="other rows (true values)")
    ax.plot(*ellipse, color="C0", label=f"set at level 0.9 (κ = {s.radius:.2f}, {s.k} missing), shadow")
    ax.plot(*mv90.X[two, [a, b]], "o", color="C0", label="centre: conditional mean")
    ax.plot(*np.nanmean(X, axis=0)[[a, b]], "s", color="C3", label="column means")
    ax.plot(*X_true[two, [a, b]], "*", ms=12, color="k", label="the removed values")
    ax.set_xlabel(data.feature_names[a])
    ax.set_ylabel(data.feature_names[b])
axes[0].legend(fontsize=7)
pad = 1.5 * np.abs(ellipse - mv90.X[two, [a, b]][:, None]).max(axis=1)
axes[1].set_xlim(mv90.X[two, a] - pad[0], mv90.X[two, a] + pad[0])
axes[1].set_ylim(mv90.X[two, b] - pad[1], mv90.X[two, b] + pad[1])
axes[1].set_title("zoomed on the set", fontsize=9)
save(fig, "nb5_one_set")

# %% [markdown]
# ## The robust model against imputation
#
# One stratified split; the robust model at several levels next to conditional-mean imputation (the
# same centres without sets) and mean imputation. Every robust fit is certified by the package's
# duality gap and checked sample by sample (`robust_check`: each set's worst point lies in the set and
# attains the robust margin). Test rows with missing values are filled with their conditional means.

# %%
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=1, stratify=y)
results = {}
for mode in ("conditional_mean", "mean"):
    est = rs.RobustSVC(l2=0.01, missing=mode).fit(X_train, y_train)
    results[mode] = est.score(X_test, y_test)
robust_levels = [0.1, 0.3, 0.5, 0.7, 0.9, 0.99]
robust_scores = []
for level in robust_levels:
    est = rs.RobustSVC(l2=0.01, missing="uncertain", missing_level=level).fit(X_train, y_train)
    assert est.solution_.status == "optimal" and est.gap_ < 1e-6
    mv = rs.missing_as_uncertainty(X_train, level=level, gaussian=est.imputation_)
    assert rs.robust_check(est.solution_, mv.X, y_train).holds
    robust_scores.append(est.score(X_test, y_test))
    print(f"level {level:.2f}: accuracy {robust_scores[-1]:.3f}, gap {est.gap_:.1e}")
print({k: round(v, 3) for k, v in results.items()})

fig, ax = plt.subplots(figsize=(5, 3.6))
ax.plot(robust_levels, robust_scores, "o-", label='missing="uncertain"')
ax.axhline(results["conditional_mean"], color="C1", ls="--", label='missing="conditional_mean"')
ax.axhline(results["mean"], color="C3", ls=":", label='missing="mean"')
ax.set_xlabel("missing_level")
ax.set_ylabel("test accuracy")
ax.legend(fontsize=8)
save(fig, "nb5_accuracy_level")

# %% [markdown]
# ## The worst case, by brute force
#
# For a row with three missing values, the smallest margin over many points of its set's boundary
# agrees with the robust margin the model used, `y(w·c + b) − κ‖Lᵀ w_M‖₂`.

# %%
est = rs.RobustSVC(l2=0.01, missing="uncertain", missing_level=0.9).fit(X_train, y_train)
mv = rs.missing_as_uncertainty(X_train, level=0.9, gaussian=est.imputation_)
w, b0 = est.coef_[0], est.intercept_[0]
i = next(i for i, s in enumerate(mv.uncertainty) if s.k == 3)
s = mv.uncertainty[i]
yi = 1.0 if y_train[i] == est.classes_[1] else -1.0
U = rng.standard_normal((200000, 3))
U /= np.linalg.norm(U, axis=1, keepdims=True)
points = np.tile(mv.X[i], (U.shape[0], 1))
points[:, s.coordinates] += s.radius * U @ s.L.T
brute = np.min(yi * (points @ w + b0))
robust = yi * (mv.X[i] @ w + b0) - s.radius * np.linalg.norm(s.L.T @ w[s.coordinates])
print(f"brute-force worst margin {brute:.6f}, robust margin {robust:.6f}")
assert robust <= brute <= robust + 1e-3 * max(1.0, abs(robust))
print(f"the 0.9 coverage radius for k = 3 is {np.sqrt(stats.chi2.ppf(0.9, 3)):.3f} = {s.radius:.3f}")
