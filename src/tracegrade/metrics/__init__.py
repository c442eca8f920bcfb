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
from tracegrade.metrics.routing import RoutingReport, routing_pairs, routing_report
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


# WHY in chunks: every reply of a 100,000-case run at once was the peak of its
# memory (2.8 KB a case). Every scalar metric is a Rate, a sum over items, so
# chunk sums add up exactly; routing keeps its (expected, reported) pairs.
CHUNK = 5000


def component_metrics(results: Sequence[CaseResult], cases: Sequence[GoldenCase]) -> dict[str, Rate]:
    """Every scalar metric, named ``component.metric``, plus the pass rate and the judge's metrics."""
    sums: dict[str, Rate | None] = {}
    pairs: list[tuple[str, str]] = []
    unrouted = 0
    for chunk in _chunks(results):
        items = traced(chunk, cases)
        part = {"passRate": Rate.of(r.passed for r in chunk), **retrieval_metrics(items), **tool_metrics(items),
                "routing.accuracy": None, "routing.macroF1": None,  # from every pair, below
                **generation_metrics(items), **safety_metrics(items)}
        sums = {name: None if rate is None else _add(sums.get(name), rate) for name, rate in part.items()}
        chunk_pairs, chunk_unrouted = routing_pairs(items)
        pairs.extend(chunk_pairs)
        unrouted += chunk_unrouted
    routing = routing_report(pairs, unrouted)
    whole = {"routing.accuracy": routing.accuracy, "routing.macroF1": routing.macro_f1}
    merged = {name: whole[name] if rate is None else rate for name, rate in sums.items()}
    return {**merged, **judge_metrics(results)}


def _chunks(results: Sequence[CaseResult]):
    """``results`` CHUNK at a time; one empty chunk for no results (every metric is still named)."""
    for start in range(0, max(1, len(results)), CHUNK):
        yield results[start:start + CHUNK]


def _add(a: Rate | None, b: Rate) -> Rate:
    return b if a is None else Rate(a.total + b.total, a.n + b.n, b.unit)


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
    pairs: list[tuple[str, str]] = []
    violations: list[Violation] = []
    unrouted = traced_count = 0
    seen_k: set[int] = set()
    for chunk in _chunks(results):  # see CHUNK
        items = traced(chunk, cases)
        chunk_pairs, chunk_unrouted = routing_pairs(items)
        pairs.extend(chunk_pairs)
        unrouted += chunk_unrouted
        violations += all_violations(items)
        traced_count += len(items)
        seen_k.update(len(reply.retrieved_sources) for _, reply in items)
    routing, k = routing_report(pairs, unrouted), tuple(sorted(seen_k))
    thresholds = {**thresholds, **judge_thresholds(results)}
    overall = component_metrics(results, cases)
    groups = per_group(results, cases, component_metrics)
    flags = flag("overall", overall, thresholds) + [f for g in groups for f in flag(g.scope, g.metrics, thresholds)]
    return RunMetrics(overall=overall, routing=routing, violations=tuple(violations), groups=tuple(groups),
                      flags=tuple(flags), cases=len(results), traced=traced_count, k=k)
