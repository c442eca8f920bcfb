"""Run-level numbers: quality metrics, latency percentiles, tokens and cost.

Pure functions over a list of CaseResults, shared by the run report, the
manifest's totals, history and compare.

    >>> from tracegrade.core.results import CaseResult
    >>> quality_metrics([CaseResult("a", "pass"), CaseResult("b", "fail")])["taskSuccess"]
    0.5
"""

from __future__ import annotations

from typing import Any, Sequence

from tracegrade.core.results import CaseResult
from tracegrade.stats.summary import pass_rate, percentile, score_averages


def check_pass_rate(results: Sequence[CaseResult]) -> float | None:
    checks = [c for r in results for c in r.checks]
    return sum(c.passed for c in checks) / len(checks) if checks else None


def quality_metrics(results: Sequence[CaseResult]) -> dict[str, float]:
    """taskSuccess, checkPassRate and each judge metric's mean, when there is data for it.
    Higher is better for all of them; taskSuccess is the pass rate."""
    metrics: dict[str, float] = {"taskSuccess": pass_rate(results)} if results else {}
    checks = check_pass_rate(results)
    if checks is not None:
        metrics["checkPassRate"] = checks
    metrics.update(score_averages(results))
    return metrics


def latency(results: Sequence[CaseResult]) -> dict[str, float]:
    """Wall seconds per case: with cases in flight at once on a shared model, this
    includes the time a case waited its turn."""
    seconds = [r.seconds for r in results]
    return {f"p{q}": percentile(seconds, q) for q in (50, 95, 99)}


def service_latency(results: Sequence[CaseResult]) -> dict[str, float] | None:
    """Seconds the agent itself worked per case: the sum of its trace's timed steps
    (model rounds, tools, retrieval), without queueing; None when no trace has steps."""
    seconds = [sum(s.duration_ms for s in r.reply.steps) / 1000 for r in results if r.reply and r.reply.steps]
    return {f"p{q}": percentile(seconds, q) for q in (50, 95, 99)} if seconds else None


def cost(results: Sequence[CaseResult]) -> dict[str, Any]:
    """USD for the agent and the judge apart, per case and per successful task."""
    agent = sum(r.agent_cost_usd for r in results)
    judge = sum(r.judge_cost_usd for r in results)
    successes = sum(r.passed for r in results)
    return {
        "agentUsd": agent,
        "judgeUsd": judge,
        "totalUsd": agent + judge,
        "perCaseUsd": (agent + judge) / len(results) if results else 0.0,
        "perSuccessUsd": (agent + judge) / successes if successes else None,
    }


def tokens(results: Sequence[CaseResult]) -> dict[str, list[int]]:
    return {
        "agent": [sum(r.agent_tokens[0] for r in results), sum(r.agent_tokens[1] for r in results)],
        "judge": [sum(r.judge_tokens[0] for r in results), sum(r.judge_tokens[1] for r in results)],
    }


def run_totals(results: Sequence[CaseResult]) -> dict[str, Any]:
    """What the manifest records at the end of a run."""
    return {
        "cases": len(results),
        "passed": sum(r.passed for r in results),
        "flaky": sorted({r.case_id for r in results if r.flaky}),
        "tokens": tokens(results),
        "costUsd": cost(results),
        "latencyS": latency(results),
    }
