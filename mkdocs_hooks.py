"""MkDocs hooks: the navigation in step with the pages that exist, and MathJax bundled offline.

Entries of ``mkdocs.yml``'s nav whose file is missing are dropped (a strict
build would fail on them), every page under ``docs/derivations/`` and
``docs/reproductions/`` joins its section (before the section's listed pages),
and any other top-level page not in the nav joins the "Concepts" section; pages
are titled by their first heading, without Markdown code marks.
The Sphinx roles of the docstrings (``:func:`name```) render as plain code spans.

The formulas are typeset in the browser by MathJax, served by the site itself: the
build takes MathJax's npm distribution (version ``MATHJAX_VERSION``) from a local
cache, installing it there with ``npm`` when missing, and adds its single-file
TeX-to-SVG component to the site as ``javascripts/mathjax/tex-svg-full.js``. No page
loads anything from another host. ``ROBUSTSVM_MATHJAX`` may name that file instead
(for a machine without npm).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

_SECTIONS = {"Derivations": "derivations", "Reproductions": "reproductions"}

MATHJAX_VERSION = "3.2.2"
MATHJAX_FILE = "es5/tex-svg-full.js"
MATHJAX_URI = "javascripts/mathjax/tex-svg-full.js"


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip().replace("`", "")
    return path.stem.replace("_", " ").capitalize()


def _cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "robustsvm-docs" / f"mathjax-{MATHJAX_VERSION}"


def mathjax_script() -> Path:
    """Path of MathJax's TeX-to-SVG component, installed from the npm registry when missing."""
    from mkdocs.exceptions import PluginError

    given = os.environ.get("ROBUSTSVM_MATHJAX")
    if given:
        path = Path(given)
        if not path.is_file():
            raise PluginError(f"ROBUSTSVM_MATHJAX names {path}, which does not exist")
        return path
    prefix = _cache()
    path = prefix / "node_modules" / "mathjax" / MATHJAX_FILE
    if path.is_file():
        return path
    npm = shutil.which("npm")
    if npm is None:
        raise PluginError("the docs bundle MathJax from the npm registry, and npm is not installed "
                          "(apt-get install npm), or set ROBUSTSVM_MATHJAX to a copy of " + MATHJAX_FILE)
    prefix.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(prefix),
                             f"mathjax@{MATHJAX_VERSION}"], capture_output=True, text=True, timeout=600)
    if result.returncode != 0 or not path.is_file():
        raise PluginError(f"npm install mathjax@{MATHJAX_VERSION} failed:\n{result.stderr}")
    return path


def _prune(items: list, docs: Path) -> list:
    out = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, list):
                if title in _SECTIONS:
                    folder = docs / _SECTIONS[title]
                    pages = sorted(folder.glob("*.md")) if folder.is_dir() else []
                    value = [{_title(p): f"{_SECTIONS[title]}/{p.name}"} for p in pages] + value
                value = _prune(value, docs)
                if value:
                    out.append({title: value})
            elif (docs / value).is_file():
                out.append(item)
        elif isinstance(item, str) and (docs / item).is_file():
            out.append(item)
    return out


def _files(items: list) -> set[str]:
    out: set[str] = set()
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            out |= _files(value)
        else:
            out.add(value)
    return out


def on_config(config, **kwargs):
    docs = Path(config["docs_dir"])
    if config.get("nav"):
        nav = _prune(config["nav"], docs)
        listed = _files(nav)
        extra = [{_title(p): p.name} for p in sorted(docs.glob("*.md")) if p.name not in listed]
        if extra:
            for item in nav:
                if isinstance(item, dict) and "Concepts" in item:
                    item["Concepts"].extend(extra)
                    break
            else:
                nav.extend(extra)
        config["nav"] = nav
    if MATHJAX_URI not in [str(getattr(js, "path", js)) for js in config["extra_javascript"]]:
        raise ValueError(f"mkdocs.yml: extra_javascript must load {MATHJAX_URI}")
    return config


def on_files(files, config, **kwargs):
    """Add the bundled MathJax to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, MATHJAX_URI, abs_src_path=str(mathjax_script())))
    return files


_SPHINX_ROLE = re.compile(r":(?:meth|func|class|mod|attr|data|exc|obj):(?=<code>)")


def on_page_content(html, **kwargs):
    """Docstrings use Sphinx roles (:func:`name`); the API pages show just the code span."""
    return _SPHINX_ROLE.sub("", html)
