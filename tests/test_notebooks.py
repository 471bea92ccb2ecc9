"""Every notebook executes from its jupytext source and writes the figures the docs show.

The notebooks carry their own checks (asserts against a second solver, certificates,
monotonicity); a failing assert fails the execution here.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("render_figures", ROOT / "notebooks" / "render_figures.py")
render = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(render)


def _tracked_notebooks() -> list[Path]:
    """The ``.ipynb`` files the repository stores: ``make notebooks`` and running the notebooks write others
    (ignored by ``.gitignore``), which are the user's and may hold outputs."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return []
    listed = subprocess.run(["git", "ls-files", "--", "notebooks/*.ipynb"], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    return [ROOT / line for line in listed.stdout.splitlines() if line.strip()]


def test_every_notebook_is_listed_and_stored_without_outputs():
    stems = [p.stem for p in render.NOTEBOOKS]
    assert stems == sorted(render.FIGURES)
    assert all(not any(cell.get("outputs") for cell in json.loads(p.read_text())["cells"])
               for p in _tracked_notebooks())
    for p in render.NOTEBOOKS:
        assert "format_name: percent" in p.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", render.NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_and_writes_its_figures(path, tmp_path):
    nb = render.execute(path, tmp_path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    for name in render.FIGURES[path.stem]:
        png = tmp_path / f"{name}.png"
        assert png.is_file(), f"{path.name} did not write {png.name}"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_notebooks_convert_to_ipynb_and_the_extra_installs_jupyter(tmp_path):
    """`make notebooks` (jupytext --to ipynb) gives valid notebooks without outputs; Jupyter is in the extra."""
    import subprocess
    import sys
    import tomllib

    import nbformat

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = {req.split(">")[0].split("=")[0].split("[")[0].strip().lower() for req in extra["notebooks"]}
    assert {"jupytext", "nbconvert", "jupyterlab", "notebook", "ipykernel"} <= names
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "jupytext --to ipynb notebooks/0*.py" in makefile
    for p in render.NOTEBOOKS:
        (tmp_path / p.name).write_text(p.read_text(encoding="utf-8"), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "jupytext", "--to", "ipynb", *sorted(tmp_path.glob("0*.py"))],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for p in render.NOTEBOOKS:
        nb = nbformat.read(tmp_path / f"{p.stem}.ipynb", as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert len(code) >= 5 and not any(c.get("outputs") for c in code)
        assert any(c.cell_type == "markdown" for c in nb.cells)


def test_an_executed_notebook_beside_the_sources_does_not_fail_the_check():
    """docs/notebooks.md: `jupytext --to ipynb --execute` writes notebooks/NAME.ipynb with outputs; it is not
    stored (ignored by git), so the check above leaves it alone."""
    import nbformat

    path = ROOT / "notebooks" / "_executed_by_hand.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1", outputs=[
        nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1)])])
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    try:
        assert path not in _tracked_notebooks()
        test_every_notebook_is_listed_and_stored_without_outputs()
    finally:
        path.unlink()
