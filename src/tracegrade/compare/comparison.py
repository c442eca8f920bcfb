"""Baseline vs candidate, case by case: the facts a gate decides on.

    >>> # comparison = compare_runs(baseline_run, candidate_run)

Cases are aligned by id. Two runs on different dataset versions are refused
unless ``allow_dataset_change``; then only the cases present in both with the
same content (case hash) are compared, and the notes say so. With repetitions,
a case's pair is its mean over repetitions, and it counts as passed when it
passed at least half of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean
from typing import Callable, Mapping, Sequence

from tracegrade.stats import aggregate, paired as pairstats
from tracegrade.core.errors import ConfigError
from tracegrade.stats.repeats import by_case
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.stats.summary import metric_names
from tracegrade.stats.tally import tally

GROUP_DIMENSIONS = ("split", "category", "risk")


@dataclass(frozen=True)
class PairedTests:
    """Statistics on the per-case pairs of one metric."""

    pairs: int
    t_test: pairstats.TestResult | None
    wilcoxon: pairstats.TestResult | None
    mcnemar: pairstats.TestResult | None
    mean_difference_ci: pairstats.Interval
    significant: bool  # Wilcoxon (scores) or McNemar (pass/fail) p < alpha


@dataclass(frozen=True)
class RiseTest:
    """Did a per-case quantity (seconds, USD) rise? A one-sided Wilcoxon signed-rank
    test on the case pairs: the same case in both runs, its mean over repetitions."""

    pairs: int
    test: pairstats.TestResult


@dataclass(frozen=True)
class MetricRow:
    name: str
    baseline: float | None
    candidate: float | None
    tests: PairedTests | None

    @property
    def delta(self) -> float | None:
        return None if self.baseline is None or self.candidate is None else self.candidate - self.baseline

    @property
    def relative(self) -> float | None:
        """delta / baseline; None when there is no baseline to be relative to."""
        return None if self.delta is None or not self.baseline else self.delta / self.baseline


@dataclass(frozen=True)
class GroupRow:
    dimension: str
    value: str
    cases: int
    baseline_pass: float
    candidate_pass: float
    newly_failing: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.dimension}={self.value}"


@dataclass(frozen=True)
class Comparison:
    baseline: Manifest
    candidate: Manifest
    case_ids: tuple[str, ...]
    notes: tuple[str, ...]
    metrics: tuple[MetricRow, ...]
    latency: Mapping[str, tuple[float, float]]  # p50/p95/p99 -> (baseline, candidate) seconds
    cost_per_case: tuple[float, float]
    latency_rise: RiseTest  # per-case seconds, candidate > baseline
    cost_rise: RiseTest  # per-case USD, candidate > baseline
    groups: tuple[GroupRow, ...]
    newly_failing: tuple[str, ...]
    newly_passing: tuple[str, ...]
    candidate_results: tuple[CaseResult, ...]  # every candidate case, for the safety rules

    def metric(self, name: str) -> MetricRow | None:
        return next((m for m in self.metrics if m.name == name), None)


def compare_runs(
    baseline: Run, candidate: Run, allow_dataset_change: bool = False,
    alpha: float = 0.05, resamples: int = 10_000, seed: int = 0,
) -> Comparison:
    ids, notes = align(baseline, candidate, allow_dataset_change)
    base, cand = _only(baseline.results, ids), _only(candidate.results, ids)
    base_pass, cand_pass = _case_passed(base), _case_passed(cand)
    return Comparison(
        baseline.manifest, candidate.manifest, ids, tuple(notes),
        _metric_rows(base, cand, alpha, resamples, seed),
        {q: (aggregate.latency(base)[q], aggregate.latency(cand)[q]) for q in ("p50", "p95", "p99")},
        (aggregate.cost(base)["perCaseUsd"], aggregate.cost(cand)["perCaseUsd"]),
        _rise_test(base, cand, lambda r: r.seconds),
        _rise_test(base, cand, lambda r: r.agent_cost_usd + r.judge_cost_usd),
        _group_rows(base, cand, base_pass, cand_pass),
        tuple(i for i in ids if base_pass.get(i) and cand_pass.get(i) is False),
        tuple(i for i in ids if base_pass.get(i) is False and cand_pass.get(i)),
        candidate.results,
    )


def align(baseline: Run, candidate: Run, allow_dataset_change: bool) -> tuple[tuple[str, ...], list[str]]:
    """The case ids to compare, in the candidate's order, and what was left out and why."""
    b, c = baseline.manifest, candidate.manifest
    base_hash = {r.case_id: r.case_hash for r in baseline.results}
    cand_hash = {r.case_id: r.case_hash for r in candidate.results}
    shared = [i for i in cand_hash if i in base_hash]
    notes = []
    if b.dataset_version != c.dataset_version:
        if not allow_dataset_change:
            raise ConfigError(f"the runs measured different dataset versions ({b.dataset_version} vs "
                              f"{c.dataset_version}); pass --allow-dataset-change to compare the unchanged cases")
        unchanged = [i for i in shared if base_hash[i] and base_hash[i] == cand_hash[i]]
        notes.append(f"dataset changed ({b.dataset_version} -> {c.dataset_version}): comparing only the "
                     f"{len(unchanged)} shared unchanged cases; {len(shared) - len(unchanged)} changed cases left out")
        shared = unchanged
    only_base, only_cand = set(base_hash) - set(cand_hash), set(cand_hash) - set(base_hash)
    if only_base or only_cand:
        notes.append(f"left out: {len(only_base)} cases only in the baseline, {len(only_cand)} only in the candidate")
    if b.judge_model != c.judge_model or b.rubric_hash != c.rubric_hash:
        notes.append(f"judge differs ({b.judge_model} rubric {b.rubric_hash} vs {c.judge_model} rubric "
                     f"{c.rubric_hash}): score changes may be the judge's")
    if not shared:
        raise ConfigError("the two runs have no case in common to compare")
    return tuple(shared), notes


def _only(results: Sequence[CaseResult], ids: Sequence[str]) -> list[CaseResult]:
    wanted = set(ids)
    return [r for r in results if r.case_id in wanted]


def _case_passed(results: Sequence[CaseResult]) -> dict[str, bool]:
    return {i: 2 * sum(r.passed for r in runs) >= len(runs) for i, runs in by_case(results).items()}


def _case_means(results: Sequence[CaseResult], value: Callable[[CaseResult], float | None]) -> dict[str, float]:
    means = {}
    for case_id, runs in by_case(results).items():
        values = [v for v in map(value, runs) if v is not None]
        if values:
            means[case_id] = fmean(values)
    return means


def _per_case_value(metric: str) -> Callable[[CaseResult], float | None]:
    if metric == "checkPassRate":
        return lambda r: aggregate.check_pass_rate([r])
    return lambda r: r.scores.get(metric) if r.scores is not None else None


def _metric_rows(base: Sequence[CaseResult], cand: Sequence[CaseResult], alpha: float, resamples: int, seed: int) -> tuple[MetricRow, ...]:
    base_metrics, cand_metrics = aggregate.quality_metrics(base), aggregate.quality_metrics(cand)
    rows = [MetricRow("taskSuccess", base_metrics.get("taskSuccess"), cand_metrics.get("taskSuccess"),
                      _pass_tests(base, cand, alpha, resamples, seed))]
    # The judge metrics either run has, from its results: a metric added to the rubric
    # shows up with no baseline value, one removed with no candidate value.
    judged = dict.fromkeys([*metric_names(base), *metric_names(cand)])
    for metric in ("checkPassRate", *judged):
        if metric in base_metrics or metric in cand_metrics:
            tests = _score_tests(_case_means(base, _per_case_value(metric)), _case_means(cand, _per_case_value(metric)),
                                 alpha, resamples, seed)
            rows.append(MetricRow(metric, base_metrics.get(metric), cand_metrics.get(metric), tests))
    return tuple(rows) + _pass_hat_rows(base, cand, alpha, resamples, seed)


def _pass_hat_rows(base: Sequence[CaseResult], cand: Sequence[CaseResult], alpha: float, resamples: int,
                   seed: int) -> tuple[MetricRow, ...]:
    """pass^k (stats/passk.py) for the k both runs measured, tested on the cases' own pass^k;
    none unless both runs repeated their cases."""
    b, c = tally(base), tally(cand)
    if len(b.repeats) < 2 or len(c.repeats) < 2:
        return ()
    b_run, c_run, b_cases, c_cases = b.pass_hat(), c.pass_hat(), b.case_pass_hat(), c.case_pass_hat()
    return tuple(
        MetricRow(f"pass^{k}", b_run[k], c_run[k],
                  _score_tests({i: v[k] for i, v in b_cases.items() if k in v},
                               {i: v[k] for i, v in c_cases.items() if k in v}, alpha, resamples, seed))
        for k in sorted(b_run.keys() & c_run.keys()))


def _pass_tests(base: Sequence[CaseResult], cand: Sequence[CaseResult], alpha: float, resamples: int, seed: int) -> PairedTests:
    b, c = _case_passed(base), _case_passed(cand)
    ids = [i for i in c if i in b]
    mcnemar = pairstats.mcnemar_exact(sum(b[i] and not c[i] for i in ids), sum(c[i] and not b[i] for i in ids))
    diffs = [float(c[i]) - float(b[i]) for i in ids]
    ci = pairstats.bootstrap_mean_ci(diffs, resamples=resamples, seed=seed)
    return PairedTests(len(ids), None, None, mcnemar, ci, mcnemar.p_value < alpha)


def _score_tests(b: Mapping[str, float], c: Mapping[str, float], alpha: float, resamples: int, seed: int) -> PairedTests | None:
    ids = [i for i in c if i in b]
    if not ids:
        return None
    base, cand = [b[i] for i in ids], [c[i] for i in ids]
    wilcoxon = pairstats.wilcoxon_signed_rank(base, cand)
    ci = pairstats.bootstrap_mean_ci(pairstats.differences(base, cand), resamples=resamples, seed=seed)
    return PairedTests(len(ids), pairstats.paired_t_test(base, cand), wilcoxon, None, ci, wilcoxon.p_value < alpha)


def _rise_test(base: Sequence[CaseResult], cand: Sequence[CaseResult], value: Callable[[CaseResult], float | None]) -> RiseTest:
    b, c = _case_means(base, value), _case_means(cand, value)
    ids = [i for i in c if i in b]
    test = pairstats.wilcoxon_signed_rank([b[i] for i in ids], [c[i] for i in ids], alternative="greater")
    return RiseTest(len(ids), test)


def _group_rows(base: Sequence[CaseResult], cand: Sequence[CaseResult], base_pass: Mapping[str, bool], cand_pass: Mapping[str, bool]) -> tuple[GroupRow, ...]:
    rows = []
    for dimension in GROUP_DIMENSIONS:
        values: dict[str, list[str]] = {}
        for r in cand:
            label = getattr(r, dimension) or "(none)"
            if r.case_id in base_pass and r.case_id not in values.setdefault(label, []):
                values[label].append(r.case_id)
        for value, ids in sorted(values.items()):
            rows.append(GroupRow(
                dimension, value, len(ids),
                sum(base_pass[i] for i in ids) / len(ids), sum(cand_pass[i] for i in ids) / len(ids),
                tuple(i for i in ids if base_pass[i] and not cand_pass[i]),
            ))
    return tuple(rows)
