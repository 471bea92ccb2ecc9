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


def test_every_notebook_is_listed_and_stored_without_outputs():
    stems = [p.stem for p in render.NOTEBOOKS]
    assert stems == sorted(render.FIGURES)
    assert not list((ROOT / "notebooks").glob("*.ipynb")) or all(
        not any(cell.get("outputs") for cell in json.loads(p.read_text())["cells"])
        for p in (ROOT / "notebooks").glob("*.ipynb")
    )
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
