"""Uncertainty sets ``V`` and their support functions ``σ_V``."""

from .ball import Ball
from .base import UncertaintySet, check_radius
from .box import Box
from .layout import RobustLayout, resolve_uncertainty

__all__ = ["UncertaintySet", "Box", "Ball", "check_radius", "RobustLayout", "resolve_uncertainty"]
