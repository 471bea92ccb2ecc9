"""The documentation builds in strict mode with no network, and its pieces are consistent."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def build(config: Path, site: Path):
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(site)], capture_output=True, text=True, timeout=600, cwd=config.parent)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    result = build(ROOT / "mkdocs.yml", out)
    assert result.returncode == 0, result.stderr
    return out


def test_strict_build_renders_pages_and_api(site):
    for page in ("index.html", "getting_started/index.html", "signs/index.html", "backends/index.html",
                 "certificates/index.html", "benchmarks/index.html", "api/io/index.html"):
        assert (site / page).is_file(), page
    api = (site / "api" / "io" / "index.html").read_text(encoding="utf-8")
    assert "robustsvm.formats.io.validate" in api and "data_fingerprint" in api  # rendered from the docstrings
    problem = (site / "api" / "problem" / "index.html").read_text(encoding="utf-8")
    assert "robustsvm.problem.Problem" in problem and "robustsvm.solution.Solution" in problem
    assert ":meth:<code>" not in api and ":func:<code>" not in problem  # Sphinx roles cleaned up


def test_site_loads_nothing_from_another_host_and_ships_mathjax(site):
    """Formulas typeset offline: MathJax is part of the site and every page loads it from there."""
    mathjax = site / "javascripts" / "mathjax" / "tex-svg-full.js"
    assert mathjax.is_file() and mathjax.stat().st_size > 1_000_000
    assert b"MathJax" in mathjax.read_bytes()[:200_000]
    pages = list(site.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        html = page.read_text(encoding="utf-8")
        remote = re.findall(r"<(?:script|link)\b[^>]*(?:src|href)=\"((?:https?:)?//[^\"]+)\"", html)
        assert not remote, f"{page.relative_to(site)} loads {remote}"
        if "arithmatex" in html:
            assert "javascripts/mathjax/tex-svg-full.js" in html, page.relative_to(site)
    derivation = (site / "derivations" / "robust_counterpart" / "index.html").read_text(encoding="utf-8")
    assert derivation.count('class="arithmatex"') > 10


def test_navigation_titles_have_no_markdown(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    titles = [t.strip() for t in re.findall(r'<span class="md-ellipsis">\s*([^<]*)', index)]
    assert "Dual coordinate descent (dcd) for sign-constrained SVMs" in titles  # its heading has `dcd`
    assert not [t for t in titles if "`" in t]
    # top-level pages sit in their sections: Notebooks under Examples, Benchmarks with the reproductions
    assert titles.index("Examples") < titles.index("Notebooks") < titles.index("Derivations")
    assert titles.index("Reproductions") < titles.index("Benchmarks") < titles.index("API reference")


def test_derivation_and_reproduction_pages_join_the_navigation(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    for folder in ("derivations", "reproductions"):
        for page in sorted((DOCS / folder).glob("*.md")):
            assert (site / folder / page.stem / "index.html").is_file(), page
            assert f"{folder}/{page.stem}/" in index, f"{page} is missing from the navigation"


def test_every_image_in_the_docs_exists():
    images = []
    for page in DOCS.rglob("*.md"):
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if not target.startswith("http"):
                images.append((page, (page.parent / target).resolve()))
    assert images  # the notebooks' figures are shown
    missing = [f"{page.relative_to(ROOT)} -> {img}" for page, img in images if not img.is_file()]
    assert not missing, missing
    shown = {img.name for _, img in images}
    render = _load("render_figures", ROOT / "notebooks" / "render_figures.py")
    for names in render.FIGURES.values():
        for name in names:
            assert f"{name}.png" in shown, f"figure {name}.png is not shown in the docs"


def test_broken_reference_fails_the_strict_build(tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(DOCS, copy / "docs", ignore=shutil.ignore_patterns("figures"))
    (copy / "docs" / "figures").mkdir()
    for name in ("mkdocs.yml", "mkdocs_hooks.py"):
        shutil.copy(ROOT / name, copy / name)
    shutil.copytree(ROOT / "robustsvm", copy / "robustsvm", ignore=shutil.ignore_patterns("__pycache__"))
    page = copy / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [a page that does not exist](nowhere.md).\n")
    result = build(copy / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "nowhere.md" in result.stderr


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_page_assembles_every_fragment(tmp_path):
    assemble = _load("assemble", ROOT / "benchmarks" / "assemble.py")
    results = tmp_path / "results"
    results.mkdir()
    (results / "zeta.md").write_text("## Zeta topic\n\nFigure: `docs/figures/zeta.png`.\n")
    (results / "grid.md").write_text("## Grid\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![g](docs/figures/g.png)\n")
    (results / "dcd.md").write_text("## DCD\n\nCommand: `python benchmarks/x.py`\n")
    docs = tmp_path / "docs"
    (docs / "figures").mkdir(parents=True)
    (docs / "figures" / "zeta.png").write_bytes(b"png")
    page = assemble.assemble(results, docs)
    assert page.startswith("# Benchmarks")
    # known topics first in their order, unknown ones after
    assert page.index("## DCD") < page.index("## Grid") < page.index("## Zeta topic")
    assert "![g](figures/g.png)" in page  # repository path made relative to docs/
    assert "![zeta](figures/zeta.png)" in page  # a named, existing figure is shown
    assert "| 1 | 2 |" in page
    out = tmp_path / "benchmarks.md"
    assert assemble.main(["--results", str(results), "--output", str(out), "--docs", str(docs)]) == 0
    assert out.read_text() == page
    assert assemble.main(["--results", str(results), "--output", str(out), "--docs", str(docs), "--check"]) == 0
    (results / "dcd.md").write_text("## DCD\n\nnew numbers\n")
    assert assemble.main(["--results", str(results), "--output", str(out), "--docs", str(docs), "--check"]) == 1
    (results / "bad.md").write_text("no heading\n")
    with pytest.raises(ValueError, match="heading"):
        assemble.assemble(results, docs)


def test_benchmark_page_from_committed_fragments_only(tmp_path):
    assemble = _load("assemble", ROOT / "benchmarks" / "assemble.py")
    out = tmp_path / "benchmarks.md"
    assert assemble.main(["--committed", "--output", str(out)]) == 0
    tracked = subprocess.run(["git", "ls-files", "benchmarks/results", "docs/figures"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    page = out.read_text()
    for name in re.findall(r"\]\(figures/([\w.\-]+)\)", page):
        assert f"docs/figures/{name}" in tracked, name
    for fragment in (t for t in tracked if t.startswith("benchmarks/results/") and t.endswith(".md")):
        committed = subprocess.run(["git", "show", f"HEAD:{fragment}"], cwd=ROOT, capture_output=True, text=True,
                                   check=True).stdout
        first = next(line for line in committed.splitlines() if line.startswith("#"))
        assert first in page, fragment


def test_no_control_characters_in_the_pages():
    """A backslash escape lost on the way to a page (``\\a`` of ``\\approx`` written as a bell) breaks its formula
    in the browser but not the build: no page may hold a control character other than tab and newline."""
    bad = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
    found = [f"{page.relative_to(ROOT)}:{n}" for page in sorted(DOCS.rglob("*.md"))
             for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if bad.search(line)]
    assert not found, f"control characters in {found}"
