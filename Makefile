# The two commands of the README: `make demo` and `make test`.
# Each creates .venv when missing and installs the package with what it needs:
# `make demo` the core and the `demo` extra (scikit-learn, pandas: `robustsvm fit` on a CSV) only, every other
# target the `dev` extra (tests, data sets, plots, Dask, docs, notebooks).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Numba checks a cached kernel against its own file only, so a kernel calling a changed kernel of another module
# would run its old compiled code: every target keeps one cache per state of the package's sources.
ifndef NUMBA_CACHE_DIR
NUMBA_CACHE_DIR := $(CURDIR)/.cache/numba/$(shell find robustsvm -name '*.py' | LC_ALL=C sort | xargs cat | sha1sum | cut -c1-16)
endif
export NUMBA_CACHE_DIR
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test test-fast test-blas lint bench docs browser-check notebooks notebooks-open figures clean

$(PY):
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "robustsvm needs Python >= 3.11, found " + sys.version' 
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[demo]"
	@touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m robustsvm demo

test: $(STAMP)
	$(PY) -m pytest

# the daily lane: everything but the tests marked slow (about 8 minutes on 2 cores)
test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow"

# the agreement tests (backends against CVXPY models and each other) again under other OpenBLAS kernels:
# floating-point reductions differ between kernels, what the tests assert must not (CI runs this after `make test`)
BLAS_KERNELS ?= SkylakeX Prescott
AGREEMENT_TESTS := tests/test_feature_ipm.py tests/test_robust_dcd.py tests/test_conic.py tests/test_dcd.py \
                   tests/test_reference_interval.py tests/test_margin_equations.py
test-blas: $(STAMP)
	@set -e; for kernel in $(BLAS_KERNELS); do \
	    echo "== OPENBLAS_CORETYPE=$$kernel"; \
	    OPENBLAS_CORETYPE=$$kernel $(PY) -m pytest -q -p no:cacheprovider $(AGREEMENT_TESTS); \
	done

lint: $(STAMP)
	$(PY) -m ruff check robustsvm tests benchmarks

bench: $(STAMP)
	$(PY) benchmarks/bench_suite.py

# the site in site/; MathJax comes from the npm registry at build time (see mkdocs_hooks.py)
docs: $(STAMP)
	$(PY) -m mkdocs build --strict

# the reproduction pages of the documentation, rerun: each command writes into docs/ only because it is told to
# (--page, --figures); run by hand, `robustsvm reproduce NAME` writes into ./reproductions
reproductions: $(STAMP)
	$(PY) -m robustsvm reproduce sha2002 --page docs/reproductions/sha2002.md --figures docs/figures
	$(PY) -m robustsvm reproduce woolnough2022 --page docs/reproductions/woolnough2022.md
	$(PY) -m robustsvm reproduce tajima2020 --page docs/reproductions/tajima2020.md --figures docs/figures

# headless Chromium (Debian's chromium and chromium-driver) opens every page of the built site;
# screenshots of the home, a derivation and the benchmarks page go to build/browser/
browser-check: docs
	$(PY) tools/browser_check.py --site site --output build/browser

# the notebooks as .ipynb (from their jupytext sources), without outputs; open them with
# `make notebooks-open` (JupyterLab) or `.venv/bin/jupyter lab notebooks/`
notebooks: $(STAMP)
	$(PY) -m jupytext --to ipynb notebooks/0*.py
	@echo "notebooks/*.ipynb written; open them with: make notebooks-open  (or .venv/bin/jupyter lab notebooks/)"

notebooks-open: notebooks
	$(VENV)/bin/jupyter lab notebooks/

figures: $(STAMP)
	$(PY) notebooks/render_figures.py

clean:
	rm -rf $(VENV) .cache site .pytest_cache build/browser notebooks/*.ipynb
