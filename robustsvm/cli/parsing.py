"""Parsing the command line's values: uncertainty sets, kernels, signs, bounds, intercepts and numbers.

Each parser turns one option's text into the package's object and raises ``argparse.ArgumentTypeError``
(a usage error, exit status 2) with a one-line reason on anything else.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["nonneg_float", "parse_bounds", "parse_intercept", "parse_kernel", "parse_signs", "parse_uncertainty",
           "parse_weights", "positive_float", "positive_int"]

def parse_uncertainty(text: str) -> Any:
    """An uncertainty set from its text form: ``box:R``, ``ball:R:p=inf``, ``ellipsoid:R:shape=M.npy``, ``A&B``, ...

    The grammar (:mod:`robustsvm.uncertainty.grammar`) is read off the set table, so every set type
    can be named; ``ball:R:P`` (a bare ``P``) still works. Raises ``argparse.ArgumentTypeError`` (a
    usage error) with a one-line reason on anything else.
    """
    from ..uncertainty.grammar import parse_set

    try:
        return parse_set(text)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"invalid uncertainty {text!r}: {exc}") from exc


def parse_kernel(text: str) -> Any:
    """``linear``, ``poly:K`` or ``rbf:SIGMA`` → ``rs.Linear()``, ``rs.Polynomial(K)``, ``rs.RBF(SIGMA)``.

    Raises ``argparse.ArgumentTypeError`` (a usage error) on anything else.
    """
    from ..terms.kernels import RBF, Linear, Polynomial

    parts = text.strip().lower().split(":")
    try:
        if parts == ["linear"]:
            return Linear()
        if len(parts) == 2 and parts[0] in ("poly", "polynomial"):
            degree = float(parts[1])
            if degree != int(degree):
                raise ValueError(f"the degree must be an integer, got {parts[1]}")
            return Polynomial(int(degree))
        if len(parts) == 2 and parts[0] == "rbf":
            return RBF(float(parts[1]))
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"invalid kernel {text!r}: {exc}") from exc
    raise argparse.ArgumentTypeError(f"invalid kernel {text!r}: use linear, poly:DEGREE or rbf:SIGMA")


def parse_signs(text: str) -> dict:
    """``"name=+1,other=-1,3=+1"`` → ``{"name": 1, "other": -1, 3: 1}``.

    Keys are feature names or integer column indices; values ``+1``, ``-1``,
    ``+``, ``-`` or ``0``. Raises ``argparse.ArgumentTypeError`` on a bad item.
    """
    out: dict = {}
    values = {"+1": 1, "1": 1, "+": 1, "-1": -1, "-": -1, "0": 0}
    for item in (s for s in text.split(",") if s.strip()):
        key, sep, value = item.rpartition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or value not in values:
            raise argparse.ArgumentTypeError(
                f"invalid sign constraint {item!r}: use FEATURE=+1 or FEATURE=-1, comma-separated"
            )
        out[int(key) if key.lstrip("-").isdigit() else key] = values[value]
    if not out:
        raise argparse.ArgumentTypeError("--signs is empty")
    return out


def _bound_side(text: str, absent: float, item: str, key: Any) -> float:
    import math

    text = text.strip().lower()
    if text in ("", "none"):
        return absent
    try:
        value = float(text.replace("∞", "inf"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid bound for {key!r} in {item!r}: {text!r} is not a number (use inf, -inf or leave a side empty)"
        ) from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"invalid bound for {key!r} in {item!r}: NaN is not a bound")
    return value


def parse_bounds(text: str) -> dict:
    """``"age=0:inf,dose=-1:1,3=:0.5"`` → ``{"age": (0, inf), "dose": (-1, 1), 3: (-inf, 0.5)}``.

    Each item is ``FEATURE=LOWER:UPPER`` (a feature name or integer column index); a side may be a
    number, ``inf`` / ``-inf`` or empty (free). Raises ``argparse.ArgumentTypeError`` naming the
    feature on a bad item or an empty interval (``LOWER > UPPER``).
    """
    out: dict = {}
    for item in (s for s in text.split(",") if s.strip()):
        key, sep, value = item.rpartition("=")
        key = key.strip()
        if not sep or not key or value.count(":") != 1:
            raise argparse.ArgumentTypeError(
                f"invalid bound {item!r}: use FEATURE=LOWER:UPPER (e.g. age=0:inf,dose=-1:1), comma-separated")
        key = int(key) if key.lstrip("-").isdigit() else key
        lo_text, up_text = value.split(":")
        lo = _bound_side(lo_text, -float("inf"), item, key)
        up = _bound_side(up_text, float("inf"), item, key)
        if lo > up or lo == float("inf") or up == -float("inf"):
            raise argparse.ArgumentTypeError(f"--bounds leave no value for {key!r}: lower {lo:g} > upper {up:g}")
        if key in out:
            raise argparse.ArgumentTypeError(f"--bounds gives {key!r} twice")
        out[key] = (lo, up)
    if not out:
        raise argparse.ArgumentTypeError("--bounds is empty")
    return out


def parse_intercept(text: str) -> Any:
    """``free``, ``none`` or ``ridge:MU`` → ``True``, ``False`` or ``rs.L2(MU)`` (the ``intercept`` of a Problem).

    ``free`` is an unregularized ``b``, ``none`` is ``b = 0`` and ``ridge:MU``
    adds ``(MU/2) b²`` to the objective (``MU > 0``). Raises
    ``argparse.ArgumentTypeError`` (a usage error) on anything else.
    """
    from ..terms.penalties import L2

    kind, _, value = text.strip().lower().partition(":")
    if kind == "free" and not value:
        return True
    if kind == "none" and not value:
        return False
    if kind == "ridge" and value:
        try:
            mu = float(value)
        except ValueError:
            mu = float("nan")
        if not (mu > 0 and mu != float("inf")):
            raise argparse.ArgumentTypeError(f"invalid intercept {text!r}: MU of ridge:MU must be a positive number")
        return L2(mu)
    raise argparse.ArgumentTypeError(f"invalid intercept {text!r}: use free, none or ridge:MU (for instance ridge:1)")


def _number(text: str, kind: type, ok: Any, what: str) -> Any:
    """``kind(text)`` when ``ok`` of it holds; else a usage error saying the value must be ``what``."""
    try:
        v = kind(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not {'an integer' if kind is int else 'a number'}: {text!r}") from exc
    if not ok(v):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
    return v


def positive_float(text: str) -> float:
    """A number ``> 0`` (NaN is not)."""
    return _number(text, float, lambda v: v > 0, "positive")


def nonneg_float(text: str) -> float:
    """A number ``≥ 0`` (NaN is not)."""
    return _number(text, float, lambda v: v >= 0, "non-negative")


def positive_int(text: str) -> int:
    """An integer ``≥ 1``."""
    return _number(text, int, lambda v: v >= 1, "a positive integer")


def parse_weights(text: str, *, what: str, usage: str, option: str) -> dict[str, float]:
    """``"a=0.5,b=0"`` → ``{"a": 0.5, "b": 0.0}``: comma-separated ``KEY=VALUE`` with finite values ``≥ 0``.

    A bad item is a usage error ``invalid {what} {item!r}: {usage}``; no item at all is ``{option} is empty``.
    """
    out: dict[str, float] = {}
    for item in (s for s in text.split(",") if s.strip()):
        key, sep, value = item.rpartition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = float("nan")
        if not sep or not key.strip() or not (weight >= 0 and weight != float("inf")):
            raise argparse.ArgumentTypeError(f"invalid {what} {item!r}: {usage}")
        out[key.strip()] = weight
    if not out:
        raise argparse.ArgumentTypeError(f"{option} is empty")
    return out
