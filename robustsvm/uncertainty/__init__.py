"""Uncertainty sets ``V`` and their support functions ``σ_V``."""

from .ball import Ball
from .base import UncertaintySet, check_radius
from .box import Box
from .certificate import RobustCheck, robust_check
from .coordinate_ellipsoid import CoordinateEllipsoid
from .distributional import DISTRIBUTIONAL_TYPES, DistributionalSet
from .ellipsoid import Ellipsoid
from .from_data import Replicates, from_replicates
from .heuristics import radius_upper_bound
from .intersection import Intersection
from .layout import RobustLayout, check_radius_applies, resolve_uncertainty, sample_radii
from .missing import ConditionalGaussian, MissingValues, fit_gaussian, missing_as_uncertainty
from .polyhedron import Polyhedron
from .serialize import SET_TYPES, uncertainty_from_dict
from .spectrahedron import Spectrahedron
from .sum import SetSum
from .wasserstein import Wasserstein

__all__ = [
    "Ball",
    "Box",
    "ConditionalGaussian",
    "CoordinateEllipsoid",
    "DISTRIBUTIONAL_TYPES",
    "DistributionalSet",
    "Ellipsoid",
    "Intersection",
    "MissingValues",
    "Polyhedron",
    "Replicates",
    "SET_TYPES",
    "SetSum",
    "RobustCheck",
    "RobustLayout",
    "Spectrahedron",
    "UncertaintySet",
    "Wasserstein",
    "check_radius",
    "check_radius_applies",
    "fit_gaussian",
    "from_replicates",
    "missing_as_uncertainty",
    "radius_upper_bound",
    "resolve_uncertainty",
    "robust_check",
    "sample_radii",
    "uncertainty_from_dict",
]
