"""A table shaped like GBSG2 (346 breast-cancer patients, 5-year relapse 245 / no relapse 101), made here.

Numbers: age, tumour size, positive nodes and three lab values (progesterone, estrogen, a noisy marker) with
NaNs; text categories: menopausal status, tumour grade (I/II/III), hormone therapy (yes/no). The categories
are one-hot encoded, NaNs median-imputed and every column standardized (scikit-learn), as a user would.
"""

from __future__ import annotations

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

N_ROWS, N_RELAPSE = 346, 245


def gbsg2_like(seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(X, y, feature_names)``: standardized features, ``y = 1`` for relapse (245 of 346 rows)."""
    rng = np.random.default_rng(seed)
    y = np.zeros(N_ROWS, dtype=int)
    y[rng.choice(N_ROWS, N_RELAPSE, replace=False)] = 1
    shift = 0.35 * (2 * y - 1)  # a weak signal, as in the clinical data
    numbers = np.column_stack([
        rng.normal(53, 10, N_ROWS) - 2 * shift,          # age
        rng.gamma(3, 10, N_ROWS) * (1 + 0.2 * shift),     # tumour size
        rng.poisson(3 + 2 * (y == 1), N_ROWS).astype(float),  # positive nodes
        rng.lognormal(4 - 0.5 * shift, 1.2, N_ROWS),      # progesterone
        rng.lognormal(4, 1.2, N_ROWS),                    # estrogen
        rng.normal(0, 1, N_ROWS) + 0.5 * shift,           # noisy marker
    ])
    for col in (3, 4, 5):  # NaNs in the three lab values
        numbers[rng.random(N_ROWS) < 0.08, col] = np.nan
    text = np.column_stack([
        np.where(rng.random(N_ROWS) < 0.55, "post", "pre"),
        rng.choice(["I", "II", "III"], N_ROWS, p=[0.15, 0.6, 0.25]),
        np.where(rng.random(N_ROWS) < 0.35 - 0.1 * shift, "yes", "no"),
    ]).astype(object)
    table = np.empty((N_ROWS, 9), dtype=object)
    table[:, :6], table[:, 6:] = numbers, text
    prep = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), list(range(6))),
        ("cat", make_pipeline(OneHotEncoder(sparse_output=False), StandardScaler()), [6, 7, 8]),
    ])
    X = np.asarray(prep.fit_transform(table), dtype=np.float64)
    names = ["age", "tsize", "pnodes", "progrec", "estrec", "marker", "meno=post", "meno=pre", "grade=I",
             "grade=II", "grade=III", "horTh=no", "horTh=yes"]
    return X, y, names
