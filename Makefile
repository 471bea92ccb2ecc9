# The two commands of the README: `make demo` and `make test`.
# Each creates .venv when missing and installs the package with what it needs.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench docs figures clean

$(PY):
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "robustsvm needs Python >= 3.11, found " + sys.version' 
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

demo: $(STAMP)
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
