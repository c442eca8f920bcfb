"""Judge calibration: is the judge's arithmetic worth gating on?

    >>> from tracegrade.judge.labels import load_labels
    >>> items, version = load_labels()
    >>> len(good_items(items)) >= 10
    True

Three measurements, one report:

- agreement with humans: the judge scores every labelled answer with the same
  evidence the annotator saw; per metric Spearman rho, MAE, exact agreement,
  Cohen's and quadratic kappa, a confusion matrix; and, where two annotators
  scored the same items, how well they agree with each other.
- known-bad separation: every answer the humans scored 5 everywhere is broken
  three ways (``perturb``) and judged again with the question and evidence
  unchanged; each break must lower each of its target metrics by ``min_drop``.
- stability: with ``samples`` > 1 every input is judged k times (k seeds) and
  the score variance per metric is reported.

The judge score of an item is its first usable sample (what a run would have
scored); breaks compare the mean of the samples. An input the judge never
scored is listed and left out of agreement; a break whose original or broken
answer is unscored counts as not separated.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field, replace
from statistics import mean
from typing import Any, Callable, Mapping, Sequence

from tracegrade.judge.agreement import (
    cohen_kappa, confusion_matrix, exact_agreement, mae, sample_variance, spearman,
)
from tracegrade.core.results import Scores
from tracegrade.judge.scoring import MAX_SCORE, METRICS, MIN_SCORE, Judge, evidence
from tracegrade.judge.labels import LabelledItem
from tracegrade.judge.perturb import BREAK_KINDS, TARGETS, all_breaks
from tracegrade.store.runstore import RunStore

LABELS = tuple(range(MIN_SCORE, MAX_SCORE + 1))
ORIGINAL = "original"
SEED_STEP = 1000  # far apart, so sample i's retry seeds never meet sample i+1's


@dataclass(frozen=True)
class Thresholds:
    min_rho: float = 0.8
    max_mae: float = 0.2
    min_drop: float = 2.0


@dataclass(frozen=True)
class Judged:
    """One input (a labelled answer or a break of it) judged ``len(samples)`` times."""

    item_id: str
    variant: str  # "original" or a break kind
    answer: str
    samples: tuple[Mapping[str, int] | None, ...]  # None: that sample was unscored
    problems: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()  # the judge's one-line reason for each usable sample

    @property
    def scored(self) -> list[Mapping[str, int]]:
        return [s for s in self.samples if s is not None]

    def first(self) -> Mapping[str, int] | None:
        return next(iter(self.scored), None)

    def mean(self, metric: str) -> float | None:
        return mean(s[metric] for s in self.scored) if self.scored else None


@dataclass(frozen=True)
class MetricAgreement:
    metric: str
    n: int
    spearman: float
    mae: float
    exact: float
    kappa: float
    weighted_kappa: float
    confusion: tuple[tuple[int, ...], ...]  # rows: reference (human), columns: the other rater

    def failures(self, thresholds: Thresholds) -> list[str]:
        problems = []
        if not self.spearman >= thresholds.min_rho:  # nan fails too
            problems.append(f"{self.metric}: Spearman rho {_num(self.spearman)} < {thresholds.min_rho:.2f}")
        if not self.mae <= thresholds.max_mae:
            problems.append(f"{self.metric}: MAE {_num(self.mae)} > {thresholds.max_mae:.2f}")
        return problems


@dataclass(frozen=True)
class BreakResult:
    """One break of one good answer: every metric before and after (mean of samples)."""

    item_id: str
    kind: str
    answer: str
    original: Mapping[str, float | None]
    broken: Mapping[str, float | None]

    @property
    def targets(self) -> tuple[str, ...]:
        return TARGETS[self.kind]  # type: ignore[index]

    def drop(self, metric: str) -> float | None:
        before, after = self.original.get(metric), self.broken.get(metric)
        return None if before is None or after is None else before - after

    def separated(self, metric: str, min_drop: float) -> bool:
        drop = self.drop(metric)
        return drop is not None and drop >= min_drop


@dataclass(frozen=True)
class Calibration:
    judge_model: str
    rubric_hash: str
    labels_version: str
    item_count: int
    samples: int
    temperature: float
    thresholds: Thresholds
    reference: str  # the annotator the judge is compared with
    agreement: tuple[MetricAgreement, ...]
    annotators: tuple[str, ...] = ()  # the two annotators compared with each other, if any
    annotator_agreement: tuple[MetricAgreement, ...] = ()
    breaks: tuple[BreakResult, ...] = ()
    variance: Mapping[str, float] = field(default_factory=dict)
    unscored: tuple[tuple[str, str], ...] = ()  # (input, why)
    judged: tuple[Judged, ...] = ()  # every labelled answer as the judge scored it
    partial: bool = False  # --limit or --break-limit or --no-breaks: not the whole file

    @property
    def failures(self) -> list[str]:
        problems = [p for a in self.agreement for p in a.failures(self.thresholds)]
        if not self.agreement:
            problems.append("no labelled item was scored")
        for kind, metric, separated, total in separation(self.breaks, self.thresholds.min_drop):
            if separated < total:
                problems.append(f"{kind} -> {metric}: {separated} of {total} breaks lowered it "
                                f"by >= {self.thresholds.min_drop:g}")
        return problems

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {
            "judgeModel": self.judge_model, "rubricHash": self.rubric_hash, "labelsVersion": self.labels_version,
            "itemCount": self.item_count, "samples": self.samples, "temperature": self.temperature,
            "thresholds": vars(self.thresholds), "reference": self.reference, "partial": self.partial,
            "passed": self.passed, "failures": self.failures,
            "agreement": [_agreement_json(a) for a in self.agreement],
            "annotators": list(self.annotators),
            "annotatorAgreement": [_agreement_json(a) for a in self.annotator_agreement],
            "breaks": [{"itemId": b.item_id, "kind": b.kind, "targets": list(b.targets), "answer": b.answer,
                        "original": dict(b.original), "broken": dict(b.broken)} for b in self.breaks],
            "variance": dict(self.variance),
            "unscored": [{"input": i, "reason": r} for i, r in self.unscored],
            "items": [{"itemId": j.item_id, "judge": j.first(), "samples": list(j.samples),
                       "reason": next(iter(j.reasons), "")} for j in self.judged],
        }


def calibration_problem(store: RunStore, judge_model: str, rubric_hash: str) -> str | None:
    """Why this judge's scores are not validated, or None when its latest calibration passed in full."""
    record = store.latest_calibration(judge_model, rubric_hash)
    what = f"judge {judge_model} with rubric {rubric_hash}"
    if record is None:
        return f"{what} has no calibration in {store.url} (run `tracegrade calibrate`)"
    if not record.passed:
        failures = record.result.get("failures") or ["thresholds missed"]
        more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
        return f"{what} failed its latest calibration ({record.created_at}): {failures[0]}{more}"
    if record.result.get("partial"):
        return f"{what} passed only a partial calibration ({record.created_at}: --limit/--break-limit/--no-breaks)"
    return None


def good_items(items: Sequence[LabelledItem]) -> list[LabelledItem]:
    """Answers every annotator scored 5 on every metric: the ones worth breaking."""
    return [i for i in items if all(v == MAX_SCORE for label in i.labels for v in label.scores.values())]


async def calibrate(
    items: Sequence[LabelledItem],
    judge: Judge,
    labels_version: str = "",
    samples: int = 1,
    thresholds: Thresholds = Thresholds(),
    breaks: bool = True,
    break_limit: int | None = None,
    concurrency: int = 2,
    partial: bool = False,
    on_judged: Callable[[Judged], None] | None = None,
) -> Calibration:
    """Judge every labelled item (and the breaks of the good ones) ``samples`` times and measure."""
    if samples < 1:
        raise ValueError("samples must be at least 1")
    to_break = good_items(items)[:break_limit] if breaks else []
    inputs = [(i, ORIGINAL, i.answer) for i in items]
    inputs += [(i, b.kind, b.answer) for i in to_break for b in all_breaks(i.question, i.answer, _evidence(i))]
    judged = await _judge_all(inputs, judge, samples, concurrency, on_judged)
    originals = {j.item_id: j for j in judged if j.variant == ORIGINAL}
    reference = items[0].labels[0].annotator if items else ""
    pair = annotator_pair(items)
    return Calibration(
        judge_model=judge.model.model_id, rubric_hash=judge.rubric_hash, labels_version=labels_version,
        item_count=len(items), samples=samples, temperature=judge.temperature, thresholds=thresholds,
        reference=reference,
        agreement=judge_agreement(items, originals),
        annotators=pair,
        annotator_agreement=annotator_agreement(items, *pair) if pair else (),
        breaks=tuple(_break_result(j, originals[j.item_id]) for j in judged if j.variant != ORIGINAL),
        variance=score_variance(judged) if samples > 1 else {},
        unscored=tuple((f"{j.item_id}/{j.variant}", j.problems[-1]) for j in judged if not j.scored),
        judged=tuple(originals.values()),
        partial=partial or len(to_break) < len(good_items(items)),
    )


async def _judge_all(inputs, judge: Judge, samples: int, concurrency: int, on_judged) -> list[Judged]:
    gate = asyncio.Semaphore(max(1, concurrency))
    results: list[Judged | None] = [None] * len(inputs)

    async def one(index: int, item: LabelledItem, variant: str, answer: str) -> None:
        async with gate:
            results[index] = await judge_input(item, variant, answer, judge, samples)
        if on_judged is not None:
            on_judged(results[index])

    async with asyncio.TaskGroup() as group:
        for index, (item, variant, answer) in enumerate(inputs):
            group.create_task(one(index, item, variant, answer))
    return [r for r in results if r is not None]


async def judge_input(item: LabelledItem, variant: str, answer: str, judge: Judge, samples: int) -> Judged:
    """One input judged ``samples`` times; sample 0 is exactly the judge a run uses."""
    scores, problems, reasons = [], [], []
    for sample in range(samples):
        outcome = await replace(judge, seed=judge.seed + sample * SEED_STEP).score(item.case(), item.reply(answer))
        scores.append(dict(outcome.values) if isinstance(outcome, Scores) else None)
        (reasons if isinstance(outcome, Scores) else problems).append(outcome.reason)
    return Judged(item.id, variant, answer, tuple(scores), tuple(problems), tuple(reasons))


def judge_agreement(items: Sequence[LabelledItem], judged: Mapping[str, Judged]) -> tuple[MetricAgreement, ...]:
    """Each item's first label (the reference annotator) against the judge's first usable sample."""
    pairs = [(i.labels[0].scores, judged[i.id].first()) for i in items if judged[i.id].first() is not None]
    if not pairs:
        return ()
    return tuple(metric_agreement(m, [h[m] for h, _ in pairs], [j[m] for _, j in pairs]) for m in METRICS)


def annotator_pair(items: Sequence[LabelledItem]) -> tuple[str, ...]:
    """The two annotators who scored the most items in common, or () if no item has two."""
    counts: dict[tuple[str, str], int] = {}
    for item in items:
        names = [label.annotator for label in item.labels]
        for a_index, a in enumerate(names):
            for b in names[a_index + 1:]:
                counts[(a, b)] = counts.get((a, b), 0) + 1
    return max(counts, key=counts.__getitem__) if counts else ()


def annotator_agreement(items: Sequence[LabelledItem], first: str, second: str) -> tuple[MetricAgreement, ...]:
    both = [(i.label_by(first), i.label_by(second)) for i in items if i.label_by(first) and i.label_by(second)]
    return tuple(metric_agreement(m, [a.scores[m] for a, _ in both], [b.scores[m] for _, b in both])
                 for m in METRICS)


def metric_agreement(metric: str, reference: Sequence[int], other: Sequence[int]) -> MetricAgreement:
    return MetricAgreement(
        metric=metric, n=len(reference), spearman=spearman(reference, other), mae=mae(reference, other),
        exact=exact_agreement(reference, other), kappa=cohen_kappa(reference, other, LABELS),
        weighted_kappa=cohen_kappa(reference, other, LABELS, "quadratic"),
        confusion=tuple(tuple(row) for row in confusion_matrix(reference, other, LABELS)),
    )


def separation(breaks: Sequence[BreakResult], min_drop: float) -> list[tuple[str, str, int, int]]:
    """Per break kind and target metric: (kind, metric, how many separated, how many breaks)."""
    rows = []
    for kind in BREAK_KINDS:
        of_kind = [b for b in breaks if b.kind == kind]
        for metric in TARGETS[kind] if of_kind else ():
            rows.append((kind, metric, sum(b.separated(metric, min_drop) for b in of_kind), len(of_kind)))
    return rows


def score_variance(judged: Sequence[Judged]) -> dict[str, float]:
    """Mean over inputs (with 2+ usable samples) of each metric's sample variance."""
    repeated = [j for j in judged if len(j.scored) > 1]
    if not repeated:
        return {m: math.nan for m in METRICS}
    return {m: mean(sample_variance([s[m] for s in j.scored]) for j in repeated) for m in METRICS}


def _break_result(broken: Judged, original: Judged) -> BreakResult:
    return BreakResult(broken.item_id, broken.variant, broken.answer,
                       {m: original.mean(m) for m in METRICS}, {m: broken.mean(m) for m in METRICS})


def _evidence(item: LabelledItem) -> str:
    return evidence(item.case(), item.reply(answer=""))


def _agreement_json(a: MetricAgreement) -> dict[str, Any]:
    clean = lambda x: None if math.isnan(x) else round(x, 4)
    return {"metric": a.metric, "n": a.n, "spearman": clean(a.spearman), "mae": clean(a.mae),
            "exact": clean(a.exact), "kappa": clean(a.kappa), "weightedKappa": clean(a.weighted_kappa),
            "confusion": [list(row) for row in a.confusion]}


def _num(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.2f}"
