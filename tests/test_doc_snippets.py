"""Every code block of the README and of the documentation runs as written.

Each page is one test: its ``python`` blocks run in order in one namespace (a page reads as
one session), its ``bash`` blocks run their ``robustsvm`` commands through
``robustsvm.cli.main``, all in a temporary directory; a command that takes minutes
(``reproduce``, ``bench``) is parsed, not run.  A warning raised by a snippet fails the test
(``filterwarnings("error")``): the examples use settings that converge.  Blocks of any other
language must be ``text`` (command synopses, printed output); an unlabelled block fails, so
no example escapes.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(`{3,})(\S*)", re.MULTILINE)
LANGUAGES = {"python", "bash", "text"}
# commands that take minutes (a paper's full experiment, the benchmark suite): their options are
# parsed and checked by the command line's own parser, and the reproduction tests run them
LONG = ("robustsvm reproduce ",)
# commands that build the environment the tests already run in: shown, not run
INSTALL = ("make ", "python -m venv", "python3 -m venv", ".venv/bin/pip ", "pip install ",
           ".venv/bin/python notebooks/")


def _fences(page: Path) -> list[str]:
    """Languages of the opening fences of ``page``, in order."""
    langs, inside = [], False
    for match in FENCE.finditer(page.read_text(encoding="utf-8")):
        if not inside:
            langs.append(match.group(2))
        inside = not inside
    assert not inside, f"{page}: unclosed code fence"
    return langs


def _run_shell(example) -> None:
    """Run each ``robustsvm`` command of a bash block in this process; install commands are only shown."""
    from robustsvm.cli.main import build_parser, main

    for raw in example.parsed.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith(INSTALL):
            continue
        argv = shlex.split(line, comments=True)
        if argv[0] != "robustsvm":
            raise AssertionError(f"line {example.line}: a shell example runs robustsvm or an install command: {line}")
        if line.startswith(LONG) and "--help" not in argv:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                try:
                    build_parser(argv[1:]).parse_args(argv[1:])
                except SystemExit as exc:
                    raise AssertionError(f"line {example.line}: `{line}` does not parse:\n{err.getvalue()}") from exc
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv[1:])
            except SystemExit as exc:  # --help
                status = exc.code or 0
        assert status == 0, f"line {example.line}: `{line}` exited {status}:\n{err.getvalue()}"


SYBIL = Sybil(parsers=[PythonCodeBlockParser(), CodeBlockParser("bash", _run_shell)])


def test_every_page_is_covered_and_every_block_labelled():
    unlabelled = {}
    for page in PAGES:
        langs = _fences(page)
        bad = [lang or "(none)" for lang in langs if lang not in LANGUAGES]
        if bad:
            unlabelled[str(page.relative_to(ROOT))] = bad
    assert not unlabelled, f"code blocks must be python, bash (run by this test) or text: {unlabelled}"
    executed = [p for p in PAGES if {"python", "bash"} & set(_fences(p))]
    assert len(executed) >= 8  # README, home, getting started, concept pages


@pytest.mark.filterwarnings("error")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("page", [p for p in PAGES if {"python", "bash"} & set(_fences(p))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    document = SYBIL.parse(page)
    examples = list(document.examples())
    assert len(examples) == sum(lang in ("python", "bash") for lang in _fences(page))
    try:
        for example in examples:
            example.evaluate()
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
