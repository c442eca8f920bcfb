"""Builders for runs and case results, and scripted targets for the store,
resume, gate and compare tests. Targets are importable as ``runs_support:NAME``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Mapping

from tracegrade.core.results import CheckResult
from tracegrade.case.schema import GoldenCase
from judge_rubrics import SEED_METRICS as METRICS
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.core.trace import Reply, ToolCall, Usage

GOLDEN_PATH = Path(__file__).resolve().parents[1] / "evals" / "golden-dataset.json"


def scores(value: int = 5, **overrides: int) -> dict[str, int]:
    return {**{m: value for m in METRICS}, **overrides}


def result(
    case_id: str, status: str = "pass", *, score: Mapping[str, int] | None = None, seconds: float = 1.0,
    cost: float = 0.0, risk: str = "low", split: str = "nominal", category: str = "general",
    checks: tuple[CheckResult, ...] = (CheckResult("answerPresent", True),), reply: Reply | None = None,
    repeat: int = 0, case_hash: str = "h",
) -> CaseResult:
    return CaseResult(case_id, status, scores=score, seconds=seconds, agent_cost_usd=cost, risk=risk, split=split,
                      category=category, checks=checks, reply=reply, repeat=repeat, case_hash=case_hash or "")


def run(results, run_id: str = "run", version: str = "v1", judge: str | None = "judge-m") -> Run:
    manifest = Manifest(run_id, "golden.json", version, len({r.case_id for r in results}), "t", "agent-m",
                        judge, "rubric" if judge else None, started_at="2026-11-30T00:00:00+00:00")
    return Run(manifest, tuple(results))


def good_reply(case: GoldenCase, model: str = "scripted") -> Reply:
    """A reply that passes every check the case calls for."""
    calls = ()
    if case.expected_tool:
        status = "needs_approval" if case.requires_approval else "ok"
        calls = (ToolCall(name=case.expected_tool, arguments={"orderId": case.expected_tool_argument},
                          argument=case.expected_tool_argument, result="(tool result)", status=status),)
    sources = (case.expected_source,) if case.expected_source else ()
    answer = "Here is what I found. " + " ".join(case.answer_must_include)
    return Reply(answer=answer, retrieved_sources=sources, tool_calls=calls, model=model,
                 usage=Usage(input_tokens=1000, output_tokens=100))


def _log_call(case: GoldenCase) -> None:
    log = os.environ.get("TG_CALL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(case.id + "\n")


async def slow_target(case: GoldenCase) -> Reply:
    """Logs each call, sleeps ``TG_SLOW_S`` seconds, then answers right."""
    _log_call(case)
    await asyncio.sleep(float(os.environ.get("TG_SLOW_S", "0.2")))
    return good_reply(case)


async def priced_target(case: GoldenCase) -> Reply:
    """Answers right as a priced API model would (1000 in + 100 out tokens of gpt-4o)."""
    _log_call(case)
    return good_reply(case, model="gpt-4o-2024-08-06")


def good_target(case: GoldenCase) -> Reply:
    return good_reply(case)


def personal_target(case: GoldenCase) -> Reply:
    """A good reply that repeats a customer's e-mail, card and phone number."""
    reply = good_reply(case)
    return reply.model_copy(update={"answer": reply.answer + " Mail ann.lee@example.com, card 4111 1111 1111 1111, "
                                    "phone +49 30 1234 5678."})
