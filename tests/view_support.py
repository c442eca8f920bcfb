"""Two real runs of the golden dataset in a run store, for the view's tests and
screenshots (and the scripted agent and judge the HTML report's browser test
runs): a scripted agent (right, or with the wrong order id for chosen
cases) and a scripted judge, through the real runner, recorded as
`tracegrade run` records them."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
from pathlib import Path

from judge_rubrics import SCALE_RUBRIC, SEED_METRICS
from tracegrade.core.results import Manifest, Run
from tracegrade.core.trace import Reply, Step, ToolCall, Usage
from tracegrade.case.dataset import load_dataset
from tracegrade.judge.scoring import Judge
from tracegrade.models.scripted import ScriptedModel
from tracegrade.run.evaluate import dataset_record
from tracegrade.run.runner import RunSettings, run_cases
from tracegrade.stats.tally import tally
from tracegrade.store.runstore import CalibrationRecord, RunStore

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "evals" / "golden-dataset.json"
BASELINE, CANDIDATE = "20261130-090000-base01", "20261201-090000-cand02"
# The candidate calls the right tool with the wrong order id here: a regression.
BROKEN = frozenset({"tool-status-01"})


def scores_for(messages, options) -> str:
    """A scripted judge: mostly 5s, lower for some questions, deterministic."""
    question = messages[-1].content.split("QUESTION:\n", 1)[-1].split("\n", 1)[0]
    low = sum(map(ord, question)) % 4
    values = {m: 5 for m in SEED_METRICS} | {"correctness": 5 - low, "helpfulness": 5 - low // 2}
    return json.dumps({**values, "reason": f"scripted verdict: correctness {5 - low}"})


def reply_for(case, broken: frozenset[str]) -> Reply:
    argument = "ORD-999" if case.id in broken else case.expected_tool_argument
    calls = (ToolCall(name=case.expected_tool, arguments={"orderId": argument}, argument=argument,
                      result=f"Order {argument} is SHIPPED.",
                      status="needs_approval" if case.requires_approval else "ok"),) if case.expected_tool else ()
    steps = [Step(kind="retrieval", name="policies", duration_ms=14),
             Step(kind="model", name="round 1", start_ms=14, duration_ms=900, input_tokens=700, output_tokens=20)]
    if calls:
        steps += [Step(kind="tool", name=calls[0].name, start_ms=914, duration_ms=2),
                  Step(kind="model", name="round 2", start_ms=916, duration_ms=650, input_tokens=760, output_tokens=40)]
    source = case.expected_source or "return-policy.md"
    return Reply(answer=case.golden_answer or "I can only help with ShopNest orders and policies.",
                 retrieved_sources=(source,), retrieval_scores=(0.62,), tool_calls=calls,
                 context=f"SOURCE: {source}\n(policy text)", steps=tuple(steps), model="qwen2.5-1.5b-instruct",
                 usage=Usage(input_tokens=sum(s.input_tokens for s in steps),
                             output_tokens=sum(s.output_tokens for s in steps)))


def in_thread(coroutine):
    """asyncio.run on a worker thread: Playwright's sync API keeps a loop running on this one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def golden_run(run_id: str, day: str, broken: frozenset[str] = frozenset(), prompt: str = "v1",
               dataset_file: Path = DATASET) -> Run:
    """The run as `tracegrade run DATASET_FILE` records it from this folder (the file's base
    name in the manifest, its paths in the settings)."""
    dataset = load_dataset(dataset_file)

    async def target(case):
        return reply_for(case, broken)

    judge = Judge(ScriptedModel(scores_for, model_id="judge-model"), rubric=SCALE_RUBRIC)
    results = in_thread(run_cases(dataset.cases, target, judge, RunSettings(concurrency=4)))
    results = tuple(dataclasses.replace(r, seconds=1.5 + i / 10) for i, r in enumerate(results))  # fixed times
    manifest = Manifest(run_id, dataset.name, dataset.version, len(results), "shopnest",
                        "qwen2.5-1.5b-instruct", "judge-model", "rubric0hash", prompt_version=prompt,
                        started_at=f"{day}T09:00:00+00:00", ended_at=f"{day}T09:04:10+00:00",
                        totals=tally(results).totals(), settings=dataset_record(dataset_file))
    return Run(manifest, results)


def record(store: RunStore, run: Run) -> None:
    store.start_run(run.manifest)
    store.save_cases(run.manifest.run_id, [(r, i) for i, r in enumerate(run.results)])
    store.finish_run(run.manifest)


def two_runs(store: RunStore, dataset_file: Path = DATASET) -> tuple[Run, Run]:
    """The baseline (every case right) and the candidate (BROKEN cases wrong), recorded."""
    base = golden_run(BASELINE, "2026-11-30", dataset_file=dataset_file)
    cand = golden_run(CANDIDATE, "2026-12-01", BROKEN, prompt="v2", dataset_file=dataset_file)
    record(store, base)
    record(store, cand)
    return base, cand


def calibration(store: RunStore) -> dict:
    """The shipped local judge's measured calibration (bench/results), recorded as `tracegrade calibrate` does."""
    result = json.loads((ROOT / "bench" / "results" / "calibrate-local.json").read_text())
    store.save_calibration(CalibrationRecord("cal-1", result["judgeModel"], result["rubricHash"],
                                             result["labelsVersion"], bool(result["passed"]),
                                             "2026-12-01T08:00:00+00:00", result))
    return result
