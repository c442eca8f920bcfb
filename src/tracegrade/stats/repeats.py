"""Statistics over repetitions: the same case run N times.

    >>> from tracegrade.core.results import CaseResult
    >>> runs = [CaseResult("a", "pass", scores={"correctness": 5}, repeat=0),
    ...         CaseResult("a", "fail", scores={"correctness": 3}, repeat=1)]
    >>> spread = case_spreads(runs)[0]
    >>> spread.means["correctness"], spread.variances["correctness"]
    (4.0, 2.0)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean, stdev, variance
from typing import Mapping, Sequence

from tracegrade.stats.tally import RunTally
from tracegrade.core.results import CaseResult


@dataclass(frozen=True)
class CaseSpread:
    """One case over its repetitions: pass rate, and each score's mean and
    sample variance (0 with a single scored repetition)."""

    case_id: str
    runs: int
    pass_rate: float
    means: Mapping[str, float]
    variances: Mapping[str, float]


def by_case(results: Sequence[CaseResult]) -> dict[str, list[CaseResult]]:
    """Results grouped by case id, in first-seen order."""
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        groups[r.case_id].append(r)
    return dict(groups)


def case_spreads(results: Sequence[CaseResult]) -> list[CaseSpread]:
    # WHY (passed, scores) per case, not the results: a stored run's results are
    # decoded on read, and holding them all was the whole run in memory.
    by_id: dict[str, list[tuple[bool, Mapping[str, float] | None]]] = defaultdict(list)
    for r in results:
        by_id[r.case_id].append((r.passed, r.scores))
    spreads = []
    for case_id, runs in by_id.items():
        scored = [scores for _, scores in runs if scores is not None]
        metrics = list(scored[0]) if scored else []
        values = {m: [s[m] for s in scored] for m in metrics}
        spreads.append(CaseSpread(
            case_id, len(runs), sum(passed for passed, _ in runs) / len(runs),
            {m: fmean(v) for m, v in values.items()},
            {m: float(variance(v)) if len(v) > 1 else 0.0 for m, v in values.items()},
        ))
    return spreads


def run_level(results: Sequence[CaseResult]) -> dict[str, tuple[float, float]]:
    """Each quality metric computed per repetition, then mean and sample
    standard deviation across repetitions (sd 0 with one repetition)."""
    per_repeat: dict[int, RunTally] = defaultdict(RunTally)  # tallies, not the results: see case_spreads
    for r in results:
        per_repeat[r.repeat].add(r)
    series: dict[str, list[float]] = defaultdict(list)
    for _, repetition in sorted(per_repeat.items()):
        for metric, value in repetition.quality().items():
            series[metric].append(value)
    return {m: (fmean(v), stdev(v) if len(v) > 1 else 0.0) for m, v in series.items()}
