"""robustsvm: support vector machines with sign constraints and uncertainty sets.

Compose a model from a loss, a penalty, sign constraints and uncertainty sets,
solve it with a conic solver through CVXPY or a first-order backend, and get a
certified answer::

    import robustsvm as rs
    prob = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(1e-2), signs={"mean radius": +1},
                      uncertainty=rs.Box(radius=0.1))
    sol = prob.solve(X, y, solver="clarabel")
"""

from .backends import get_backend, register, solvers
from .compare import compare
from .duals import NQP, solve_nqp_cvxpy
from .exceptions import ConvergenceWarning, SignDirectionWarning, SolverError, UnsupportedModelError
from .io import ValidationReport, validate
from .kernels import RBF, Kernel, Linear, Polynomial
from .losses import HardMargin, Hinge, Loss, SquaredHinge
from .multiclass import PerClass
from .penalties import L1, L2, Penalty
from .pq_model import pq_svm
from .problem import Problem
from .solution import Solution
from .uncertainty import (
    Ball,
    Box,
    Ellipsoid,
    Intersection,
    Polyhedron,
    RobustCheck,
    Spectrahedron,
    UncertaintySet,
    radius_upper_bound,
    robust_check,
)

__version__ = "0.1.0"

__all__ = [
    "Problem",
    "Solution",
    "Loss",
    "Hinge",
    "SquaredHinge",
    "HardMargin",
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
    "RobustCheck",
    "robust_check",
    "radius_upper_bound",
    "pq_svm",
    "NQP",
    "solve_nqp_cvxpy",
    "solvers",
    "get_backend",
    "register",
    "compare",
    "validate",
    "ValidationReport",
    "ConvergenceWarning",
    "SignDirectionWarning",
    "PerClass",
    "SolverError",
    "UnsupportedModelError",
    "__version__",
]


def __getattr__(name: str):
    # submodules with optional dependencies load on first use: rs.plotting needs matplotlib
    if name == "plotting":
        import importlib

        return importlib.import_module(".plotting", __name__)
    # scikit-learn estimator, data sets and model selection (scikit-learn, pandas, joblib, dask, tqdm on use)
    if name in ("datasets", "model_selection", "estimator"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name == "RobustSVC":
        from .estimator import RobustSVC

        return RobustSVC
    if name in ("grid_search", "select_features"):
        from . import model_selection

        return getattr(model_selection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
