#!/usr/bin/env bash
# The capture tests at both ends of the SDK ranges the [openai] and [anthropic] extras admit:
# the lowest supported versions, and the newest the index has. Each SDK is laid over the
# test virtualenv (pip --target, its own dependencies left as they are), so nothing else moves.
#   bash scripts/sdk-range.sh VENV_BIN WORK_DIR
set -euo pipefail
bin=$1; work=$2
tests=(tests/agent/capture/test_capture.py tests/agent/capture/test_trial_fidelity.py tests/core/test_frameworks.py)
run_at() {  # $1: a label, then pip requirements
  local label=$1; shift
  rm -rf "$work/$label"
  "$bin/pip" install -q --no-deps --target "$work/$label" "$@"
  echo "== capture tests with $(PYTHONPATH="$work/$label" "$bin/python" -c 'import openai, anthropic; print("openai", openai.__version__, "anthropic", anthropic.__version__)')"
  PYTHONPATH="$work/$label" "$bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"
}
run_at lowest "openai==1.55.3" "anthropic==0.40.0"
run_at newest "openai<4" "anthropic<3"
