"""Assemble ``docs/benchmarks.md`` from the fragments ``benchmarks/results/*.md``.

    .venv/bin/python benchmarks/assemble.py [--output docs/benchmarks.md] [--check] [--committed]

Each benchmark script writes its own fragment (a markdown section that records the
command, the machine and the numbers of one run). This script puts them on one page in a
fixed order (unknown topics last, alphabetically), turns repository paths of figures into
links the documentation site resolves, and shows every figure a fragment names. With
``--check`` it writes nothing and exits with status 1 when the page is out of date; with
``--committed`` it reads only what is committed (fragments and figures of ``HEAD``), so
the page never links a file a fresh clone lacks.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"

#: topics in the order the page presents them (file stems of benchmarks/results/*.md)
ORDER = ["suite", "performance", "dcd", "convergence", "compile", "spectrahedron", "pq", "grid", "distributed",
         "distributed_spark"]

HEADER = """# Benchmarks

Every number on this page was measured by a script in `benchmarks/`, in one run per
section, on the machine that section describes; each section states the command that
produced it. Competing solvers are timed in the same run so that the ratios hold even
where the absolute times would differ on another machine. Timings are never asserted in
the test suite; correctness is (against Clarabel, SCS, liblinear and CVXPY models written
out in the tests).

To regenerate: run the benchmark scripts (each writes its fragment to
`benchmarks/results/<topic>.md`), then `.venv/bin/python benchmarks/assemble.py`.
"""

_REPO_FIGURE = re.compile(r"\]\((?:\.\./)*(?:\./)?docs/figures/")
_NAMED_FIGURE = re.compile(r"docs/figures/([\w.\-]+\.(?:png|svg|jpg))")


def fragments(results: Path = RESULTS) -> list[Path]:
    """The fragment files, in page order."""
    files = {p.stem: p for p in sorted(results.glob("*.md"))}
    ordered = [files.pop(stem) for stem in ORDER if stem in files]
    return ordered + [files[k] for k in sorted(files)]


def render_fragment(text: str, docs: Path = DOCS) -> str:
    """One fragment as it appears on the page.

    Links ``](docs/figures/x.png)`` (from the repository root) become ``](figures/x.png)``
    (from ``docs/``); a figure that is only named (``docs/figures/x.png`` in the text) and
    exists is shown after the section.
    """
    text = text.strip("\n")
    if not text.lstrip().startswith("#"):
        raise ValueError("a benchmark fragment must start with a markdown heading")
    text = _REPO_FIGURE.sub("](figures/", text)
    shown = set(re.findall(r"\]\(figures/([\w.\-]+)\)", text))
    extra = []
    for name in dict.fromkeys(_NAMED_FIGURE.findall(text)):
        if name not in shown and (docs / "figures" / name).is_file():
            extra.append(f"![{Path(name).stem.replace('_', ' ')}](figures/{name})")
    text = re.sub(r"`?docs/figures/([\w.\-]+)`?", lambda m: f"[`{m.group(1)}`](figures/{m.group(1)})"
                  if (docs / "figures" / m.group(1)).is_file() else m.group(0), text)
    return text + ("\n\n" + "\n\n".join(extra) if extra else "")


def assemble(results: Path = RESULTS, docs: Path = DOCS) -> str:
    """The whole page."""
    parts = [HEADER.strip()]
    files = fragments(results)
    if files:
        parts.append("Sections: " + ", ".join(_title(p) for p in files) + ".")
    else:
        parts.append("No benchmark has been run yet: `benchmarks/results/` is empty.")
    parts += [render_fragment(p.read_text(encoding="utf-8"), docs) for p in files]
    return "\n\n".join(parts) + "\n"


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return path.stem


def _export_committed(tmp: Path, results: Path, docs: Path) -> tuple[Path, Path]:
    """Copies of the committed fragments and figures (``git archive HEAD``) under ``tmp``."""
    paths = [str(p.resolve().relative_to(ROOT)) for p in (results, docs / "figures")]
    archive = subprocess.run(["git", "archive", "HEAD", *paths], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp, filter="data")
    (tmp / paths[0]).mkdir(parents=True, exist_ok=True)
    return tmp / paths[0], tmp / Path(paths[1]).parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DOCS / "benchmarks.md")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--docs", type=Path, default=DOCS, help="the docs folder figures are resolved in")
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is out of date; write nothing")
    parser.add_argument("--committed", action="store_true",
                        help="use only the fragments and figures committed to git (HEAD), not work in progress")
    args = parser.parse_args(argv)
    if args.committed:
        with tempfile.TemporaryDirectory() as tmp:
            results, docs = _export_committed(Path(tmp), args.results, args.docs)
            page = assemble(results, docs)
    else:
        page = assemble(args.results, args.docs)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.is_file() else ""
        if current != page:
            print(f"{args.output} is out of date: run benchmarks/assemble.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(page, encoding="utf-8")
    print(f"wrote {args.output} with {page.count(chr(10) + '## ')} section(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
