"""Helpers shared by the reproductions: progress bars, the page they write and where it goes."""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["DEFAULT_OUTPUT_DIR", "add_output_arguments", "cpu_time", "figure_link", "machine", "output_paths",
           "progress_bar", "script_main", "timed", "write_generated"]

BEGIN = "<!-- BEGIN GENERATED: {name} -->"
END = "<!-- END GENERATED: {name} -->"


#: where ``robustsvm reproduce NAME`` writes when neither ``--page`` nor ``--figures`` is given: a folder of the
#: current directory (never the package's source tree)
DEFAULT_OUTPUT_DIR = "reproductions"


def add_output_arguments(parser: argparse.ArgumentParser, stem: str, *, page_flags=("--page",),
                         figures: bool = True) -> None:
    """``--output-dir DIR`` (default ``./reproductions``) and the explicit ``--page PATH`` / ``--figures DIR``."""
    parser.add_argument("--output-dir", default=DEFAULT_OUTPUT_DIR, metavar="DIR",
                        help=f"folder for the page ({stem}.md){' and its figures (figures/)' if figures else ''}; "
                             f"default ./{DEFAULT_OUTPUT_DIR}")
    parser.add_argument(*page_flags, dest="page", default=None, metavar="PATH",
                        help=f"write the page here instead of DIR/{stem}.md (the documentation uses "
                             f"docs/reproductions/{stem}.md)")
    if figures:
        parser.add_argument("--figures", default=None, metavar="DIR",
                            help="write the figures here instead of DIR/figures (the documentation uses docs/figures)")


def script_main(name: str, doc: str, add_arguments, run, argv: list[str] | None) -> int:
    """``python -m robustsvm.reproduce.NAME``: ``argv`` parsed with the reproduction's own options (the same as
    ``robustsvm reproduce NAME``), then ``run``; its exit status."""
    parser = argparse.ArgumentParser(prog=f"robustsvm reproduce {name}", description=doc.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


def output_paths(stem: str, output_dir: str | os.PathLike | None, page: str | os.PathLike | None = None,
                 figures: str | os.PathLike | None = None, *, make_figures: bool = True) -> tuple[Path, Path]:
    """``(page, figure folder)``: ``page`` / ``figures`` when given, else ``output_dir/<stem>.md`` and
    ``output_dir/figures``. The figure folder is created when ``make_figures``."""
    base = Path(output_dir if output_dir is not None else DEFAULT_OUTPUT_DIR)
    page_path = Path(page) if page is not None else base / f"{stem}.md"
    fig_path = Path(figures) if figures is not None else base / "figures"
    if make_figures:
        fig_path.mkdir(parents=True, exist_ok=True)
    return page_path, fig_path


def figure_link(page: Path, figure: Path) -> str:
    """The link from ``page`` to ``figure`` (relative, with forward slashes), as the markdown page needs it."""
    return Path(os.path.relpath(Path(figure).resolve(), Path(page).resolve().parent)).as_posix()


def write_generated(page: Path, name: str, text: str, title: str) -> None:
    """Replace the block between the ``name`` markers of ``page`` by ``text`` (create the page if needed) and say
    on stderr where it went.

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
    print(f"written to {page}", file=sys.stderr)


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
