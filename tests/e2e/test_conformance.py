"""The framework conformance matrix (issues 46 and 50): one hotel desk written with each
framework as its users write it (tests/conformance_agents.py), graded by ``tracegrade run``
with ``--capture openai`` and with ``--capture otel`` under the instrumentation its users
install, against a scripted OpenAI-compatible model on a real socket
(tests/conformance_server.py). Every trial's verdict must equal the truth written here,
in every mode, with repeats and the agent's own memory (keyed by ``case.trial``).

docs/agents.md shows the matrix; a framework that does not install beside the others
(LlamaIndex wants openai<3) runs in a virtualenv of its own (scripts/llamaindex-matrix.sh).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance_server import desk_app
from places import ROOT
from support import serving

pytestmark = pytest.mark.slow  # a process per framework and mode: the frameworks' imports are their own

TOOLS = [{"name": "get_booking"}, {"name": "cancel_booking", "writes": True}]
CASES = [
    {"id": "read", "question": "When is BK-1001?", "calls": {
        "expected": [{"tool": "get_booking", "arguments": {"booking_id": "BK-1001"}}],
        "forbidden": [{"tool": "cancel_booking"}]}},
    {"id": "forbidden-write", "question": "Please cancel BK-1004", "calls": {"forbidden": [{"tool": "cancel_booking"}]}},
    {"id": "write-errors", "question": "Please cancel BK-1005", "calls": {"expected": [
        {"tool": "cancel_booking", "arguments": {"booking_id": "BK-1005"}, "status": ["error"]}]}},
    {"id": "follow-up", "question": "Please cancel BK-1001", "followUps": ["And when is BK-1002?"], "calls": {
        "count": "exactly", "expected": [
            {"tool": "cancel_booking", "arguments": {"booking_id": "BK-1001"}, "turn": 1},
            {"tool": "get_booking", "arguments": {"booking_id": "BK-1002"}, "turn": 2}]}},
    {"id": "parallel", "question": "Compare BK-1001 and BK-1002", "calls": {"expected": [
        {"tool": "get_booking", "arguments": {"booking_id": "BK-1001"}, "parallel": "p"},
        {"tool": "get_booking", "arguments": {"booking_id": "BK-1002"}, "parallel": "p"}]}},
]
HANDOFF = {"id": "handoff", "question": "Please cancel BK-1002", "calls": {
    "expected": [{"tool": "cancel_booking", "arguments": {"booking_id": "BK-1002"}}],
    "handoffs": {"expected": ["Cancellations desk"]}}}
WRONG_HANDOFF = {"id": "no-handoff-wanted", "question": "Please cancel BK-1003", "calls": {
    "handoffs": {"forbidden": ["Cancellations desk"]}}}

# The truth: what the desk does, whatever recorded it. A write that raises crashes an agent whose
# framework does not catch tool errors (create_agent's default, pydantic-ai): that case is an error.
TRUTH = {"read": "pass", "forbidden-write": "fail", "write-errors": "pass", "follow-up": "pass", "parallel": "pass"}
RAISES = {**TRUTH, "write-errors": "error"}
HANDS_OFF = {**TRUTH, "handoff": "pass", "no-handoff-wanted": "fail"}

# framework target -> (the truth, the instrumentations its users install for --capture otel)
MATRIX = {
    "langgraph": (TRUTH, ["openinference"]),
    "langgraph_async_streamed": (TRUTH, ["openinference"]),
    "create_agent": (RAISES, ["openinference"]),
    "smolagents": (TRUTH, ["openinference"]),
    "agents_sdk_chat": (HANDS_OFF, ["openinference"]),
    "agents_sdk_responses": (HANDS_OFF, ["openinference"]),
    "pydantic_ai_chat": (RAISES, ["pydantic-ai"]),
    "pydantic_ai_responses": (RAISES, ["pydantic-ai"]),
    "openai_loop": (TRUTH, ["openinference", "openllmetry", "genai"]),
}
RUNS = [(framework, "openai", "") for framework in MATRIX] + \
    [(framework, "otel", kind) for framework, (_, kinds) in MATRIX.items() for kind in kinds]


@pytest.fixture(scope="module")
def model_url():
    with serving(desk_app()) as url:
        yield url


def grade(framework: str, mode: str, kind: str, url: str, folder: Path, cases: list[dict] | None = None,
          concurrency: int = 2, python: str = sys.executable) -> dict[tuple[str, int], tuple[str, str]]:
    """Each trial's (status, why), by (case id, repeat), from ``tracegrade run`` in a process of its own."""
    if cases is None:
        cases = CASES + ([HANDOFF, WRONG_HANDOFF] if "handoff" in MATRIX[framework][0] else [])
    dataset = folder / "dataset.json"
    dataset.write_text(json.dumps({"tools": TOOLS, "cases": cases}))
    env = {**os.environ, "OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "local",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
           "CONFORMANCE_FRAMEWORK": framework.removesuffix("_shared"), "CONFORMANCE_OTEL": kind}
    done = subprocess.run(
        [python, "-m", "tracegrade.cli", "run", str(dataset), "--target", f"conformance_agents:{framework}",
         "--capture", mode, "--checks-only", "--quiet", "--repeat", "2", "--concurrency", str(concurrency),
         "--db", f"sqlite:///{folder}/runs.db", "--out", str(folder / "out")],
        env=env, capture_output=True, text=True, timeout=600)
    files = list((folder / "out").glob("*/results.json"))
    assert files, done.stderr[-3000:]
    results = json.loads(files[0].read_text())["results"]
    return {(r["case_id"], r["repeat"]): (r["status"], r.get("error") or _failed(r)) for r in results}


def _failed(result: dict) -> str:
    return "; ".join(f"{c['name']}: {c.get('detail', '')}"[:300] for c in result["checks"] if not c["passed"])


@pytest.mark.parametrize(("framework", "mode", "kind"), RUNS, ids=[f"{f}-{m}{'-' + k if k else ''}" for f, m, k in RUNS])
def test_every_trial_gets_the_true_verdict(framework, mode, kind, model_url, tmp_path):
    pytest.importorskip({"langgraph": "langgraph", "langgraph_async_streamed": "langgraph", "create_agent": "langchain.agents", "smolagents": "smolagents",
                         "agents_sdk_chat": "agents", "agents_sdk_responses": "agents",
                         "pydantic_ai_chat": "pydantic_ai", "pydantic_ai_responses": "pydantic_ai",
                         "openai_loop": "openai"}[framework])
    verdicts = grade(framework, mode, kind, model_url, tmp_path)
    truth = MATRIX[framework][0]
    wrong = {trial: got for trial, got in verdicts.items() if got[0] != truth[trial[0]]}
    assert not wrong, wrong
    assert sorted(verdicts) == sorted((case, repeat) for case in truth for repeat in (0, 1))


@pytest.mark.parametrize(("mode", "kind"), [("openai", ""), ("otel", "openinference")])
def test_trials_that_share_the_agents_memory_are_unscored_in_every_mode(mode, kind, model_url, tmp_path):
    """A checkpointer keyed by the case, not the trial: the second trial starts with the first one's calls."""
    pytest.importorskip("langgraph")
    verdicts = grade("langgraph_shared", mode, kind, model_url, tmp_path, cases=[CASES[0]], concurrency=1)
    assert verdicts[("read", 0)][0] == "pass"
    assert verdicts[("read", 1)][0] == "unscored" and "share the agent's memory" in verdicts[("read", 1)][1]
