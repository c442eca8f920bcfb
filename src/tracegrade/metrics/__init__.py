"""Component metrics of one run: which part of the agent failed, and for whom.

    >>> from tracegrade.eval.dataset import GoldenCase
    >>> from tracegrade.core.results import CaseResult
    >>> from tracegrade.core.trace import Reply
    >>> case = GoldenCase(id="c", question="How long is the warranty?", expected_source="warranty-policy.md")
    >>> result = CaseResult("c", "pass", reply=Reply(answer="Two years.", retrieved_sources=("warranty-policy.md",)))
    >>> run_metrics([result], [case]).overall["retrieval.mrr"].value
    1.0

Pure functions over a run's results and the dataset's cases, one module per
component: retrieval, tools, routing, generation, safety; ``per_group`` repeats
them per split, category, risk tier and language and flags weak groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from tracegrade.eval.dataset import GoldenCase
from tracegrade.metrics.base import Rate, traced
from tracegrade.metrics.generation import generation_metrics
from tracegrade.metrics.retrieval import retrieval_metrics
from tracegrade.metrics.routing import RoutingReport, routing_from
from tracegrade.metrics.safety import Violation, all_violations, safety_metrics
from tracegrade.metrics.stratify import THRESHOLDS, Flag, Group, Threshold, flag, per_group
from tracegrade.metrics.tools import tool_metrics
from tracegrade.core.results import CaseResult
from tracegrade.stats.summary import metric_names

__all__ = ["JUDGE", "Flag", "Group", "Rate", "RunMetrics", "Threshold", "Violation", "component_metrics", "run_metrics"]


JUDGE = "judge."  # the prefix of the judge metrics' names here: judge.correctness, ...


def judge_metrics(results: Sequence[CaseResult]) -> dict[str, Rate]:
    """Each judge metric the run has (from its results), the mean over the cases that scored it."""
    return {f"{JUDGE}{name}": Rate.of(r.scores[name] for r in results if r.scores and name in r.scores)
            for name in metric_names(results)}


def judge_thresholds(results: Sequence[CaseResult]) -> dict[str, Threshold]:
    """A group whose mean falls below a judge metric's pass threshold is flagged."""
    return {f"{JUDGE}{m.name}": Threshold(minimum=m.threshold) for r in results for m in r.metrics}


def component_metrics(results: Sequence[CaseResult], cases: Sequence[GoldenCase]) -> dict[str, Rate]:
    """Every scalar metric, named ``component.metric``, plus the pass rate and the judge's metrics."""
    items = traced(results, cases)
    routing = routing_from(items)
    return {
        "passRate": Rate.of(r.passed for r in results),
        **retrieval_metrics(items),
        **tool_metrics(items),
        "routing.accuracy": routing.accuracy,
        "routing.macroF1": routing.macro_f1,
        **generation_metrics(items),
        **safety_metrics(items),
        **judge_metrics(results),
    }


@dataclass(frozen=True)
class RunMetrics:
    overall: Mapping[str, Rate]
    routing: RoutingReport
    violations: tuple[Violation, ...]
    groups: tuple[Group, ...]
    flags: tuple[Flag, ...]
    cases: int  # results in the run
    traced: int  # results with a trace (the agent answered)
    k: tuple[int, ...]  # how many sources the agent retrieved, as seen

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "traced": self.traced,
            "k": list(self.k),
            "overall": {name: rate.to_json() for name, rate in self.overall.items()},
            "routing": self.routing.to_json(),
            "safetyViolations": [vars(v) for v in self.violations],
            "groups": [{"dimension": g.dimension, "name": g.name,
                        "metrics": {name: rate.to_json() for name, rate in g.metrics.items()}} for g in self.groups],
            "flags": [f.to_json() for f in self.flags],
        }


def run_metrics(
    results: Sequence[CaseResult], cases: Sequence[GoldenCase], thresholds: Mapping[str, Threshold] = THRESHOLDS
) -> RunMetrics:
    """Overall and per-group metrics, routing detail, every safety violation, and the flags."""
    items = traced(results, cases)
    thresholds = {**thresholds, **judge_thresholds(results)}
    overall = component_metrics(results, cases)
    groups = per_group(results, cases, component_metrics)
    flags = flag("overall", overall, thresholds) + [f for g in groups for f in flag(g.scope, g.metrics, thresholds)]
    return RunMetrics(
        overall=overall,
        routing=routing_from(items),
        violations=tuple(all_violations(items)),
        groups=tuple(groups),
        flags=tuple(flags),
        cases=len(results),
        traced=len(items),
        k=tuple(sorted({len(reply.retrieved_sources) for _, reply in items})),
    )
