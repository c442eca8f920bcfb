"""Component metrics of one run: which part of the agent failed, and for whom.

    >>> from tracegrade.case.schema import GoldenCase
    >>> from tracegrade.core.results import CaseResult
    >>> from tracegrade.core.trace import Reply
    >>> case = GoldenCase(id="c", question="How long is the warranty?", expected_source="warranty-policy.md")
    >>> result = CaseResult("c", "pass", reply=Reply(answer="Two years.", retrieved_sources=("warranty-policy.md",)))
    >>> run_metrics([result], [case]).overall["retrieval.mrr"].value
    1.0

Pure functions over a run's results and the dataset's cases, one module per
component: retrieval, tools, routing, generation, safety; ``run_metrics`` repeats
them per split, category, risk tier and language (``stratify``) and flags weak
groups, reading each result once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import case_finder
from tracegrade.metrics.base import Rate, Traced
from tracegrade.metrics.generation import generation_metrics
from tracegrade.metrics.retrieval import retrieval_metrics
from tracegrade.metrics.routing import RoutingReport, routing_pairs, routing_report
from tracegrade.metrics.safety import Violation, found_violations
from tracegrade.metrics.stratify import DIMENSIONS, THRESHOLDS, Flag, Group, Threshold, flag
from tracegrade.metrics.tools import tool_rates
from tracegrade.core.results import CaseResult
from tracegrade.stats.tally import add_scores

__all__ = ["JUDGE", "Flag", "Group", "MetricsReader", "Rate", "RunMetrics", "Threshold", "Violation", "component_metrics", "run_metrics"]


JUDGE = "judge."  # the prefix of the judge metrics' names here: judge.correctness, ...


def judge_metrics(results: Sequence[CaseResult]) -> dict[str, Rate]:
    """Each judge metric the run has (from its results), the mean over the cases that scored it."""
    scores: dict[str, list[float]] = {}
    for r in results:
        add_scores(scores, r)
    return {f"{JUDGE}{name}": Rate.of(values) for name, values in scores.items()}


def judge_thresholds(results: Sequence[CaseResult]) -> dict[str, Threshold]:
    """A group whose mean falls below a judge metric's pass threshold is flagged."""
    return {f"{JUDGE}{m.name}": Threshold(minimum=m.threshold) for r in results for m in r.metrics}


# WHY in chunks: every reply of a 100,000-case run at once was the peak of its
# memory (2.8 KB a case). Every scalar metric is a Rate, a sum over items, so
# chunk sums add up exactly; routing keeps its (expected, reported) pairs.
CHUNK = 5000


def component_metrics(results: Sequence[CaseResult], cases: Sequence[GoldenCase]) -> dict[str, Rate]:
    """Every scalar metric, named ``component.metric``, plus the pass rate and the judge's metrics."""
    scope, find = _Scope(), case_finder(cases)
    for chunk in _chunks(results):
        scope.add(chunk, _traced(_known(chunk, find)))
    return scope.metrics()


def _chunks(results: Sequence[CaseResult]) -> Iterator[Sequence[CaseResult]]:
    """``results`` CHUNK at a time; one empty chunk for no results (every metric is still named)."""
    for start in range(0, max(1, len(results)), CHUNK):
        yield results[start:start + CHUNK]


def _add(a: Rate | None, b: Rate) -> Rate:
    return b if a is None else Rate(a.total + b.total, a.n + b.n, b.unit)


Find = Callable[[str], "GoldenCase | None"]
Known = list[tuple[CaseResult, GoldenCase]]
Found = Sequence["list[Violation] | None"]  # each traced item's violations, None: its calls may not be read


def _known(results: Sequence[CaseResult], find: Find) -> Known:
    """Each result whose case is in the dataset, with its case (looked up once: it may validate again)."""
    return [(r, case) for r in results if (case := find(r.case_id)) is not None]


def _traced(known: Known) -> list[Traced]:
    """(case, reply) of each result that has a trace; repeats count once each.

    A result whose agent failed has no trace: it counts in the pass rate, and
    in no component metric. A handoff is no tool call (Reply.without_handoffs)."""
    return [(case, r.reply.without_handoffs()) for r, case in known if r.reply is not None]


@dataclass(frozen=True)
class _Part:
    """Every component metric of some results: what a scope adds up."""

    sums: dict[str, Rate | None]
    judge: dict[str, Rate]
    pairs: list[tuple[str, str]]
    unrouted: int

    @classmethod
    def of(cls, results: Sequence[CaseResult], items: list[Traced], found: Found | None = None) -> _Part:
        """``found``: each item's violations, None for one whose calls may not be read, when the
        caller found them already (``found_violations``)."""
        found = found_violations(items) if found is None else found
        # WHY from found: it says once which items' calls may be read (with_calls asked each again)
        with_calls = [item for item, violations in zip(items, found) if violations is not None]
        violated = [bool(violations) for violations in found if violations is not None]
        sums = {"passRate": Rate.of([r.passed for r in results]), **retrieval_metrics(items), **tool_rates(with_calls),
                "routing.accuracy": None, "routing.macroF1": None,  # from every pair, in metrics()
                **generation_metrics(items), "safety.violations": Rate.of(violated)}
        pairs, unrouted = routing_pairs(items)
        return cls(sums, judge_metrics(results), pairs, unrouted)


class _Scope:
    """The running sums of every component metric over one scope: the run, or one group."""

    def __init__(self) -> None:
        self.sums: dict[str, Rate | None] = {}
        self.judge: dict[str, Rate] = {}
        self.pairs: list[tuple[str, str]] = []
        self.unrouted = 0

    def add(self, results: Sequence[CaseResult], items: list[Traced]) -> None:
        self.add_part(_Part.of(results, items))

    def add_part(self, part: _Part) -> None:
        self.sums = {name: None if rate is None else _add(self.sums.get(name), rate) for name, rate in part.sums.items()}
        for name, rate in part.judge.items():
            self.judge[name] = _add(self.judge.get(name), rate)
        self.pairs.extend(part.pairs)
        self.unrouted += part.unrouted

    def routing(self) -> RoutingReport:
        return routing_report(self.pairs, self.unrouted)

    def metrics(self) -> dict[str, Rate]:
        routing = self.routing()
        whole = {"routing.accuracy": routing.accuracy, "routing.macroF1": routing.macro_f1}
        return {**{name: whole[name] if rate is None else rate for name, rate in self.sums.items()}, **self.judge}


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


class Reader(Protocol):
    """Anything fed a run's results one at a time: a RunTally, a report's writer."""

    def add(self, result: CaseResult) -> None: ...


def run_metrics(
    results: Sequence[CaseResult], cases: Sequence[GoldenCase], thresholds: Mapping[str, Threshold] = THRESHOLDS,
    readers: Sequence[Reader] = (),
) -> RunMetrics:
    """Overall and per-group metrics, routing detail, every safety violation, and the flags.

    Each result is read once, CHUNK at a time (see CHUNK); each of ``readers`` is
    fed every result in the same read (one decode for every number and file of a run)."""
    read = MetricsReader(cases, thresholds, readers)
    for result in results:
        read.add(result)
    return read.finish()


class MetricsReader:
    """``run_metrics`` fed one result at a time, in the run's order: the same sums, in the
    same chunks, so the same numbers. ``add`` may give the result's case (the one it was
    run on), which spares looking it up in ``cases`` (a compact dataset validates it again).

        >>> read = MetricsReader([])
        >>> read.add(CaseResult("c", "pass"))
        >>> read.finish().overall["passRate"].value
        1.0
    """

    def __init__(self, cases: Sequence[GoldenCase], thresholds: Mapping[str, Threshold] = THRESHOLDS,
                 readers: Sequence[Reader] = ()) -> None:
        self._tally, self._find = _MetricsTally(), case_finder(cases)
        self._thresholds, self._readers = thresholds, readers
        self._chunk: list[CaseResult] = []
        self._given: dict[str, GoldenCase] = {}  # the cases given with the chunk's results
        self._count = 0

    def add(self, result: CaseResult, case: GoldenCase | None = None) -> None:
        for reader in self._readers:
            reader.add(result)
        self._chunk.append(result)
        if case is not None:
            self._given[result.case_id] = case
        if len(self._chunk) == CHUNK:
            self._add_chunk()

    def finish(self) -> RunMetrics:
        if self._chunk or not self._count:  # no results: one empty chunk, so every metric is still named
            self._add_chunk()
        return self._tally.finish(self._count, self._thresholds)

    def _add_chunk(self) -> None:
        given, find = self._given, self._find

        def given_or_found(case_id: str) -> GoldenCase | None:
            case = given.get(case_id)
            return find(case_id) if case is None else case

        self._tally.add(self._chunk, given_or_found if given else find)
        self._count += len(self._chunk)
        self._chunk, self._given = [], {}


class _MetricsTally:
    """run_metrics' running sums: the run's scope, one per group, and what only the run has."""

    def __init__(self, dimensions: Sequence[str] = DIMENSIONS) -> None:
        self.overall = _Scope()
        self.groups: dict[str, dict[str, _Scope]] = {d: {} for d in dimensions}  # names in first-seen order
        self.violations: list[Violation] = []
        self.traced = 0
        self.seen_k: set[int] = set()
        self.thresholds: dict[str, Threshold] = {}

    def add(self, chunk: Sequence[CaseResult], find: Find) -> None:
        known = _known(chunk, find)
        items = _traced(known)
        found = found_violations(items)
        self.violations += [v for violations in found if violations for v in violations]
        self.traced += len(items)
        self.seen_k.update([len(reply.retrieved_sources) for _, reply in items])
        self.thresholds.update(judge_thresholds(chunk))
        self._add_cells(known, found)
        if len(known) < len(chunk):  # results of cases not in the dataset: in the run's pass rate, in no group
            ids = {r.case_id for r, _ in known}
            self.overall.add([r for r in chunk if r.case_id not in ids], [])

    def _add_cells(self, known: Known, found: Found) -> None:
        """Each metric measured once per result: on the cell of results that share
        every dimension's group, then added to the run and to each of those groups.
        WHY cells: measuring the run and every group apart read each result five times.
        ``found``: each traced result's violations (``found_violations``), in order."""
        dimensions = list(self.groups)
        cells: dict[tuple[str, ...], tuple[list[CaseResult], list[Traced], list[list[Violation] | None]]] = {}
        each = iter(found)  # one entry per result with a reply, in order
        for r, case in known:
            names = tuple([str(getattr(case, d)) for d in dimensions])  # WHY a list: a generator's frame costs more
            cell = cells.get(names)
            if cell is None:
                cell = cells[names] = ([], [], [])
            cell[0].append(r)
            if r.reply is not None:
                cell[1].append((case, r.reply.without_handoffs()))
                cell[2].append(next(each))
        for names, (results, items, violations) in cells.items():
            part = _Part.of(results, items, violations)
            self.overall.add_part(part)
            for dimension, name in zip(dimensions, names):
                self.groups[dimension].setdefault(name, _Scope()).add_part(part)

    def finish(self, cases: int, thresholds: Mapping[str, Threshold]) -> RunMetrics:
        thresholds = {**thresholds, **self.thresholds}
        overall = self.overall.metrics()
        groups = [Group(dimension, name, scope.metrics())
                  for dimension, scopes in self.groups.items() for name, scope in scopes.items()]
        flags = flag("overall", overall, thresholds) + [f for g in groups for f in flag(g.scope, g.metrics, thresholds)]
        return RunMetrics(overall=overall, routing=self.overall.routing(), violations=tuple(self.violations),
                          groups=tuple(groups), flags=tuple(flags), cases=cases, traced=self.traced,
                          k=tuple(sorted(self.seen_k)))
