#!/usr/bin/env bash
# The wheel works anywhere: build it, install it WITHOUT extras (plus openai) into a
# fresh virtualenv, and use it from a folder outside the checkout: `tracegrade init`,
# a judged run against a mock OpenAI-compatible server, `report latest --html`, and
# the Python API. Fails if a package-data file or a core dependency is missing.
# Usage: scripts/wheel-check.sh PYTHON WORKDIR   (PYTHON: a python with `build` installed)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=$1
work=$2
mkdir -p "$work"
echo "wheel-check: building the wheel from the tracked files only"
# WHY a copy: an editable install leaves src/*.egg-info behind, whose file list
# would smuggle package data into the wheel that pyproject.toml does not declare.
mkdir -p "$work/source"
(cd "$repo" && git ls-files -z | xargs -0 cp --parents -t "$work/source")
"$python" -m build --wheel --no-isolation --outdir "$work/dist" "$work/source" >"$work/build.log" 2>&1 \
  || { tail -20 "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/tracegrade-*.whl)
# The library ships no agent: ShopNest is its own distribution (examples/shopnest).
if "$python" -m zipfile -l "$wheel" | grep -q "shopnest/"; then echo "wheel-check: the wheel contains shopnest"; exit 1; fi
python3 -m venv "$work/wheel-venv"
venv="$work/wheel-venv/bin"
echo "wheel-check: installing $(basename "$wheel") without extras, plus openai"
"$venv/pip" install -q -c "$repo/constraints.txt" "$wheel" openai 2>&1 | grep -v '^WARNING: Location' || true
"$venv/python" -c "import tracegrade" # the install itself must have worked

user="$work/user-project"   # outside the checkout
mkdir -p "$user"
cd "$user"
cat > agent.py <<'PY'
"""A user's agent: answers the starter dataset's questions, one with a tool call."""
from tracegrade import Reply, ToolCall


async def answer(case):
    if "T-1001" in case.question:
        call = ToolCall(name="getTicket", arguments={"ticketId": "T-1001"}, argument="T-1001",
                        result="T-1001: open, waiting for an engineer")
        return Reply(answer="Ticket T-1001 is open and waiting for an engineer.", tool_calls=(call,))
    if "hours" in case.question:
        return Reply(answer="We are open Monday to Friday, 9:00 to 17:00.")
    return Reply(answer="Sorry, I can only help with support questions.")
PY
"$venv/tracegrade" --help >/dev/null
"$venv/tracegrade" init
"$python" "$repo/bench/run/mock_openai.py" --latency-ms 0 --port 0 >"$work/mock.log" 2>&1 &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$work/mock.log" && break; sleep 0.1; done
base=$(grep -o 'http://[^ ]*' "$work/mock.log")
export TRACEGRADE_JUDGE_BASE_URL=$base OPENAI_API_KEY=sk-wheel-check
echo "wheel-check: a judged run against the mock server at $base"
set +e
"$venv/tracegrade" run evals/dataset.json --target agent:answer --judge-model openai:mock-judge --concurrency 2
code=$?
set -e
# a well-behaved judge endpoint passes the starter agent's correct answers (no evidence: grounding is n/a, not a fail)
[ "$code" -eq 0 ] || { echo "wheel-check: the judged run of correct answers exited $code, not 0"; exit 1; }
ls .tracegrade/runs/*/results.json .tracegrade/runs/*/junit.xml .tracegrade/runs/*/summary.md >/dev/null
"$venv/tracegrade" report latest --html
ls .tracegrade/runs/*/report.html >/dev/null
"$venv/python" - <<'PY'
import tracegrade

run = tracegrade.evaluate("evals/dataset.json", "agent:answer", judge=None, store="sqlite:///api-runs.db")
assert len(run.results) == 3, run.results
assert run.manifest.dataset_version and run.status == "finished"
failed = [r.case_id for r in run.results if not r.passed]
assert failed == [], [tracegrade.pytest_plugin.failure_message(r) for r in run.results if not r.passed]
print("wheel-check: the Python API ran", len(run.results), "cases:", run.pass_rate)
PY
echo "wheel-check: an openai-SDK agent of the user's own, graded with --capture openai (no Reply written)"
cat > sdk_agent.py <<'PY'
"""A user's tool loop on the openai SDK; it knows nothing of tracegrade."""
import json
import os

from openai import OpenAI


def answer(question: str) -> str:
    client = OpenAI(base_url=os.environ["AGENT_BASE_URL"], api_key="sk-wheel-check")
    tools = [{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {"orderId": {"type": "string"}}}}}
        for name in ("getOrderStatus", "getRefundStatus")]
    messages = [{"role": "user", "content": question}]
    for _ in range(3):
        message = client.chat.completions.create(model="mock", messages=messages, tools=tools).choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            order = json.loads(call.function.arguments)["orderId"]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"{order} shipped on 2 May"})
    return ""
PY
cat > orders.json <<'JSON'
[{"id": "o1", "question": "Where is my order ORD-7?",
  "calls": {"expected": [{"tool": "getOrderStatus", "arguments": {"orderId": "ORD-7"}}]}, "answerMustInclude": ["2 May"]},
 {"id": "o2", "question": "Has the refund for ORD-9 gone through?",
  "calls": {"expected": [{"tool": "getRefundStatus", "arguments": {"orderId": "ORD-9"}}]}}]
JSON
AGENT_BASE_URL=$base "$venv/tracegrade" run orders.json --target sdk_agent:answer --capture openai --checks-only \
  --concurrency 2 --quiet --out capture-out
grep -q '"orderId": *"ORD-9"' capture-out/*/results.json || { echo "wheel-check: the captured call is missing"; exit 1; }
echo "wheel-check: passed"
