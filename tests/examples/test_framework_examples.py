"""The three framework examples (a plain openai-SDK loop, the OpenAI Agents SDK,
LangGraph) graded with --capture and no hand-written Reply, against a model
served over a real socket by `serve-model`'s app (a scripted model here; the
real local model in bench/results/framework-examples-local.txt)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from places import ROOT
from support import serving
from tracegrade.cli import main
from tracegrade.models.base import ChatResponse, ModelToolCall
from tracegrade.models.scripted import ScriptedModel
from tracegrade.serve.model_server import create_model_app

pytestmark = pytest.mark.slow  # the frameworks' imports, in processes of their own


# question -> the call a competent model makes for it
PLANS = {
    "Lisbon": ("get_weather", {"city": "Lisbon"}), "Oslo": ("get_weather", {"city": "Oslo"}),
    "Nairobi": ("get_weather", {"city": "Nairobi"}),
    "Dune": ("check_availability", {"title": "Dune"}), "Emma": ("check_availability", {"title": "Emma"}),
    "Beloved": ("check_availability", {"title": "Beloved"}),
    "100 EUR": ("convert_currency", {"amount": 100, "from_currency": "EUR", "to_currency": "USD"}),
    "50 GBP": ("convert_currency", {"amount": 50, "from_currency": "GBP", "to_currency": "EUR"}),
    "20 euros": ("convert_currency", {"amount": 20, "from_currency": "EUR", "to_currency": "JPY"}),
}


def competent(messages, options):
    question = next(m.content for m in messages if m.role == "user")
    if messages[-1].role == "tool":
        return ChatResponse(text=f"Here is what I found: {messages[-1].content}.", input_tokens=30, output_tokens=9)
    [plan] = [p for key, p in PLANS.items() if key in question]
    assert plan[0] in [t.name for t in options.tools], "the framework did not offer the tool"
    return ChatResponse(tool_calls=(ModelToolCall(*plan),), input_tokens=40, output_tokens=12)


@pytest.fixture
def model_url(monkeypatch):
    with serving(create_model_app(ScriptedModel(competent, model_id="scripted-competent"))) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        yield url


@pytest.mark.parametrize("example", ["openai_loop", "agents_sdk", "langgraph_agent"])
def test_a_framework_example_passes_its_dataset_with_capture(example, model_url, tmp_path, monkeypatch):
    pytest.importorskip({"openai_loop": "openai", "agents_sdk": "agents", "langgraph_agent": "langgraph"}[example])
    monkeypatch.chdir(ROOT)
    code = main(["run", f"examples/{example}/dataset.json", "--target", f"examples.{example}.agent:answer",
                 "--capture", "openai", "--checks-only", "--quiet", "--concurrency", "3",
                 "--db", f"sqlite:///{tmp_path}/runs.db", "--out", str(tmp_path / "out")])
    [results] = (tmp_path / "out").rglob("results.json")
    cases = json.loads(results.read_text())["results"]
    assert code == 0, [(c["case_id"], c["checks"]) for c in cases if c["status"] != "pass"]
    for case in cases:
        [call] = case["reply"]["toolCalls"]
        question = case["question"]
        [plan] = [p for key, p in PLANS.items() if key in question]
        assert (call["name"], call["arguments"]) == plan
        assert call["result"] and call["id"].startswith("call_")
        assert case["reply"]["answer"].startswith("Here is what I found:")


def test_served_tool_calls_and_json_schema_reach_the_model(model_url):
    """The served endpoint itself: tools in, OpenAI tool_calls out; a bad body is a 400 naming the field."""
    import httpx

    with httpx.Client(base_url=model_url) as client:
        ok = client.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "weather in Oslo?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]})
        bad = client.post("/v1/chat/completions", json={"messages": [{"content": "no role"}]})
        models = client.get("/v1/models")
    call = ok.json()["choices"][0]["message"]["tool_calls"][0]
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == ("get_weather", {"city": "Oslo"})
    assert ok.json()["choices"][0]["finish_reason"] == "tool_calls"
    assert bad.status_code == 400 and "messages[0]" in bad.json()["error"]["message"]
    assert models.json()["data"][0]["id"] == "scripted-competent"


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracegrade.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def _verdicts(out: Path) -> dict[str, tuple[bool, list]]:
    [results] = out.rglob("results.json")
    return {c["case_id"]: (c["status"] == "pass", [(t["name"], t["arguments"], t["result"])
                                                   for t in c["reply"]["toolCalls"]])
            for c in json.loads(results.read_text())["results"]}


@pytest.mark.parametrize("example", ["agents_sdk", "langgraph_agent"])
def test_a_traced_framework_agent_is_graded_from_its_spans_live_and_recorded(example, model_url, tmp_path):
    """--capture otel reads the spans OpenInference's instrumentor emits; the same agent's
    spans recorded to OTLP JSON and graded with `tracegrade grade` give the same verdicts."""
    pytest.importorskip("openinference.instrumentation")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    dataset = f"examples/{example}/dataset.json"
    live = _cli("run", dataset, "--target", f"examples.{example}.traced:answer", "--capture", "otel",
                "--checks-only", "--quiet", "--db", f"sqlite:///{tmp_path}/live.db", "--out", str(tmp_path / "live"),
                env=env)
    assert live.returncode == 0, live.stdout[-3000:] + live.stderr[-2000:]

    traces = tmp_path / "traces.jsonl"
    record = ("import asyncio, inspect, json, sys\n"
              f"from examples.{example}.traced import answer\n"
              "for case in json.load(open(sys.argv[1])):\n"
              "    result = answer(case['question'])\n"
              "    asyncio.run(result) if inspect.isawaitable(result) else None\n")
    recorded = subprocess.run([sys.executable, "-c", record, dataset], cwd=ROOT, env={**env, "TRACES_FILE": str(traces)},
                              capture_output=True, text=True, timeout=300)
    assert recorded.returncode == 0, recorded.stderr[-2000:]
    # WHY in this process: grading reads the file, not the agent (no instrumentor, no framework import)
    assert main(["grade", str(traces), "--dataset", str(ROOT / dataset), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path}/graded.db", "--out", str(tmp_path / "graded")]) == 0
    assert _verdicts(tmp_path / "graded") == _verdicts(tmp_path / "live")
    assert all(passed and calls for passed, calls in _verdicts(tmp_path / "live").values())
