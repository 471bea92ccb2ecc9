"""robustsvm: support vector machines with sign constraints and uncertainty sets.

Compose a model from a loss, a penalty, sign constraints and uncertainty sets,
solve it with a conic solver through CVXPY or a first-order backend, and get a
certified answer::

    import robustsvm as rs
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-2), signs={"mean radius": +1},
                      uncertainty=rs.Box(radius=0.1))
    sol = prob.solve(X, y, solver="clarabel")
"""

import sys
from types import ModuleType

__version__ = "0.1.0"

#: where each public name lives; ``import robustsvm`` imports none of them (``robustsvm --version`` stays
#: quick): the first one read imports them all, as a plain package import would (see :func:`__getattr__`)
_PUBLIC = {
    "backends": ("get_backend", "register", "solvers"),
    "compare": ("compare",),
    "duals": ("NQP", "solve_nqp_cvxpy"),
    "exceptions": ("ConvergenceWarning", "DegenerateSolutionWarning", "SelectionTieWarning", "SignDirectionWarning",
                   "SolverError",
                   "UnsupportedModelError"),
    "formats.io": ("ValidationReport", "validate"),
    "terms.kernels": ("RBF", "Kernel", "Linear", "Polynomial"),
    "terms.losses": ("HardMargin", "Hinge", "Loss", "SquaredHinge"),
    "estimators.multiclass": ("PerClass",),
    "terms.penalties": ("L1", "L2", "Penalty"),
    "pq_model": ("pq_svm",),
    "priors": ("Concave", "Convex", "Decreasing", "Equal", "Increasing", "Order"),
    "problem": ("Problem",),
    "solution": ("Solution",),
    "certificates.critical": ("critical_l1", "critical_radius"),
    "terms": ("Logistic",),
    "uncertainty": ("Ball", "Box", "ConditionalGaussian", "CoordinateEllipsoid", "Ellipsoid", "Intersection",
                    "MissingValues", "Polyhedron", "Replicates", "RobustCheck", "Spectrahedron", "UncertaintySet",
                    "fit_gaussian", "from_replicates", "missing_as_uncertainty", "radius_upper_bound",
                    "robust_check", "Wasserstein"),
    "priors.constraints": ("ordered",),
    # the distributed backends register themselves (a layer above robustsvm.backends, which does not import them)
    "distributed.ipm": (),
    "distributed.cocoa": (),
}

__all__ = [
    "Problem",
    "Solution",
    "Loss",
    "Hinge",
    "SquaredHinge",
    "HardMargin",
    "Logistic",
    "Penalty",
    "L1",
    "L2",
    "Kernel",
    "Linear",
    "Polynomial",
    "RBF",
    "UncertaintySet",
    "Box",
    "Ball",
    "Ellipsoid",
    "Polyhedron",
    "Spectrahedron",
    "Intersection",
    "Wasserstein",
    "RobustCheck",
    "robust_check",
    "radius_upper_bound",
    "critical_radius",
    "critical_l1",
    "pq_svm",
    "ordered",
    "Increasing",
    "Decreasing",
    "Order",
    "Equal",
    "Convex",
    "Concave",
    "from_replicates",
    "Replicates",
    "CoordinateEllipsoid",
    "missing_as_uncertainty",
    "MissingValues",
    "ConditionalGaussian",
    "fit_gaussian",
    "NQP",
    "solve_nqp_cvxpy",
    "solvers",
    "get_backend",
    "register",
    "compare",
    "validate",
    "ValidationReport",
    "ConvergenceWarning",
    "DegenerateSolutionWarning",
    "SelectionTieWarning",
    "SignDirectionWarning",
    "PerClass",
    "SolverError",
    "UnsupportedModelError",
    "__version__",
]


class _Package(ModuleType):
    """The package module: a submodule named like a public name (``compare``) never hides that name.

    Importing ``robustsvm.compare`` binds the submodule on the package; the function
    ``rs.compare`` must stay what the name means, as with a plain package import.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, ModuleType) and any(name in names for names in _PUBLIC.values()):
            return  # the public name is bound by _load_public
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _load_public() -> None:
    """Import the modules of the public names (the backends and the JSON format register themselves) and bind them."""
    import importlib

    for module, names in _PUBLIC.items():
        loaded = importlib.import_module(f".{module}", __name__)
        globals().update({name: getattr(loaded, name) for name in names})


def __getattr__(name: str):
    if any(name in names for names in _PUBLIC.values()):
        _load_public()
        return globals()[name]
    # submodules with optional dependencies load on first use: rs.plotting needs matplotlib
    if name == "plotting":
        import importlib

        return importlib.import_module(".plotting", __name__)
    # scikit-learn estimator, data sets and model selection (scikit-learn, pandas, joblib, dask, tqdm on use)
    if name in ("datasets", "model_selection", "estimators"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name == "RobustSVC":
        from .estimators.robust_svc import RobustSVC

        return RobustSVC
    if name in ("grid_search", "select_features", "path"):
        from . import model_selection

        return getattr(model_selection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
