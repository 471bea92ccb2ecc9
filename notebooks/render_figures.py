"""Execute every notebook and write its figures to ``docs/figures/`` (or a directory given).

    .venv/bin/python notebooks/render_figures.py [OUTPUT_DIR] [NOTEBOOK ...]

The notebooks are the jupytext percent-format ``.py`` files of this folder; each is
converted, executed in a fresh kernel with ``FIGURE_DIR`` set, and never stored with
outputs. ``tests/test_notebooks.py`` runs the same function into a temporary directory.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOKS = sorted(p for p in HERE.glob("[0-9][0-9]_*.py"))

#: the figures each notebook must write (the documentation shows them)
FIGURES = {
    "01_the_language": ["nb1_cone_growth"],
    "02_sign_constraints": ["nb2_convergence", "nb2_weights", "nb2_pairwise_auc"],
    "03_m3_kernels": ["nb3_m3_coefficients", "nb3_m3_objective"],
    "04_robust_svms": ["nb4_boundaries", "nb4_accuracy_radius", "nb4_features_selected", "nb4_pq_convergence"],
    "05_missing_values": ["nb5_coverage", "nb5_one_set", "nb5_accuracy_level"],
}


KERNEL_NAME = "robustsvm-python"


def _kernelspec(root: Path) -> Path:
    """A kernelspec that runs this very interpreter (not whatever "python3" a user has installed)."""
    spec = root / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python (robustsvm)",
        "language": "python",
    }))
    return root


def execute(path: Path, figure_dir: Path, timeout: int = 600):
    """Run one notebook in a fresh kernel (working directory: this folder); returns the executed notebook."""
    import jupytext
    from jupyter_client.kernelspec import KernelSpecManager
    from nbclient import NotebookClient

    nb = jupytext.read(path)
    old = {k: os.environ.get(k) for k in ("FIGURE_DIR", "MPLBACKEND")}
    os.environ["FIGURE_DIR"] = str(Path(figure_dir).resolve())
    os.environ["MPLBACKEND"] = "Agg"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            specs = KernelSpecManager(kernel_dirs=[str(_kernelspec(Path(tmp)) / "kernels")])
            client = NotebookClient(nb, timeout=timeout, kernel_name=KERNEL_NAME,
                                    kernel_manager_class=_manager_class(specs),
                                    resources={"metadata": {"path": str(HERE)}})
            client.execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def _manager_class(specs):
    """A KernelManager class that looks kernels up in ``specs`` only."""
    from jupyter_client.manager import KernelManager

    class _Manager(KernelManager):
        def _kernel_spec_manager_default(self):
            return specs

    return _Manager


def main(argv: list[str]) -> int:
    out = (Path(argv[0]) if argv else HERE.parent / "docs" / "figures").resolve()
    chosen = [p for p in NOTEBOOKS if not argv[1:] or p.stem in argv[1:]]
    for path in chosen:
        start = time.perf_counter()
        execute(path, out)
        print(f"{path.name}: {time.perf_counter() - start:.1f} s", flush=True)
    missing = [f"{name}.png" for p in chosen for name in FIGURES.get(p.stem, []) if not (out / f"{name}.png").is_file()]
    if missing:
        print("missing figures: " + ", ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
