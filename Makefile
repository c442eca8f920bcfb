# The README's two commands: `make demo` (set up + run the eval) and `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
STAMP := .tracegrade/.installed

.PHONY: setup demo ask test test-deps live

# torch first, at the exact version this machine has on disk: an unpinned torch
# (pulled in by sentence-transformers) would download a multi-GB CUDA build.
$(STAMP): pyproject.toml
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[local,openai,anthropic,test]'
	@mkdir -p $(dir $@) && touch $@

setup: $(STAMP)

demo: setup
	tracegrade run evals/golden-dataset.json

ask: setup
	shopnest ask "Can I still return ORD-102?"

# System services the tests need (installed from Debian's packages when missing).
test-deps: setup
	@bash scripts/test-deps.sh

test: test-deps
	$(PYTHON) -m pytest -q

live: setup
	$(PYTHON) -m pytest -q -m live
