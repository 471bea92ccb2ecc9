"""What the first fit compiles on an empty numba cache: a Box fit compiles the prox of the Box only, and no compiled
function is specialized for a literal constant (a second compile of the same code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: one robust-dcd Box fit in a fresh process, then the signatures numba compiled for the refresh's dispatchers and
#: for every dispatcher of the modules below
_SCRIPT = """
import importlib, json, warnings
import numpy as np
from numba.core.registry import CPUDispatcher
import robustsvm as rs

rng = np.random.default_rng(0)
X = rng.normal(size=(200, 8))
y = np.where(X[:, 0] + rng.normal(size=200) > 0, 1, -1)
warnings.simplefilter("ignore")
sol = rs.Problem(loss=rs.Hinge(), penalty=rs.L2(0.1), uncertainty=rs.Box(0.1)).solve(X, y, solver="robust-dcd")
out = {"file": rs.__file__, "status": sol.status, "signatures": {}}
for name in ("objective", "backends._shared_set_kernels", "backends._ball2_bounds_kernels",
             "backends._robust_dcd_kernels", "backends._dcd_kernels"):
    mod = importlib.import_module("robustsvm." + name)
    for attr, f in vars(mod).items():
        if isinstance(f, CPUDispatcher) and f.__module__ == mod.__name__:
            out["signatures"][name + "." + attr] = [str(s) for s in f.signatures]
print(json.dumps(out))
"""


def _cold_box_fit(cache: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=True, env=env,
                          cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_cold_box_fit_compiles_the_box_prox_only(tmp_path):
    got = _cold_box_fit(tmp_path / "numba-cache")
    assert got["file"].startswith(str(ROOT)) and got["status"] == "optimal"
    sigs = got["signatures"]
    kern = "backends._shared_set_kernels."
    # the other kinds' prox: never typed, never compiled
    for name in (kern + "_ellipsoid", kern + "_refresh_linf", "backends._ball2_bounds_kernels.refresh_ball2_bounded"):
        assert sigs[name] == [], name
    # the refresh's entries: compiled for the Box kind only
    for name in ("refresh", "refresh_clipped", "refresh_separable"):
        assert sigs[kern + name], name
        assert all("BoxKind" in s for s in sigs[kern + name]), (name, sigs[kern + name])
        assert not any(other in s for s in sigs[kern + name] for other in ("Ball2Kind", "LinfKind", "EllipsoidKind"))
    # one specialization per call's types: none for a literal constant argument
    literal = {name: s for name, ss in sigs.items() for s in ss if "Literal" in s}
    assert literal == {}
    assert len(sigs["objective._select"]) == 1
