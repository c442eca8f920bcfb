"""Judge calibration: may each metric of this judge decide pass or fail?

    >>> from tracegrade.judge.labels import load_labels
    >>> items, version = load_labels()
    >>> len(good_items(items)) >= 10
    True

For a pass/fail tool the question is not "does the judge give the same number
as a human" but "does it tell the answers humans call good from the ones they
call bad". Per metric of the judge's rubric, over the labelled answers (a
human 4-5 or "good" is good, 1-2 or "bad" is bad):

- **AUC**: the chance that a good answer scores above a bad one;
- **balanced accuracy** at the metric's pass threshold (the mean of the good
  answers passed and the bad answers failed);
- **pairs ordered**: of the good and bad answers to the *same question*, the
  share where the good one scores higher (ties count as not ordered);
- Spearman rho against the human's 1..5 (rank-based, so it reads a probability
  too); MAE, exact agreement and kappas only for a 1..5 scale metric;
- with ``fit_thresholds``, a pass threshold fitted on the labels (the best
  balanced accuracy among the thresholds that fail at most ``max_false_fail``
  of the good answers), its balanced accuracy measured by cross-validation over
  folds of whole questions, so a threshold is never scored on the answers it
  was fitted to; a run then gates at it.

Known-bad breaks: every answer humans scored good on every metric is broken
three ways (``perturb``) and judged again; a break separates when it *fails*
its target metric. A metric **may gate** when it has enough good and bad
labels, separates them (``min_auc``; 0.7 is "acceptable discrimination" on the
usual scale), reaches ``min_balanced_accuracy`` at its threshold, and fails at
most ``max_false_fail`` of the good answers (what a gate costs: a red build on a
right answer); with fitted thresholds the last two are the cross-validated
numbers. Breaks a metric misses are its **blind spots**, listed; with
``min_break_share`` > 0 they also bar it from gating. ``tracegrade run`` reads that
per metric: a metric that may not gate is scored and shown but does not
decide pass or fail, and the run says so.

Labels may cover only some metrics; a metric with too few labels may not gate.
An input the judge could not score is listed and left out.
"""

from __future__ import annotations

import asyncio
import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from statistics import mean
from typing import Any, Callable, Mapping, Sequence

from tracegrade.core.results import MetricScore, Scores
from tracegrade.judge.agreement import (
    auc, balanced_accuracy, best_threshold, cohen_kappa, confusion_matrix, exact_agreement, mae, sample_variance,
    spearman,
)
from tracegrade.judge.attribution import MODEL, MODEL_ADDS, READS_MEANING, matched_pairs, part_aucs
from tracegrade.judge.combine import FOLDS, OutOfSample, cross_validate, fit, logistic, part_alone, question_folds
from tracegrade.judge.labels import HumanLabel, LabelledItem
from tracegrade.judge.overlap import word_overlap
from tracegrade.judge.perturb import BREAK_KINDS, TARGETS, all_breaks
from tracegrade.judge.prompt import section_texts
from tracegrade.judge.rubric import Rubric
from tracegrade.judge.scoring import Judge, evidence_overlap

LABELS = (1, 2, 3, 4, 5)
ORIGINAL = "original"
SEED_STEP = 1000  # far apart, so sample i's retry seeds never meet sample i+1's


@dataclass(frozen=True)
class Thresholds:
    """What a metric must reach to be allowed to gate."""

    min_auc: float = 0.7
    min_balanced_accuracy: float = 0.7
    max_false_fail: float = 0.2  # share of the good answers a gating metric may fail
    # Good and bad answers each. WHY 10: with 3 bad answers each one is a third of the bad
    # side's accuracy, so the balanced accuracy a gate is judged by moves 0.17 per answer.
    min_labels: int = 10
    # Known-bad breaks a metric must fail to gate. 0 by default: a break it misses is a
    # blind spot (reported), not a risk of failing good answers, which is what a gate costs.
    min_break_share: float = 0.0


@dataclass(frozen=True)
class Judged:
    """One input (a labelled answer or a break of it) judged ``len(samples)`` times."""

    item_id: str
    variant: str  # "original" or a break kind
    answer: str
    samples: tuple[Mapping[str, float] | None, ...]  # scored metric values; None: that sample was unscored
    problems: tuple[str, ...] = ()
    metrics: tuple[MetricScore, ...] = ()  # the first usable sample's metrics, with sources and details

    @property
    def scored(self) -> list[Mapping[str, float]]:
        return [s for s in self.samples if s is not None]

    def first(self) -> Mapping[str, float] | None:
        return next(iter(self.scored), None)

    def mean(self, metric: str) -> float | None:
        values = [s[metric] for s in self.scored if metric in s]
        return mean(values) if values else None


@dataclass(frozen=True)
class MetricAgreement:
    """Rank and point agreement of one metric between two raters (human vs judge, or two humans)."""

    metric: str
    n: int
    spearman: float
    mae: float = math.nan
    exact: float = math.nan
    kappa: float = math.nan
    weighted_kappa: float = math.nan
    confusion: tuple[tuple[int, ...], ...] = ()  # rows: reference (human), columns: the other rater


@dataclass(frozen=True)
class Combination:
    """A model-and-code metric's parts, each alone and combined by a fitted monotone logistic
    model (judge.combine), all cross-validated on folds of whole questions; ``weights`` are
    fitted on every labelled answer (what ``--write-weights`` writes)."""

    weights: Mapping[str, float]
    fitted: OutOfSample
    parts: Mapping[str, OutOfSample]
    rows: int

    def to_json(self) -> dict[str, Any]:
        def figures(o: OutOfSample) -> dict[str, float | None]:
            return {"cvAuc": _clean(o.auc), "cvBalancedAccuracy": _clean(o.balanced_accuracy),
                    "cvFalseFail": _clean(o.false_fail)}
        return {"weights": {k: round(v, 4) for k, v in self.weights.items()}, "rows": self.rows,
                "fitted": figures(self.fitted), "parts": {k: figures(v) for k, v in self.parts.items()}}


@dataclass(frozen=True)
class MetricCalibration:
    """Everything measured about one metric, and whether it may gate."""

    metric: str
    source: str  # probability | json | code (as the judge scored it)
    threshold: float  # the threshold a run gates at (fitted, when fitted)
    good: int
    bad: int
    auc: float
    balanced_accuracy: float
    false_fail: float  # share of the good answers scored below the threshold
    pairs_ordered: int
    pairs: int
    agreement: MetricAgreement | None
    fitted_threshold: float | None = None
    cv_balanced_accuracy: float | None = None
    cv_false_fail: float | None = None
    breaks_failed: int = 0
    breaks: int = 0
    may_gate: bool = False
    why_not: tuple[str, ...] = ()
    part_auc: Mapping[str, float] = field(default_factory=dict)  # each part alone (judge.attribution)
    matched_pairs: int = 0  # good/bad pairs matched on word overlap with the evidence
    matched_auc: float = math.nan
    matched_model_auc: float = math.nan
    notes: tuple[str, ...] = ()  # where the signal comes from, in words
    combination: Combination | None = None  # the parts combined by fit (judge.combine), side by side

    def to_json(self) -> dict[str, Any]:
        return {
            **({"combination": self.combination.to_json()} if self.combination else {}),
            "metric": self.metric, "source": self.source, "threshold": self.threshold, "good": self.good,
            "bad": self.bad, "auc": _clean(self.auc), "balancedAccuracy": _clean(self.balanced_accuracy),
            "falseFail": _clean(self.false_fail), "cvFalseFail": _clean(self.cv_false_fail),
            "pairsOrdered": self.pairs_ordered, "pairs": self.pairs,
            "agreement": _agreement_json(self.agreement) if self.agreement else None,
            "fittedThreshold": self.fitted_threshold, "cvBalancedAccuracy": _clean(self.cv_balanced_accuracy),
            "breaksFailed": self.breaks_failed, "breaks": self.breaks, "mayGate": self.may_gate,
            "whyNot": list(self.why_not), "partAuc": {k: _clean(v) for k, v in self.part_auc.items()},
            "matchedPairs": self.matched_pairs, "matchedAuc": _clean(self.matched_auc),
            "matchedModelAuc": _clean(self.matched_model_auc), "notes": list(self.notes),
        }


@dataclass(frozen=True)
class BreakResult:
    """One break of one good answer: every metric before and after (mean of samples)."""

    item_id: str
    kind: str
    answer: str
    original: Mapping[str, float | None]
    broken: Mapping[str, float | None]
    thresholds: Mapping[str, float] = field(default_factory=dict)

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(m for m in TARGETS[self.kind] if m in self.thresholds)  # type: ignore[index]

    def failed(self, metric: str) -> bool:
        """The broken answer fails ``metric`` (a not-scored break has not been caught)."""
        after = self.broken.get(metric)
        return after is not None and after < self.thresholds[metric]


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
    metrics: tuple[MetricCalibration, ...]
    annotators: tuple[str, ...] = ()  # the two annotators compared with each other, if any
    annotator_agreement: tuple[MetricAgreement, ...] = ()
    breaks: tuple[BreakResult, ...] = ()
    variance: Mapping[str, float] = field(default_factory=dict)
    unscored: tuple[tuple[str, str], ...] = ()  # (input, why)
    judged: tuple[Judged, ...] = ()  # every labelled answer as the judge scored it
    partial: bool = False  # --limit or --break-limit or --no-breaks: not the whole file
    fitted: bool = False  # thresholds fitted on the labels and adopted

    @property
    def failures(self) -> list[str]:
        problems = [f"{m.metric}: {why}" for m in self.metrics for why in m.why_not]
        if not self.judged or not any(j.scored for j in self.judged):
            problems.append("no labelled item was scored")
        return problems

    @property
    def passed(self) -> bool:
        return not self.failures

    def metric(self, name: str) -> MetricCalibration | None:
        return next((m for m in self.metrics if m.metric == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "judgeModel": self.judge_model, "rubricHash": self.rubric_hash, "labelsVersion": self.labels_version,
            "itemCount": self.item_count, "samples": self.samples, "temperature": self.temperature,
            "thresholds": vars(self.thresholds), "reference": self.reference, "partial": self.partial,
            "fitted": self.fitted, "passed": self.passed, "failures": self.failures,
            "metrics": [m.to_json() for m in self.metrics],
            "annotators": list(self.annotators),
            "annotatorAgreement": [_agreement_json(a) for a in self.annotator_agreement],
            "breaks": [{"itemId": b.item_id, "kind": b.kind, "targets": list(b.targets), "answer": b.answer,
                        "original": dict(b.original), "broken": dict(b.broken)} for b in self.breaks],
            "variance": dict(self.variance),
            "unscored": [{"input": i, "reason": r} for i, r in self.unscored],
            "items": [{"itemId": j.item_id, "judge": j.first(), "samples": list(j.samples),
                       "metrics": [m.to_json() for m in j.metrics]} for j in self.judged],
        }


# --- selecting what to judge -------------------------------------------------------------


def good_items(items: Sequence[LabelledItem]) -> list[LabelledItem]:
    """Answers every annotator called good on every metric they labelled: the ones worth breaking."""
    return [i for i in items if all(label.verdict(m) == "good" for label in i.labels for m in label.scores)]


# --- the measurement ---------------------------------------------------------------------


async def calibrate(
    items: Sequence[LabelledItem],
    judge: Judge,
    labels_version: str = "",
    samples: int = 1,
    thresholds: Thresholds = Thresholds(),
    breaks: bool = True,
    break_limit: int | None = None,
    concurrency: int = 1,
    partial: bool = False,
    fit_thresholds: bool = False,
    on_judged: Callable[[Judged], None] | None = None,
) -> Calibration:
    """Judge every labelled item (and the breaks of the good ones) ``samples`` times and measure."""
    if samples < 1:
        raise ValueError("samples must be at least 1")
    to_break = good_items(items)[:break_limit] if breaks else []
    inputs = [(i, ORIGINAL, i.answer) for i in items]
    inputs += [(i, b.kind, b.answer) for i in to_break for b in all_breaks(i.question, i.answer, evidence_of(i))]
    judged = await _judge_all(inputs, judge, samples, concurrency, on_judged)
    originals = {j.item_id: j for j in judged if j.variant == ORIGINAL}
    rubric_thresholds = {m.name: judge.thresholds.get(m.name, m.threshold) for m in judge.rubric.metrics}
    break_results = tuple(_break_result(j, originals[j.item_id], rubric_thresholds)
                          for j in judged if j.variant != ORIGINAL)
    pair = annotator_pair(items)
    return Calibration(
        judge_model=judge.model.model_id, rubric_hash=judge.rubric_hash, labels_version=labels_version,
        item_count=len(items), samples=samples, temperature=judge.temperature, thresholds=thresholds,
        reference=items[0].labels[0].annotator if items else "",
        metrics=tuple(combine_parts(measure_metric(m.name, items, originals, break_results, rubric_thresholds[m.name],
                                                   m.range, thresholds, fit_thresholds), items, originals,
                                    judge.rubric, thresholds) for m in judge.rubric.metrics),
        annotators=pair,
        annotator_agreement=annotator_agreement(items, *pair) if pair else (),
        breaks=break_results,
        variance=score_variance(judged, [m.name for m in judge.rubric.metrics]) if samples > 1 else {},
        unscored=tuple((f"{j.item_id}/{j.variant}", j.problems[-1]) for j in judged if not j.scored),
        judged=tuple(originals.values()),
        partial=partial or len(to_break) < len(good_items(items)),
        fitted=fit_thresholds,
    )


async def _judge_all(inputs: Sequence[tuple[LabelledItem, str, str]], judge: Judge, samples: int, concurrency: int,
                     on_judged: Callable[[Judged], None] | None) -> list[Judged]:
    gate = asyncio.Semaphore(max(1, concurrency))
    results: list[Judged | None] = [None] * len(inputs)

    async def one(index: int, item: LabelledItem, variant: str, answer: str) -> None:
        async with gate:
            judged = results[index] = await judge_input(item, variant, answer, judge, samples)
        if on_judged is not None:
            on_judged(judged)

    async with asyncio.TaskGroup() as group:
        for index, (item, variant, answer) in enumerate(inputs):
            group.create_task(one(index, item, variant, answer))
    return [r for r in results if r is not None]


async def judge_input(item: LabelledItem, variant: str, answer: str, judge: Judge, samples: int) -> Judged:
    """One input judged ``samples`` times; sample 0 gives exactly the values a run's judge gives.
    WHY ask_decided: the model is asked where code already decided too, so that
    attribution measures the model's part on every answer, not only on the ones code let through."""
    values: list[Mapping[str, float] | None] = []
    problems: list[str] = []
    metrics: tuple[MetricScore, ...] = ()
    for sample in range(samples):
        outcome = await replace(judge, seed=judge.seed + sample * SEED_STEP, ask_decided=True).score(item.case(), item.reply(answer))
        if isinstance(outcome, Scores):
            values.append(outcome.values)
            metrics = metrics or outcome.metrics
        else:
            values.append(None)
            problems.append(outcome.reason)
    return Judged(item.id, variant, answer, tuple(values), tuple(problems), metrics)


def measure_metric(
    name: str, items: Sequence[LabelledItem], judged: Mapping[str, Judged], breaks: Sequence[BreakResult],
    threshold: float, scale: tuple[float, float], bars: Thresholds, fit: bool,
) -> MetricCalibration:
    """One metric's numbers and its gate verdict."""
    rows = [(i, verdict, v) for i in items
            if (verdict := i.verdict(name)) is not None and (v := _value(judged.get(i.id), name)) is not None]
    good = [v for _, verdict, v in rows if verdict == "good"]
    bad = [v for _, verdict, v in rows if verdict == "bad"]
    ordered, pairs = pairs_ordered(rows)
    # WHY constrained: the threshold of best balanced accuracy alone failed a third of
    # the right answers on the shipped labels; a gate must first not fail good answers.
    fitted = best_threshold(good, bad, bars.max_false_fail) if good and bad else None
    cv, cv_false_fail = cross_validated(rows, bars.max_false_fail) if good and bad else (None, None)
    used = fitted if fit and fitted is not None else threshold
    aimed = [b for b in breaks if name in b.targets]
    failed = sum(b.failed(name) for b in aimed)
    result = MetricCalibration(
        metric=name, source=_source(judged, name), threshold=used, good=len(good), bad=len(bad),
        auc=auc(good, bad), balanced_accuracy=balanced_accuracy(good, bad, used),
        false_fail=sum(v < used for v in good) / len(good) if good else math.nan, pairs_ordered=ordered,
        pairs=pairs, agreement=_agreement(name, items, judged, scale), fitted_threshold=fitted,
        cv_balanced_accuracy=cv, cv_false_fail=cv_false_fail, breaks_failed=failed, breaks=len(aimed),
    )
    result = _attributed(result, rows, judged, bars)
    why = _why_not(result, bars, fit)
    return replace(result, may_gate=not why, why_not=tuple(why))


def _attributed(m: MetricCalibration, rows: Sequence[tuple[LabelledItem, str, float]],
                judged: Mapping[str, Judged], bars: Thresholds) -> MetricCalibration:
    """Each part's AUC alone, the AUC on answers matched on word overlap, and the notes."""
    parts = {item.id: _parts(judged.get(item.id), m.metric) for item, _, _ in rows}
    by_part = part_aucs([(parts[item.id], verdict) for item, verdict, _ in rows])
    value = {item.id: v for item, _, v in rows}
    pairs = matched_pairs([(item.id, _overlap(item), verdict) for item, verdict, _ in rows])
    matched = auc([value[g] for g, _ in pairs], [value[b] for _, b in pairs]) if pairs else math.nan
    model = [(parts[g].get(MODEL), parts[b].get(MODEL)) for g, b in pairs]
    matched_model = auc([g for g, _ in model if g is not None], [b for _, b in model if b is not None]) \
        if pairs and all(g is not None and b is not None for g, b in model) else math.nan
    notes = []
    if len(by_part) > 1:
        notes.append("parts alone: " + ", ".join(f"{k} AUC {_num(v)}" for k, v in by_part.items()))
    if _from_code(by_part, m.auc, bars):
        notes.append(f"the separation comes from code: the model part alone reaches AUC {by_part[MODEL]:.3f}")
    if len(pairs) >= bars.min_labels and not matched >= READS_MEANING:
        of_model = "" if math.isnan(matched_model) else f", model part {_num(matched_model)}"
        notes.append(f"on {len(pairs)} good/bad pairs matched on word overlap with the evidence it reaches AUC "
                     f"{_num(matched)}{of_model}: it does not tell them apart by meaning")
    return replace(m, part_auc=by_part, matched_pairs=len(pairs), matched_auc=matched,
                   matched_model_auc=matched_model, notes=tuple(notes))


def combine_parts(m: MetricCalibration, items: Sequence[LabelledItem], judged: Mapping[str, Judged],
                  rubric: Rubric, bars: Thresholds) -> MetricCalibration:
    """``m`` with its parts combined by fit, for a metric scored by the model and by code."""
    spec = rubric.metric(m.metric)
    if not spec.model_and_code:
        return m
    rows = []
    for item in items:
        verdict, parts = item.verdict(m.metric), _parts(judged.get(item.id), m.metric)
        if verdict in ("good", "bad") and {MODEL, "code"} <= parts.keys():
            # WHY computed here when the score lacks it: a rubric that neither asks for overlap
            # nor weighs it keeps no overlap part, and the fit must be free to weigh it.
            parts.setdefault("overlap", evidence_overlap(rubric, spec, section_texts(item.case(), item.reply())))
            rows.append((item.case_id, parts, verdict == "good"))
    if not any(good for _, _, good in rows) or all(good for _, _, good in rows):
        return m
    names = [MODEL, "code", "overlap"]
    return replace(m, combination=Combination(
        weights=fit([(p, g) for _, p, g in rows], names),
        fitted=cross_validate(rows, logistic(names), bars.max_false_fail),
        parts={n: cross_validate(rows, part_alone(n), bars.max_false_fail) for n in names}, rows=len(rows)))


def _from_code(part_auc: Mapping[str, float], metric_auc: float, bars: Thresholds) -> bool:
    """A model-and-code metric that separates while its model part alone stays under ``MODEL_ADDS``."""
    return MODEL in part_auc and len(part_auc) > 1 and metric_auc >= bars.min_auc and not part_auc[MODEL] >= MODEL_ADDS


def _parts(judged: Judged | None, metric: str) -> dict[str, float]:
    score = next((s for s in judged.metrics if s.name == metric), None) if judged else None
    return dict(score.parts) if score else {}


def _overlap(item: LabelledItem) -> float:
    texts = section_texts(item.case(), item.reply())
    return word_overlap(item.answer, [texts["question"], texts["context"], texts["tools"]])


def _why_not(m: MetricCalibration, bars: Thresholds, fit: bool) -> list[str]:
    why = []
    if min(m.good, m.bad) < bars.min_labels:
        return [f"{m.good} good and {m.bad} bad labelled answers scored, fewer than {bars.min_labels} of each"]
    if not m.auc >= bars.min_auc:  # nan fails too
        # WHY 3 digits when it rounds to the bar: "AUC 0.70 < 0.70" reads as a contradiction.
        shown = _num(m.auc) if math.isnan(m.auc) or round(m.auc, 2) < bars.min_auc \
            else f"{math.floor(m.auc * 1000) / 1000:.3f}"
        why.append(f"AUC {shown} < {bars.min_auc:.2f}")
    accuracy, false_fail = (m.cv_balanced_accuracy, m.cv_false_fail) if fit else (m.balanced_accuracy, m.false_fail)
    at = "cross-validated" if fit else f"at {m.threshold:.3g}"
    if accuracy is None or not accuracy >= bars.min_balanced_accuracy:
        why.append(f"balanced accuracy {at} {_num(accuracy)} < {bars.min_balanced_accuracy:.2f}")
    if false_fail is None or not false_fail <= bars.max_false_fail:
        why.append(f"fails {_num(false_fail)} of the good answers {at}, more than {bars.max_false_fail:.2f}")
    if _from_code(m.part_auc, m.auc, bars):
        why.append(f"its model part alone reaches AUC {m.part_auc[MODEL]:.3f} < {MODEL_ADDS:.2f}: "
                   "what separates is code, not the judge model")
    if m.breaks and bars.min_break_share and m.breaks_failed < bars.min_break_share * m.breaks:
        why.append(f"failed {m.breaks_failed} of {m.breaks} known-bad breaks, fewer than {bars.min_break_share:.0%}")
    return why


def pairs_ordered(rows: Sequence[tuple[LabelledItem, str, float]]) -> tuple[int, int]:
    """Of the (good, bad) answers to the same question, how many the judge scored good > bad; and how many."""
    by_question: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"good": [], "bad": []})
    for item, verdict, value in rows:
        if verdict in ("good", "bad"):
            by_question[item.case_id][verdict].append(value)
    ordered = total = 0
    for sides in by_question.values():
        for g in sides["good"]:
            for b in sides["bad"]:
                total += 1
                ordered += g > b
    return ordered, total


def cross_validated(rows: Sequence[tuple[LabelledItem, str, float]], max_false_fail: float = 1.0,
                    folds: int = FOLDS) -> tuple[float, float]:
    """Balanced accuracy and the share of good answers failed, of thresholds fitted on the
    other folds, pooled over folds of whole questions (nan when a side is missing)."""
    fold_of = question_folds([item.case_id for item, _, _ in rows], folds)
    passed: dict[str, list[bool]] = {"good": [], "bad": []}
    for fold in range(folds):
        train = [(v, verdict) for item, verdict, v in rows if fold_of[item.case_id] != fold]
        good, bad = [v for v, d in train if d == "good"], [v for v, d in train if d == "bad"]
        if not good or not bad:
            continue
        cut = best_threshold(good, bad, max_false_fail)
        for item, verdict, v in rows:
            if fold_of[item.case_id] == fold and verdict in passed:
                passed[verdict].append(v >= cut)
    if not passed["good"] or not passed["bad"]:
        return math.nan, math.nan
    false_fail = 1 - mean(passed["good"])
    return (1 - false_fail + 1 - mean(passed["bad"])) / 2, false_fail


def _agreement(name: str, items: Sequence[LabelledItem], judged: Mapping[str, Judged],
               scale: tuple[float, float]) -> MetricAgreement | None:
    pairs = [(n, v) for i in items if (n := i.labels[0].number(name)) is not None
             and (v := _value(judged.get(i.id), name)) is not None]
    if not pairs:
        return None
    human, judge = [h for h, _ in pairs], [v for _, v in pairs]
    if scale != (1, 5):  # a probability: only its rank order is comparable with 1..5
        return MetricAgreement(name, len(pairs), spearman(human, judge))
    return metric_agreement(name, human, [min(5, max(1, round(v))) for v in judge])


def annotator_pair(items: Sequence[LabelledItem]) -> tuple[str, ...]:
    """The two annotators who scored the most items in common, or () if no item has two."""
    counts: dict[tuple[str, str], int] = {}
    for item in items:
        names = [label.annotator for label in item.labels]
        for a_index, a in enumerate(names):
            for b in names[a_index + 1:]:
                counts[(a, b)] = counts.get((a, b), 0) + 1
    if not counts:
        return ()
    return max(counts, key=counts.__getitem__)


def annotator_agreement(items: Sequence[LabelledItem], first: str, second: str) -> tuple[MetricAgreement, ...]:
    both = [(a, b) for i in items if (a := i.label_by(first)) and (b := i.label_by(second))]
    metrics = list(dict.fromkeys(m for a, b in both for m in a.scores if m in b.scores))
    return tuple(metric_agreement(m, *_both_numbers(both, m)) for m in metrics)


def _both_numbers(both: Sequence[tuple[HumanLabel, HumanLabel]], metric: str) -> tuple[list[int], list[int]]:
    """Each annotator's number on ``metric``, over the items both of them scored on it."""
    numbers = [(x, y) for a, b in both if (x := a.number(metric)) is not None and (y := b.number(metric)) is not None]
    return [x for x, _ in numbers], [y for _, y in numbers]


def metric_agreement(metric: str, reference: Sequence[int], other: Sequence[int]) -> MetricAgreement:
    return MetricAgreement(
        metric=metric, n=len(reference), spearman=spearman(reference, other), mae=mae(reference, other),
        exact=exact_agreement(reference, other), kappa=cohen_kappa(reference, other, LABELS),
        weighted_kappa=cohen_kappa(reference, other, LABELS, "quadratic"),
        confusion=tuple(tuple(row) for row in confusion_matrix(reference, other, LABELS)),
    )


def separation(breaks: Sequence[BreakResult]) -> list[tuple[str, str, int, int]]:
    """Per break kind and target metric: (kind, metric, how many breaks failed it, how many breaks)."""
    rows: list[tuple[str, str, int, int]] = []
    for kind in BREAK_KINDS:
        of_kind = [b for b in breaks if b.kind == kind]
        for metric in of_kind[0].targets if of_kind else ():
            rows.append((kind, metric, sum(b.failed(metric) for b in of_kind), len(of_kind)))
    return rows


def score_variance(judged: Sequence[Judged], metrics: Sequence[str]) -> dict[str, float]:
    """Mean over inputs (with 2+ usable samples) of each metric's sample variance."""
    variance = {}
    for metric in metrics:
        spreads = [sample_variance(values) for j in judged
                   if len(values := [s[metric] for s in j.scored if metric in s]) > 1]
        variance[metric] = mean(spreads) if spreads else math.nan
    return variance


def _value(judged: Judged | None, metric: str) -> float | None:
    first = judged.first() if judged else None
    return first.get(metric) if first else None


def _source(judged: Mapping[str, Judged], metric: str) -> str:
    return next((m.source for j in judged.values() for m in j.metrics if m.name == metric and m.scored), "-")


def _break_result(broken: Judged, original: Judged, thresholds: Mapping[str, float]) -> BreakResult:
    return BreakResult(broken.item_id, broken.variant, broken.answer,
                       {m: original.mean(m) for m in thresholds}, {m: broken.mean(m) for m in thresholds},
                       dict(thresholds))


def evidence_of(item: LabelledItem) -> str:
    """Everything the judge sees besides the answer: an invented fact must not be in it."""
    texts = section_texts(item.case(), item.reply(answer=""))
    return "\n\n".join(text for name, text in texts.items() if name != "answer")


def _agreement_json(a: MetricAgreement) -> dict[str, Any]:
    return {"metric": a.metric, "n": a.n, "spearman": _clean(a.spearman), "mae": _clean(a.mae),
            "exact": _clean(a.exact), "kappa": _clean(a.kappa), "weightedKappa": _clean(a.weighted_kappa),
            "confusion": [list(row) for row in a.confusion]}


def _clean(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


def _num(x: float | None) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.2f}"
