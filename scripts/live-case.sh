#!/usr/bin/env bash
# One golden case end to end on the real local models (agent, checks, judge): what a
# missing weight package or a broken model path cannot pass. Exit 1 (the small agent
# failed the case) is the agent's verdict, not a broken install; anything else fails.
# Usage: scripts/live-case.sh VENV_BIN WORKDIR
set -euo pipefail
bin=$1
work=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
set +e
"$bin/tracegrade" run "$repo/evals/golden-dataset.json" --only tool-status-01 --concurrency 1 \
  --db "sqlite:///$work/live.db" --out "$work/runs"
code=$?
set -e
[ "$code" -le 1 ] || { echo "live-case: the run failed with exit $code"; exit 1; }
"$bin/python" - "$work/runs" <<'PY'
import json, pathlib, sys
[path] = pathlib.Path(sys.argv[1]).glob("*/results.json")
run = json.loads(path.read_text())
[case] = run["results"]
assert case["status"] != "error", case["error"]
assert case["reply"]["model"].startswith("qwen2.5"), case["reply"]["model"]
assert case["judge_attempts"] >= 1 and run["manifest"]["judge_model"], "the judge did not run"
print(f"live-case: {case['case_id']} {case['status'].upper()} on {case['reply']['model']}")
PY
