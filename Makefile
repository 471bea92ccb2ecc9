# The two commands of the README: `make demo` and `make test`.
# Each creates .venv when missing and installs the package with what it needs:
# `make demo` the core and the `demo` extra (scikit-learn) only, every other
# target the `dev` extra (tests, data sets, plots, Dask, docs, notebooks).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test lint bench docs figures clean

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

lint: $(STAMP)
	$(PY) -m ruff check robustsvm tests benchmarks

bench: $(STAMP)
	$(PY) -m robustsvm bench

docs: $(STAMP)
	$(PY) -m mkdocs build --strict

figures: $(STAMP)
	$(PY) notebooks/render_figures.py

clean:
	rm -rf $(VENV) site .pytest_cache
