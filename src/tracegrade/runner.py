"""Runs cases concurrently and contains each case's failure.

One idiom: a task group bounded by a semaphore. A case is the boundary where an
exception becomes data: an agent error, a timeout or a judge failure fails (or
unscores) that case with the reason, and the run goes on.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from tracegrade.checks import run_checks
from tracegrade.dataset import GoldenCase
from tracegrade.judge import Judge, Scores, Unscored
from tracegrade.results import CaseResult
from tracegrade.targets import Target
from tracegrade.verdict import DEFAULT_PASS_SCORE, case_status

OnResult = Callable[[CaseResult], None]


@dataclass(frozen=True)
class RunSettings:
    pass_score: int = DEFAULT_PASS_SCORE
    concurrency: int = 4
    timeout_s: float = 600.0
    checks_only: bool = False


async def evaluate_case(
    case: GoldenCase, target: Target, judge: Judge | None, settings: RunSettings, repeat: int = 0
) -> CaseResult:
    """Agent, checks, judge, verdict for one case; never raises."""
    started = time.perf_counter()
    base = dict(case_id=case.id, question=case.question, split=case.split,
                category=case.category, risk=case.risk, repeat=repeat)
    try:
        reply = await asyncio.wait_for(target(case), settings.timeout_s)
    except asyncio.TimeoutError:
        return CaseResult(status="error", error=f"agent timed out after {settings.timeout_s:g} s",
                          seconds=time.perf_counter() - started, **base)
    except Exception as exc:  # the case boundary
        return CaseResult(status="error", error=f"agent failed: {type(exc).__name__}: {exc}",
                          seconds=time.perf_counter() - started, **base)
    checks = run_checks(case, reply)
    outcome = None if settings.checks_only or judge is None else await judge.score(case, reply)
    return CaseResult(
        status=case_status(checks, outcome, settings.pass_score),
        reply=reply,
        checks=checks,
        scores=dict(outcome.values) if isinstance(outcome, Scores) else None,
        judge_reason=outcome.reason if isinstance(outcome, Scores) else "",
        error=outcome.reason if isinstance(outcome, Unscored) else "",
        seconds=time.perf_counter() - started,
        agent_tokens=(reply.usage.input_tokens, reply.usage.output_tokens),
        judge_tokens=(outcome.input_tokens, outcome.output_tokens) if outcome else (0, 0),
        judge_attempts=outcome.attempts if outcome else 0,
        agent_retries=sum(step.retries for step in reply.steps),
        judge_retries=outcome.retries if outcome else 0,
        **base,
    )


async def run_cases(
    cases: Sequence[GoldenCase],
    target: Target,
    judge: Judge | None,
    settings: RunSettings = RunSettings(),
    on_result: OnResult | None = None,
) -> list[CaseResult]:
    """Every case's result, in dataset order; ``on_result`` sees each as it finishes."""
    gate = asyncio.Semaphore(max(1, settings.concurrency))
    results: list[CaseResult | None] = [None] * len(cases)

    async def one(index: int, case: GoldenCase) -> None:
        async with gate:
            result = await evaluate_case(case, target, judge, settings)
        results[index] = result
        if on_result is not None:
            on_result(result)

    async with asyncio.TaskGroup() as group:
        for index, case in enumerate(cases):
            group.create_task(one(index, case))
    return [r for r in results if r is not None]
