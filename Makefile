# dflow's commands. Each target creates .venv (Python 3.11, else python3) and installs the package
# into it when missing or when pyproject.toml changed since the last install (stamp files).
#
#   make demo    standardize a ~1 GB Zarr dataset and train a logistic regression on it (GB=... to resize)
#   make test    the test suite (slow tests are deselected by pyproject's addopts), in TEST_JOBS
#                pytest-xdist workers (default: the cores, at most 4; TEST_JOBS=0 runs it in one process)
#   make bench   benchmarks/bench_*.py, each appending its figures to benchmarks/RESULTS.md
#   make lint    ruff

SHELL := /bin/bash
VENV ?= .venv
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
PY := $(VENV)/bin/python
GB ?= 1
PYTEST_ARGS ?=
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))

.PHONY: demo test bench lint clean-venv

demo: $(VENV)/.stamp-demo
	$(PY) -m dflow.demo --gb $(GB)

# pytest exits 5 when it collected no test; a test run that ran nothing is a failure here.
test: $(VENV)/.stamp-test
	@rc=0; $(PY) -m pytest $(if $(filter-out 0,$(TEST_JOBS)),-n $(TEST_JOBS) --dist worksteal) $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	exit $$rc

# TF_PYTHON (an interpreter with TensorFlow) is inherited from the environment: it adds the TF1 peer.
bench: $(VENV)/.stamp-test
	@set -e; for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f --record; done

lint: $(VENV)/.stamp-test
	$(PY) -m ruff --version >/dev/null 2>&1 || $(PY) -m pip install -q ruff
	$(PY) -m ruff check dflow tests benchmarks

$(PY):
	@test -n "$(PYTHON)" || { echo "make: no python3.11 or python3 on PATH" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); $(PYTHON) -m pip install --user -q virtualenv \
		&& $(PYTHON) -m virtualenv $(VENV); }
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.stamp-test: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test]'
	@touch $@

$(VENV)/.stamp-demo: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test,demo]'
	@touch $@

clean-venv:
	rm -rf $(VENV)
