"""Model selection: grid search with cross-validation that compiles each model once, and
Woolnough et al. (2022)'s train/test protocol."""

from ..uncertainty import radius_upper_bound
from .cv_results import GridScores, grid_scores
from .grid import (
    GridResult,
    evaluate_chunk,
    expand_grid,
    exponential_range,
    grid_search,
    point_radius,
    program_values,
    stratified_folds,
    with_values,
)
from .path import SCORERS, PathResult, path
from .protocol import ProtocolResult, select_features, standardize, stratified_split, woolnough_protocol
from .scoring import check_scoring
from .weights import fold_weights

__all__ = [
    "GridResult",
    "PathResult",
    "SCORERS",
    "GridScores",
    "ProtocolResult",
    "check_scoring",
    "evaluate_chunk",
    "expand_grid",
    "exponential_range",
    "fold_weights",
    "grid_scores",
    "grid_search",
    "path",
    "point_radius",
    "program_values",
    "radius_upper_bound",
    "select_features",
    "standardize",
    "stratified_folds",
    "stratified_split",
    "with_values",
    "woolnough_protocol",
]
