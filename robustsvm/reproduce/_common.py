"""Helpers shared by the reproductions: progress bars, the docs page and where things are written."""

from __future__ import annotations

import contextlib
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np

__all__ = ["cpu_time", "default_paths", "machine", "progress_bar", "repo_docs", "timed", "write_generated"]

BEGIN = "<!-- BEGIN GENERATED: {name} -->"
END = "<!-- END GENERATED: {name} -->"


def repo_docs() -> Path | None:
    """The ``docs/`` folder of the source tree the package is imported from, if there is one."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    return docs if (docs / "reproductions").is_dir() else None


def default_paths(stem: str, page: str | None, figures: str | None) -> tuple[Path, Path]:
    """``(page, figure folder)``: the given ones or ``docs/reproductions/<stem>.md`` and ``docs/figures``."""
    docs = repo_docs()
    if page is None or figures is None:
        if docs is None:
            raise ValueError("no docs/ folder next to the package: pass --page PATH and --figures DIR")
    page_path = Path(page) if page is not None else docs / "reproductions" / f"{stem}.md"
    fig_path = Path(figures) if figures is not None else docs / "figures"
    fig_path.mkdir(parents=True, exist_ok=True)
    return page_path, fig_path


def write_generated(page: Path, name: str, text: str, title: str) -> None:
    """Replace the block between the ``name`` markers of ``page`` by ``text`` (create the page if needed).

    The prose around the markers is left alone, so a page can explain what the
    generated tables mean and still be refreshed by the command.
    """
    begin, end = BEGIN.format(name=name), END.format(name=name)
    block = f"{begin}\n{text.rstrip()}\n{end}"
    old = page.read_text(encoding="utf-8") if page.is_file() else f"# {title}\n\n{begin}\n{end}\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        _, tail = rest.split(end, 1)
        new = head + block + tail
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(new, encoding="utf-8")


def progress_bar(total: int, desc: str, enabled: bool = True):
    """A tqdm bar on stderr (a do-nothing stand-in when disabled or tqdm is missing)."""
    if enabled:
        try:
            from tqdm.auto import tqdm

            return tqdm(total=total, desc=desc)
        except ImportError:  # pragma: no cover - tqdm is in the "parallel" extra
            pass
    return _NoBar()


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass

    def close(self) -> None:
        pass


def cpu_time() -> float:
    """CPU seconds (user + system) of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@contextlib.contextmanager
def timed():
    """Yields a dict that gets ``wall`` and ``cpu`` seconds of the block."""
    out: dict[str, float] = {}
    w, c = time.perf_counter(), cpu_time()
    try:
        yield out
    finally:
        out["wall"] = time.perf_counter() - w
        out["cpu"] = cpu_time() - c


def machine() -> str:
    """One line naming the machine and the versions that matter for timings."""
    import scipy

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.machine()} ({platform.processor() or 'cpu'}), {os.cpu_count()} cores, load {load:.1f}; "
            f"Python {platform.python_version()}, NumPy {np.__version__}, SciPy {scipy.__version__}")
