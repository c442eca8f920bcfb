"""Run-level numbers: quality metrics, latency percentiles, tokens and cost.

Pure functions over a list of CaseResults, shared by the run report, the
manifest's totals, history and compare; each is a view of one
``stats.tally.RunTally`` (a caller that needs several reads them from one tally).

    >>> from tracegrade.core.results import CaseResult
    >>> quality_metrics([CaseResult("a", "pass"), CaseResult("b", "fail")])["taskSuccess"]
    0.5
"""

from __future__ import annotations

from typing import Any, Sequence

from tracegrade.core.results import CaseResult
from tracegrade.stats.tally import tally


def check_pass_rate(results: Sequence[CaseResult]) -> float | None:
    return tally(results).check_pass_rate()


def quality_metrics(results: Sequence[CaseResult]) -> dict[str, float]:
    """taskSuccess, checkPassRate and each judge metric's mean, when there is data for it.
    Higher is better for all of them; taskSuccess is the pass rate."""
    return tally(results).quality()


def latency(results: Sequence[CaseResult]) -> dict[str, float]:
    """Wall seconds per case: with cases in flight at once on a shared model, this
    includes the time a case waited its turn."""
    return tally(results).latency()


def service_latency(results: Sequence[CaseResult]) -> dict[str, float] | None:
    """Seconds the agent itself worked per case: the sum of its trace's timed steps
    (model rounds, tools, retrieval), without queueing; None when no trace has steps."""
    return tally(results).service_latency()


def cost(results: Sequence[CaseResult]) -> dict[str, Any]:
    """USD for the agent and the judge apart, per case and per successful task."""
    return tally(results).cost()


def tokens(results: Sequence[CaseResult]) -> dict[str, list[int]]:
    return tally(results).tokens()


def run_totals(results: Sequence[CaseResult]) -> dict[str, Any]:
    """What the manifest records at the end of a run."""
    return tally(results).totals()
