"""Missing values as uncertainty against mean imputation and complete-case analysis on real data; writes
``benchmarks/results/missing.md`` and ``docs/figures/missing_values_comparison.png``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_missing.py            # the full protocol (a few minutes on 2 cores)
    .venv/bin/python benchmarks/bench_missing.py --quick    # 2 repeats, into build/ (a check of the script)

Protocol (the same for every method, seeded):

* data: WDBC (scikit-learn's copy, 569 × 30) and KEEL pima (768 × 8), and with ``--sonar`` KEEL sonar
  (208 × 60); no values are missing in the shipped copies;
* each repeat: a stratified 75 / 25 split; every entry of the training and of the test part is removed
  independently with probability ``rate`` (missing completely at random), for rate 10 % and 30 %;
  features standardized with the observed training values;
* models: ``RobustSVC(loss="hinge", l2=0.01)`` with ``missing="uncertain"`` (EM Gaussian of the training
  rows, an ellipsoid over each row's missing coordinates with coverage ``missing_level`` 0.5 and 0.9),
  ``missing="conditional_mean"`` (the same centres, no sets),
  ``missing="mean"`` (column means) and ``missing="drop"`` (complete-case analysis: the complete training
  rows only); test rows with missing values are filled as each model's ``imputation_`` says (conditional
  means, column means); for scale, the same model on the data with nothing removed;
* calibration: Platt's sigmoid (``robustsvm.estimators.calibration.fit_sigmoid``) on out-of-fold decision values of a
  5-fold stratified split of the training part, as ``probability=True`` does; Brier score and log loss
  on the test part;
* every fit (the inner folds included) is solved by Clarabel and certified: the largest duality gap of
  the per-sample-ellipsoid models is reported.
"""

from __future__ import annotations

import os

for _k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "RAYON_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "missing.md"
FIGURE = ROOT / "docs" / "figures" / "missing_values_comparison.png"
#: the page whose generated block (between the two markers) shows the same table and figure
PAGE = ROOT / "docs" / "missing_values.md"
BEGIN, END = "<!-- bench_missing: begin (written by benchmarks/bench_missing.py) -->", "<!-- bench_missing: end -->"
sys.path.insert(0, str(ROOT))

L2 = 0.01
RATES = (0.1, 0.3)
FOLDS = 5
#: (label, RobustSVC keyword arguments); "full" is fitted on the data with nothing removed
METHODS = [
    ("uncertain, level 0.5", {"missing": "uncertain", "missing_level": 0.5}),
    ("uncertain, level 0.9", {"missing": "uncertain", "missing_level": 0.9}),
    ("conditional mean", {"missing": "conditional_mean"}),
    ("mean imputation", {"missing": "mean"}),
    ("complete case", {"missing": "drop"}),
    ("no values removed", {"missing": "error"}),
]


def _fit(params, X, y):
    """A fitted RobustSVC, or None when the rows leave fewer than two classes (complete case)."""
    import robustsvm as rs

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return rs.RobustSVC(loss="hinge", l2=L2, **params).fit(X, y)
    except ValueError as exc:
        if "complete rows" in str(exc):
            return None
        raise


def _evaluate(params, X_train, y_train, X_test, y_test, seed):
    """Accuracy, Brier score, log loss, the gaps of every fit, the training rows used; None when no fit."""
    from sklearn.model_selection import StratifiedKFold

    from robustsvm.estimators.calibration import fit_sigmoid

    model = _fit(params, X_train, y_train)
    if model is None:
        return None
    gaps, status = [model.gap_], [model.solution_.status]
    decision = np.empty(y_train.shape[0])
    for train, test in StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(X_train, y_train):
        inner = _fit(params, X_train[train], y_train[train])
        if inner is None:
            return None
        gaps.append(inner.gap_)
        status.append(inner.solution_.status)
        decision[test] = inner.decision_function(X_train[test])
    sigmoid = fit_sigmoid(decision, y_train == model.classes_[1])
    p = np.clip(sigmoid.probability(model.decision_function(X_test)), 1e-15, 1 - 1e-15)
    t = (y_test == model.classes_[1]).astype(float)
    return {"accuracy": float(np.mean(model.predict(X_test) == y_test)),
            "brier": float(np.mean((p - t) ** 2)),
            "log_loss": float(-np.mean(t * np.log(p) + (1 - t) * np.log(1 - p))),
            "max_gap": float(max(gaps)), "all_optimal": all(s == "optimal" for s in status)}


def run_split(task):
    """One (data set, rate, repeat): every method on the same split and the same removed values."""
    from sklearn.model_selection import StratifiedShuffleSplit
    from sklearn.preprocessing import StandardScaler

    import robustsvm as rs

    name, rate, repeat = task
    data = rs.datasets.load(name)
    X, y = data.X, data.y
    seed = 1000 * repeat + int(100 * rate)
    train, test = next(StratifiedShuffleSplit(1, test_size=0.25, random_state=seed).split(X, y))
    rng = np.random.default_rng(seed)
    removed = rng.random(X.shape) < rate
    scaler = StandardScaler().fit(np.where(removed[train], np.nan, X[train]))
    Xs = scaler.transform(X)
    Xm = np.where(removed, np.nan, Xs)
    complete = float(np.mean(~removed[train].any(axis=1)))
    out = []
    for label, params in METHODS:
        t0 = time.process_time()
        source = Xs if params["missing"] == "error" else Xm
        result = _evaluate(params, source[train], y[train], source[test], y[test], seed)
        out.append({"data": name, "rate": rate, "repeat": repeat, "method": label, "result": result,
                    "cpu": time.process_time() - t0, "complete_rows": complete})
    return out


def _cell(values, fmt="{:.3f}"):
    if not values:
        return "—"
    return (fmt + " ± " + fmt).format(np.mean(values), np.std(values, ddof=1) if len(values) > 1 else 0.0)


def table(rows, repeats):
    """The markdown table: mean ± sd over repeats of accuracy, Brier score and log loss per method."""
    lines = ["| data | removed | method | accuracy | Brier score | log loss | repeats fitted | max gap |",
             "|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["data"], r["rate"]) for r in rows}, key=lambda k: (k[0] != "wdbc", k[0], k[1]))
    for data, rate in keys:
        for label, _ in METHODS:
            group = [r["result"] for r in rows if r["data"] == data and r["rate"] == rate and r["method"] == label]
            ok = [g for g in group if g is not None]
            gap = f"{max(g['max_gap'] for g in ok):.1e}" if ok else "—"
            lines.append(f"| {data} | {rate:.0%} | {label} | {_cell([g['accuracy'] for g in ok])} | "
                         f"{_cell([g['brier'] for g in ok])} | {_cell([g['log_loss'] for g in ok])} | "
                         f"{len(ok)}/{repeats} | {gap} |")
    return "\n".join(lines)


def figure(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({(r["data"], r["rate"]) for r in rows}, key=lambda k: (k[0] != "wdbc", k[0], k[1]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    width = 0.8 / len(METHODS)
    panels = ((axes[0], "accuracy", "test accuracy"), (axes[1], "brier", "Brier score (lower is better)"))
    for ax, metric, title in panels:
        for m, (label, _) in enumerate(METHODS):
            means, sds = [], []
            for data, rate in keys:
                vals = [r["result"][metric] for r in rows if r["data"] == data and r["rate"] == rate
                        and r["method"] == label and r["result"] is not None]
                means.append(np.mean(vals) if vals else np.nan)
                sds.append(np.std(vals, ddof=1) if len(vals) > 1 else 0.0)
            ax.bar(np.arange(len(keys)) + (m - (len(METHODS) - 1) / 2) * width, means, width, yerr=sds,
                   label=label, capsize=2)
        ax.set_xticks(np.arange(len(keys)), [f"{d}\n{r:.0%} removed" for d, r in keys])
        ax.set_title(title)
    lo = np.nanmin([r["result"]["accuracy"] for r in rows if r["result"] is not None])
    axes[0].set_ylim(max(0.0, lo - 0.05), 1.0)
    axes[1].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 repeats (a check of the script)")
    parser.add_argument("--repeats", type=int, default=None, help="splits per data set and rate (default 10)")
    parser.add_argument("--sonar", action="store_true", help="add KEEL sonar (208 × 60)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--output", type=Path, default=OUT)
    parser.add_argument("--figure", type=Path, default=FIGURE)
    parser.add_argument("--page", type=Path, default=PAGE, help="the docs page whose generated block is rewritten")
    args = parser.parse_args(argv)
    repeats = args.repeats or (2 if args.quick else 10)
    if args.quick and args.output == OUT:  # a check of the script leaves the committed results alone
        build = ROOT / "build"
        args.output, args.figure, args.page = build / "missing_quick.md", build / "missing_quick.png", None
    if repeats < 1 or args.jobs < 1:
        parser.error("--repeats and --jobs must be positive")
    names = ["wdbc", "pima"] + (["sonar"] if args.sonar else [])
    tasks = [(name, rate, k) for name in names for rate in RATES for k in range(repeats)]
    load = os.getloadavg()
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = [r for chunk in pool.map(run_split, tasks) for r in chunk]
    wall = time.perf_counter() - t0
    robust = [r["result"] for r in rows if r["method"].startswith("uncertain") and r["result"] is not None]
    fitted = [r["result"] for r in rows if r["result"] is not None]
    figure(rows, args.figure)
    command = "python benchmarks/bench_missing.py" + (" --quick" if args.quick else "") + \
        (f" --repeats {args.repeats}" if args.repeats else "") + (" --sonar" if args.sonar else "")
    complete = {(r["data"], r["rate"]): r["complete_rows"] for r in rows}
    share = ", ".join(f"{d} {rate:.0%}: {np.mean([v for k, v in complete.items() if k == (d, rate)]):.1%}"
                      for d, rate in sorted({(r["data"], r["rate"]) for r in rows},
                                            key=lambda k: (k[0] != "wdbc", k[0], k[1])))
    import scipy

    text = f"""## Missing values: the robust model against mean imputation and complete-case analysis

Command: `{command}`  (total {wall / 60:.1f} min, {args.jobs} worker processes, \
{sum(r["cpu"] for r in rows) / 60:.1f} min of CPU in the workers)

- machine: {os.cpu_count()} cores, {platform.machine()}; load average at start {load[0]:.2f}, {load[1]:.2f}, \
{load[2]:.2f}
- Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}

Protocol: {repeats} stratified 75 / 25 splits per data set and rate; every entry of the training and the
test part removed independently with probability 10 % or 30 % (missing completely at random), features
standardized with the observed training values; hinge loss, `l2 = {L2}`, free intercept, Clarabel. Methods:
`RobustSVC(missing="uncertain", missing_level=…)` (EM Gaussian of the training rows, an ellipsoid over each
row's missing coordinates with that coverage, test rows filled with their conditional means),
`missing="conditional_mean"` (the same EM conditional means, no sets), `missing="mean"` (column means),
`missing="drop"` (complete training rows only, test rows filled with their column means), and the same
model on the data with nothing removed. Calibration: Platt's sigmoid on 5-fold out-of-fold decision values
of the training part; Brier score and log loss on the test part.
Mean ± standard deviation over the repeats; "repeats fitted" counts the splits where the method had two
classes to fit on (complete case needs complete rows). Share of complete training rows: {share}.

{table(rows, repeats)}

Every fit of the per-sample-ellipsoid models ({len(robust) * (FOLDS + 1)} fits, the inner folds
included) ended {"optimal" if all(g["all_optimal"] for g in robust) else "NOT always optimal"}, with a largest
certified duality gap of {max(g["max_gap"] for g in robust):.1e} (all models: {max(g["max_gap"] for g in fitted):.1e}).

![missing values comparison](docs/figures/{args.figure.name})
"""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    if args.page is not None:
        write_block(args.page, text.split("\n", 1)[1].replace("](docs/figures/", "](figures/"))
    print(text)
    return 0


def write_block(page: Path, body: str) -> None:
    """Replace the generated block of ``page`` (between :data:`BEGIN` and :data:`END`) by ``body``."""
    text = page.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise ValueError(f"{page} has no block marked {BEGIN!r} … {END!r}")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    page.write_text(f"{head}{BEGIN}\n{body.strip()}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
