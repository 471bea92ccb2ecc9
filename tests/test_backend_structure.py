"""How the backends are put together: shared machinery in named modules, compiled kernels with few arguments.

* no module under ``robustsvm/backends/`` or ``robustsvm/distributed/`` (every folder with a module that registers a
  backend) imports a ``_private`` name from another module of the package, and no backend algorithm module (one
  that registers a backend) imports another one: what two backends share lives in a named module
  (``dual_ascent``, ``shared_set``, ``building_blocks``, ``_linalg``, the kernel modules);
* every numba-compiled function under ``robustsvm/backends/`` takes at most 12 arguments (the solve's arrays
  travel as a few named tuples).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import numba
import pytest

import robustsvm.backends as backends_pkg

BACKENDS = Path(backends_pkg.__file__).parent
PACKAGE = BACKENDS.parent
#: the folders whose modules register backends, by package
FOLDERS = {"robustsvm.backends": BACKENDS, "robustsvm.distributed": PACKAGE / "distributed"}
MAX_KERNEL_ARGUMENTS = 12


def _modules() -> list[str]:
    """The modules of :data:`FOLDERS`, as ``package.name``."""
    return sorted(f"{package}.{info.name}" for package, folder in FOLDERS.items()
                  for info in pkgutil.iter_modules([str(folder)]))


def _path(module: str) -> Path:
    package, name = module.rsplit(".", 1)
    return FOLDERS[package] / f"{name}.py"


def _imports(name: str, folder: Path = BACKENDS, package: str = "robustsvm.backends"):
    """``(module imported from, names)`` for every ``from … import …`` of module ``name`` of ``package`` (any
    depth); ``name`` may be the full ``package.name``."""
    if name.startswith("robustsvm."):
        package, name = name.rsplit(".", 1)
        folder = FOLDERS[package]
    tree = ast.parse((folder / f"{name}.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                source = f"{package}.{node.module}" if node.module else package
            elif node.level == 2:
                source = f"robustsvm.{node.module}" if node.module else "robustsvm"
            else:
                source = node.module or ""
            yield source, [alias.name for alias in node.names]


def _registers_a_backend(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register" for node in ast.walk(tree))


def test_every_module_that_registers_a_backend_is_scanned():
    registering = {path.relative_to(PACKAGE.parent) for path in PACKAGE.rglob("*.py") if _registers_a_backend(path)}
    scanned = {_path(m).relative_to(PACKAGE.parent) for m in _modules()}
    assert registering - {Path("robustsvm/backends/registry.py")} <= scanned, registering - scanned
    assert {Path("robustsvm/distributed/ipm.py"), Path("robustsvm/distributed/cocoa.py")} <= registering


@pytest.mark.parametrize("name", _modules())
def test_backend_modules_import_no_private_names(name):
    package = name.rsplit(".", 1)[0]
    bad = [f"{source}.{item}" for source, items in _imports(name) if source.startswith("robustsvm")
           for item in items if item.startswith("_") and item != "__future__"
           and f"{source}.{item}" != f"{package}.{item}"]  # `from . import _kernels` is a module of its package
    bad += [source for source, _ in _imports(name) if package == "robustsvm.distributed"
            and source.startswith("robustsvm.backends._")]  # the distributed backends use public modules only
    assert not bad, f"{name} imports private names: {bad}"


def test_the_private_import_check_sees_a_borrowed_name(tmp_path):
    """The parser above reads a borrowed private name inside a function too (so the test above can fail)."""
    (tmp_path / "fake.py").write_text("def f():\n    from .dcd import _FeatureShrinking\nfrom . import _dcd_kernels\n")
    found = list(_imports("fake", tmp_path))
    assert ("robustsvm.backends.dcd", ["_FeatureShrinking"]) in found
    assert ("robustsvm.backends", ["_dcd_kernels"]) in found


def test_no_backend_imports_another_backend():
    algorithms = {name for name in _modules() if _registers_a_backend(_path(name))} - {"robustsvm.backends.registry"}
    assert {"robustsvm.backends.dcd", "robustsvm.backends.robust_dcd", "robustsvm.backends.feature_ipm",
            "robustsvm.distributed.ipm", "robustsvm.distributed.cocoa"} <= algorithms
    bad = {name: sorted({source for source, _ in _imports(name)} & algorithms) for name in algorithms}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"backend modules importing other backend modules: {bad}"


def _compiled_functions():
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if isinstance(value, numba.core.registry.CPUDispatcher) and value.__module__ == module.__name__:
                yield f"{name.rsplit('.', 1)[1]}.{attr}", value


def test_compiled_kernels_take_few_arguments():
    kernels = dict(_compiled_functions())
    assert {"_robust_dcd_kernels.epoch", "_dcd_kernels.epoch", "_ipm_kernels.normal_matrices"} <= set(
        kernels)
    arity = {name: len(inspect.signature(f.py_func).parameters) for name, f in kernels.items()}
    too_many = {name: k for name, k in arity.items() if k > MAX_KERNEL_ARGUMENTS}
    assert not too_many, f"compiled functions with more than {MAX_KERNEL_ARGUMENTS} arguments: {too_many}"
