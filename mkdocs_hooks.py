"""MkDocs hook: keep the navigation in step with the pages that exist.

Entries of ``mkdocs.yml``'s nav whose file is missing are dropped (a strict
build would fail on them), every page under ``docs/derivations/`` and
``docs/reproductions/`` joins its section, and any other top-level page not
in the nav joins the "Concepts" section; pages are titled by their first heading.
The Sphinx roles of the docstrings (``:func:`name```) render as plain code spans.
"""

from __future__ import annotations

import re
from pathlib import Path

_SECTIONS = {"Derivations": "derivations", "Reproductions": "reproductions"}


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("_", " ").capitalize()


def _prune(items: list, docs: Path) -> list:
    out = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, list):
                if title in _SECTIONS:
                    folder = docs / _SECTIONS[title]
                    pages = sorted(folder.glob("*.md")) if folder.is_dir() else []
                    value = [{_title(p): f"{_SECTIONS[title]}/{p.name}"} for p in pages]
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
    return config


_SPHINX_ROLE = re.compile(r":(?:meth|func|class|mod|attr|data|exc|obj):(?=<code>)")


def on_page_content(html, **kwargs):
    """Docstrings use Sphinx roles (:func:`name`); the API pages show just the code span."""
    return _SPHINX_ROLE.sub("", html)
