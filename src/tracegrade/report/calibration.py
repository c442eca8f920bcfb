"""The console report of a judge calibration: agreement, separation, stability, verdict."""

from __future__ import annotations

import math
from typing import Sequence

from tracegrade.judge.calibrate import LABELS, Calibration, MetricAgreement, separation
from tracegrade.judge.scoring import METRICS

RULE = "=" * 72
SHORT = {"relevance": "rel", "correctness": "cor", "faithfulness": "fai", "helpfulness": "hlp",
         "hallucinationFree": "hal"}


def render(cal: Calibration) -> str:
    parts = [_header(cal), _agreement(cal), _confusions(cal.agreement, f"human {cal.reference}", "judge")]
    if cal.annotator_agreement:
        a, b = cal.annotators
        parts.append(_table(f"ANNOTATOR AGREEMENT ({a} vs {b}, {cal.annotator_agreement[0].n} items scored by both)",
                            cal.annotator_agreement))
    if cal.breaks:
        parts += [_separation(cal), _break_rows(cal)]
    if cal.variance:
        parts.append(_stability(cal))
    if cal.unscored:
        parts.append("UNSCORED (left out)\n" + "\n".join(f"  {i:<22} {why}" for i, why in cal.unscored))
    parts.append(_verdict(cal))
    return f"\n{RULE}\n".join(parts)


def _header(cal: Calibration) -> str:
    scored = cal.agreement[0].n if cal.agreement else 0
    note = "  (partial: not every item or break)" if cal.partial else ""
    return "\n".join([
        "JUDGE CALIBRATION",
        f"  judge    {cal.judge_model}   rubric {cal.rubric_hash}   labels version {cal.labels_version}",
        f"  items    {cal.item_count} labelled, {scored} scored by the judge; reference annotator {cal.reference}; "
        f"samples {cal.samples} at temperature {cal.temperature:g}{note}",
    ])


def _agreement(cal: Calibration) -> str:
    t = cal.thresholds
    title = f"AGREEMENT WITH HUMANS (judge vs {cal.reference}; pass: rho >= {t.min_rho:.2f} and MAE <= {t.max_mae:.2f})"
    return _table(title, cal.agreement, lambda a: "FAIL" if a.failures(t) else "pass")


def _table(title: str, rows: Sequence[MetricAgreement], verdict=None) -> str:
    lines = [title, f"  {'metric':<18} {'n':>3} {'rho':>6} {'MAE':>6} {'exact':>6} {'kappa':>6} {'qw-kappa':>9}"]
    for a in rows:
        line = (f"  {a.metric:<18} {a.n:>3} {_f(a.spearman):>6} {_f(a.mae):>6} {_f(a.exact):>6} "
                f"{_f(a.kappa):>6} {_f(a.weighted_kappa):>9}")
        lines.append(f"{line}   {verdict(a)}" if verdict else line)
    return "\n".join(lines)


def _confusions(rows: Sequence[MetricAgreement], row_name: str, column_name: str) -> str:
    """The five matrices side by side: rows are the human's score, columns the judge's."""
    lines = [f"CONFUSION MATRICES (rows: {row_name} score 1..5, columns: {column_name} score 1..5)"]
    width = 3 * len(LABELS) + 4
    lines.append("  " + "".join(f"{m:<{width}}" for m in METRICS[: len(rows)]))
    lines.append("  " + "".join(f"{'':2}" + "".join(f"{label:>3}" for label in LABELS) + "  " for _ in rows))
    for r, label in enumerate(LABELS):
        cells = ("".join(f"{a.confusion[r][c]:>3}" for c in range(len(LABELS))) for a in rows)
        lines.append("  " + "".join(f"{label:>2}{cell}  " for cell in cells))
    return "\n".join(lines)


def _separation(cal: Calibration) -> str:
    min_drop = cal.thresholds.min_drop
    lines = [f"KNOWN-BAD SEPARATION (each break must lower each target metric by >= {min_drop:g})",
             f"  {'break':<11} {'target':<18} {'lowered':>8} {'mean drop':>10}"]
    for kind, metric, separated, total in separation(cal.breaks, min_drop):
        drops = [d for b in cal.breaks if b.kind == kind and (d := b.drop(metric)) is not None]
        average = sum(drops) / len(drops) if drops else math.nan
        verdict = "pass" if separated == total else "FAIL"
        lines.append(f"  {kind:<11} {metric:<18} {f'{separated}/{total}':>8} {_f(average):>10}   {verdict}")
    return "\n".join(lines)


def _break_rows(cal: Calibration) -> str:
    """Every break with every metric before -> after; * marks a target, ! a target not lowered enough."""
    lines = ["PER BREAK (score of the good answer -> score of the break; * target, ! target missed)"]
    for b in cal.breaks:
        cells = []
        for m in METRICS:
            mark = ("*" if b.separated(m, cal.thresholds.min_drop) else "!") if m in b.targets else " "
            cells.append(f"{SHORT[m]} {_s(b.original[m])}->{_s(b.broken[m])}{mark}")
        lines.append(f"  {b.item_id:<6} {b.kind:<11} " + "  ".join(cells))
    return "\n".join(lines)


def _stability(cal: Calibration) -> str:
    cells = "  ".join(f"{m} {_f(cal.variance[m], 3)}" for m in METRICS)
    return f"STABILITY ({cal.samples} samples per input; mean score variance per metric)\n  {cells}"


def _verdict(cal: Calibration) -> str:
    if cal.passed:
        return "RESULT  PASS: the judge met every threshold"
    return "\n".join([f"RESULT  FAIL: {len(cal.failures)} threshold(s) missed", *(f"  - {f}" for f in cal.failures)])


def _f(x: float, digits: int = 2) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _s(x: float | None) -> str:
    if x is None:
        return "?"
    return f"{x:g}" if float(x).is_integer() else f"{x:.1f}"
