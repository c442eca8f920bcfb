# The README's two commands: `make demo` (set up + run the eval) and `make test`.
# Everything goes into a virtualenv of its own (.venv), so the commands work on
# a plain Python and on an "externally managed" one (Debian's) alike.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# The stamp lives inside the venv and depends on what is installed from: a new
# venv, pyproject.toml or constraints.txt re-runs the install.
STAMP := $(VENV)/.tracegrade-installed

.PHONY: setup demo ask test test-deps live check-install

$(PY):
	@$(PYTHON) -m venv $(VENV) || { echo "could not create $(VENV): on Debian/Ubuntu install python3-venv (apt-get install python3-venv)"; exit 1; }

# torch first, at the exact CPU build in constraints.txt: an unpinned torch
# (pulled in by sentence-transformers) would download a multi-GB CUDA build.
$(STAMP): $(PY) pyproject.toml constraints.txt
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -c constraints.txt torch
	$(PIP) install -q -c constraints.txt -e '.[local,openai,anthropic,frameworks,test]' -e examples/shopnest
	$(PY) -m tracegrade.models.weights --check
	@touch $@

setup: $(STAMP)

demo: setup
	$(VENV)/bin/tracegrade run evals/golden-dataset.json

ask: setup
	$(VENV)/bin/shopnest ask "Can I still return ORD-102?"

# System services the tests need (installed from Debian's packages when missing).
test-deps: setup
	@bash scripts/test-deps.sh

# WHY two workers, each taking whole files (--dist loadfile, so a file's fixtures load once):
# the suite is mostly one core's work, and a third worker was slower (bench/README.md, the
# test suite's time).
# WHY tests/conftest.py changes the scheduler: files that load the same model or heavy library are one unit of work.
# WHY --no-loadscope-reorder: the files go out in the order collected, those with a slow test
# first (tests/conftest.py); xdist's own order, most tests first, sent the long files last.
# WHY bytecode written even where PYTHONDONTWRITEBYTECODE is set: without it every worker
# and each of the suite's hundreds of child processes compiles the package (and pytest
# rewrites every test module) again; the files go to __pycache__/, which git ignores.
test: test-deps
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

live: setup
	$(PY) -m pytest -q -m live
