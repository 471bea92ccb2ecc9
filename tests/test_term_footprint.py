"""What adding a term touches (docs/architecture.md, the recipes): each term is reached through generic interfaces.

For each term the package's source is read (``ast``) and every module outside the term's own that references it
is listed: an import of one of its modules, one of its names as an identifier, attribute or keyword, or a string
equal to one of them (a dispatch such as ``type(x).__name__ == "Wasserstein"``; prose in docstrings is not a
reference). The set must be exactly the one below, each module with its role, and at most two modules may be a
public name or a registration point: everything else reaches the term through its base class.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "robustsvm"

PUBLIC, REGISTRATION, BACKEND, FRONT_END = "public name", "registration", "its backend", "front end that uses it"


@dataclass(frozen=True)
class Term:
    #: the term's own modules (dotted, from the package root)
    modules: frozenset
    #: its names: classes and functions other modules would import or dispatch on
    names: frozenset
    #: module (path from the repository root) → role, every module outside its own that references it
    references: dict
    #: strings that dispatch on it besides its names (a loss's short name)
    strings: frozenset = field(default_factory=frozenset)


TERMS = {
    "the Wasserstein ball": Term(
        modules=frozenset({"robustsvm.uncertainty.wasserstein", "robustsvm.duals.wasserstein"}),
        names=frozenset({"Wasserstein", "WorstCaseDistribution", "wasserstein", "wasserstein_bound",
                         "multipliers_from_point"}),
        references={
            "robustsvm/__init__.py": PUBLIC,  # rs.Wasserstein
            "robustsvm/uncertainty/__init__.py": REGISTRATION,  # imports it: DISTRIBUTIONAL_TYPES holds it (JSON)
        },
    ),
    "the logistic loss": Term(
        modules=frozenset({"robustsvm.terms.logistic"}),
        names=frozenset({"Logistic"}),
        strings=frozenset({"logistic"}),
        references={
            "robustsvm/__init__.py": PUBLIC,  # rs.Logistic
            "robustsvm/terms/__init__.py": REGISTRATION,  # imports it: LOSSES holds it (names, JSON)
            "robustsvm/backends/logistic_dcd.py": BACKEND,  # Needs(losses={"logistic"})
            "robustsvm/backends/logistic_newton.py": BACKEND,
        },
    ),
    "the sum of sets": Term(
        modules=frozenset({"robustsvm.uncertainty.sum"}),
        names=frozenset({"SetSum"}),
        references={
            "robustsvm/uncertainty/base.py": PUBLIC,  # the operator A + B, which is how the sum is written
            "robustsvm/uncertainty/__init__.py": REGISTRATION,  # imports it: SET_TYPES holds it (JSON, the operator)
        },
    ),
    "the ordering priors": Term(
        modules=frozenset({"robustsvm.priors.ordering"}),
        names=frozenset({"OrderingPrior", "ChainPrior", "Increasing", "Decreasing", "Order", "Equal", "ChainStructure",
                         "chain_structure", "chain_prox_into", "check_feasible", "check_chain_rows", "WORK_ROWS"}),
        references={
            "robustsvm/__init__.py": PUBLIC,  # rs.Increasing, rs.Decreasing, rs.Order, rs.Equal
            "robustsvm/priors/__init__.py": REGISTRATION,  # imports it: PRIOR_TYPES holds them, its row check runs
            "robustsvm/backends/ordered_dcd.py": BACKEND,  # ordered-dcd: the chains' prox and multipliers
        },
    ),
    "the shape priors": Term(
        modules=frozenset({"robustsvm.priors.shape"}),
        names=frozenset({"ShapePrior", "Convex", "Concave"}),
        references={
            "robustsvm/__init__.py": PUBLIC,  # rs.Convex, rs.Concave
            "robustsvm/priors/__init__.py": REGISTRATION,  # imports it: PRIOR_TYPES holds them
        },
    ),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.ImportFrom, name: str, path: Path) -> set[str]:
    """The dotted modules (and module.name candidates) an ``ImportFrom`` in module ``name`` reads."""
    if node.level:
        base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return {target} | {f"{target}.{alias.name}" for alias in node.names}


def references(source: str, term: Term, name: str = "robustsvm.x", path: Path = ROOT / "x.py") -> list[str]:
    """What in ``source`` (the module ``name`` at ``path``) references ``term``: one line per reference."""
    found = []
    dispatch = term.names | term.strings
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            hit = _imported(node, name, path) & term.modules
            hit |= {a.name for a in node.names} & term.names
            found += [f"line {node.lineno}: imports {h}" for h in sorted(hit)]
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in term.modules]
        elif isinstance(node, ast.Name) and node.id in term.names:
            found.append(f"line {node.lineno}: name {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in term.names:
            found.append(f"line {node.lineno}: attribute .{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg in term.names:
            found.append(f"line {node.lineno}: keyword {node.arg}=")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in dispatch:
            found.append(f"line {node.lineno}: string {node.value!r}")
    return found


def footprint(term: Term) -> dict[str, list[str]]:
    """Module path → its references to ``term``, for every package module outside the term's own."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = _module_name(path)
        if name in term.modules:
            continue
        refs = references(path.read_text(), term, name, path)
        if refs:
            out[str(path.relative_to(ROOT.parent))] = refs
    return out


@pytest.mark.parametrize("label", sorted(TERMS))
def test_each_term_is_reached_only_where_listed(label):
    term = TERMS[label]
    found = footprint(term)
    extra = {m: refs for m, refs in found.items() if m not in term.references}
    assert not extra, (f"{label} is referenced outside its modules, its public name and its registration: {extra}; "
                       f"reach it through its base class (docs/architecture.md) or list the module with its role")
    missing = sorted(set(term.references) - set(found))
    assert not missing, f"{label}: listed modules that no longer reference it (update the list): {missing}"


@pytest.mark.parametrize("label", sorted(TERMS))
def test_at_most_two_modules_name_a_term_to_exist(label):
    roles = [role for role in TERMS[label].references.values() if role in (PUBLIC, REGISTRATION)]
    assert len(roles) <= 2, (label, roles)


@pytest.mark.parametrize("code", [
    "from ..uncertainty.wasserstein import Wasserstein\n",
    "from ..uncertainty import Wasserstein\n",
    "def f(x):\n    return isinstance(x, rs.Wasserstein)\n",
    "def f(x):\n    return type(x).__name__ == 'Wasserstein'\n",
    "def f(model):\n    return model.wasserstein is not None\n",
    "NEEDS = needs(wasserstein=True)\n",
    "import robustsvm.duals.wasserstein\n",
])
def test_the_scan_sees_a_dispatch_on_the_class(code):
    assert references(code, TERMS["the Wasserstein ball"], "robustsvm.backends.x", ROOT / "backends" / "x.py")


def test_the_scan_ignores_prose():
    code = '"""Solves a Wasserstein ball with kappa = inf."""\nMESSAGE = "a Wasserstein ball needs the hinge"\n'
    assert not references(code, TERMS["the Wasserstein ball"])
