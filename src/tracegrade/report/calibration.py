"""The console report of a judge calibration: per metric, can it tell good from bad, and may it gate."""

from __future__ import annotations

import math
from typing import Sequence

from tracegrade.judge.calibrate import LABELS, Calibration, MetricAgreement, separation
from tracegrade.judge.combine import FOLDS, OutOfSample

RULE = "=" * 72


def render(cal: Calibration) -> str:
    parts = [_header(cal), _metrics(cal), _signal(cal)]
    if any(m.combination for m in cal.metrics):
        parts.append(_combined(cal))
    parts.append(_agreement(cal))
    confusions = [m.agreement for m in cal.metrics if m.agreement and m.agreement.confusion]
    if confusions:
        parts.append(_confusions(confusions, f"human {cal.reference}", "judge"))
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
    scored = sum(1 for j in cal.judged if j.scored)
    note = "  (partial: not every item or break)" if cal.partial else ""
    return "\n".join([
        "JUDGE CALIBRATION",
        f"  judge    {cal.judge_model}   rubric {cal.rubric_hash}   labels version {cal.labels_version}",
        f"  items    {cal.item_count} labelled, {scored} scored by the judge; reference annotator {cal.reference}; "
        f"samples {cal.samples} at temperature {cal.temperature:g}{note}",
    ])


def _metrics(cal: Calibration) -> str:
    t = cal.thresholds
    how = "cross-validated" if cal.fitted else "at the threshold"
    lines = [f"GOOD VS BAD (human 4-5 good, 1-2 bad; may gate: >= {t.min_labels} of each, AUC >= {t.min_auc:.2f}, "
             f"{how}: balanced accuracy >= {t.min_balanced_accuracy:.2f} and good answers failed <= "
             f"{t.max_false_fail:.2f}" + (f"; >= {t.min_break_share:.0%} of its breaks failed)" if t.min_break_share
                                          else ")"),
             f"  {'metric':<18} {'source':<11} {'good':>4} {'bad':>4} {'AUC':>5} {'pairs':>7} {'at':>5} {'bal.acc':>7} "
             f"{'ff':>5} {'fitted':>6} {'cv.ba':>5} {'cv.ff':>5}  may gate"]
    for m in cal.metrics:
        fitted = "-" if m.fitted_threshold is None else f"{m.fitted_threshold:.3g}"
        pairs = f"{m.pairs_ordered}/{m.pairs}" if m.pairs else "-"
        lines.append(f"  {m.metric:<18} {m.source:<11} {m.good:>4} {m.bad:>4} {_f(m.auc):>5} {pairs:>7} "
                     f"{m.threshold:>5.3g} {_f(m.balanced_accuracy):>7} {_f(m.false_fail):>5} {fitted:>6} "
                     f"{_f(m.cv_balanced_accuracy):>5} {_f(m.cv_false_fail):>5}  "
                     + ("yes" if m.may_gate else "NO: " + "; ".join(m.why_not)))
    return "\n".join(lines)


def _signal(cal: Calibration) -> str:
    """Per metric: each part's AUC alone, and the AUC on good/bad answers matched on word overlap."""
    lines = ["WHERE THE SIGNAL COMES FROM (each part alone; 'matched': good/bad pairs with the same word overlap "
             "with the evidence, where only reading meaning tells them apart)",
             f"  {'metric':<18} {'model':>6} {'code':>6} {'overlap':>7} {'requires':>8} {'pairs':>5} "
             f"{'matched':>7} {'m.model':>7}"]
    for m in cal.metrics:
        p = m.part_auc
        lines.append(f"  {m.metric:<18} {_f(p.get('model')):>6} {_f(p.get('code')):>6} {_f(p.get('overlap')):>7} "
                     f"{_f(p.get('requires')):>8} {m.matched_pairs:>5} {_f(m.matched_auc):>7} "
                     f"{_f(m.matched_model_auc):>7}")
    lines += [f"  ! {m.metric}: {note}" for m in cal.metrics for note in m.notes if not note.startswith("parts alone")]
    return "\n".join(lines)


def _combined(cal: Calibration) -> str:
    """Per metric with parts: each part alone, the value as the rubric combines it now, and the
    parts combined by fit, side by side; all cross-validated (``--write-weights`` writes the weights)."""
    lines = [f"PARTS COMBINED BY FIT (monotone logistic, weights >= 0; {FOLDS}-fold cross-validation over "
             "whole questions: AUC of the held-out values, balanced accuracy and good failed at thresholds "
             "fitted on the other folds)",
             f"  {'metric':<18} {'scored as':<26} {'cv.AUC':>6} {'cv.ba':>5} {'cv.ff':>5}  weights"]
    for m in cal.metrics:
        c = m.combination
        if c is None:
            continue
        rows: list[tuple[str, OutOfSample | None, str]] = [(f"part {name} alone", o, "") for name, o in c.parts.items()]
        rows.append(("the rubric's value now", None, ""))
        rows.append(("parts combined by fit", c.fitted, ", ".join(f"{k} {v:.2f}" for k, v in c.weights.items())))
        for label, o, weights in rows:
            figures = (f"{_f(o.auc):>6} {_f(o.balanced_accuracy):>5} {_f(o.false_fail):>5}" if o else
                       f"{_f(m.auc):>6} {_f(m.cv_balanced_accuracy):>5} {_f(m.cv_false_fail):>5}")
            lines.append(f"  {m.metric:<18} {label:<26} {figures}  {weights}".rstrip())
    return "\n".join(lines)


def _agreement(cal: Calibration) -> str:
    rows = [m.agreement for m in cal.metrics if m.agreement]
    if not rows:
        return "AGREEMENT WITH HUMANS\n  (no labelled metric was scored)"
    return _table(f"AGREEMENT WITH HUMANS (judge vs {cal.reference}; MAE and kappas for 1..5 scale metrics only)", rows)


def _table(title: str, rows: Sequence[MetricAgreement]) -> str:
    lines = [title, f"  {'metric':<18} {'n':>3} {'rho':>6} {'MAE':>6} {'exact':>6} {'kappa':>6} {'qw-kappa':>9}"]
    for a in rows:
        lines.append(f"  {a.metric:<18} {a.n:>3} {_f(a.spearman):>6} {_f(a.mae):>6} {_f(a.exact):>6} "
                     f"{_f(a.kappa):>6} {_f(a.weighted_kappa):>9}")
    return "\n".join(lines)


def _confusions(rows: Sequence[MetricAgreement], row_name: str, column_name: str) -> str:
    """The matrices side by side: rows are the human's score, columns the judge's."""
    lines = [f"CONFUSION MATRICES (rows: {row_name} score 1..5, columns: {column_name} score 1..5)"]
    width = 3 * len(LABELS) + 4
    lines.append("  " + "".join(f"{a.metric:<{width}}" for a in rows))
    lines.append("  " + "".join(f"{'':2}" + "".join(f"{label:>3}" for label in LABELS) + "  " for _ in rows))
    for r, label in enumerate(LABELS):
        cells = ("".join(f"{a.confusion[r][c]:>3}" for c in range(len(LABELS))) for a in rows)
        lines.append("  " + "".join(f"{label:>2}{cell}  " for cell in cells))
    return "\n".join(lines)


def _separation(cal: Calibration) -> str:
    lines = ["KNOWN-BAD BREAKS (a break should fail each target metric; one it passes is a blind spot)",
             f"  {'break':<11} {'target':<18} {'failed':>8}"]
    for kind, metric, failed, total in separation(cal.breaks):
        verdict = "pass" if failed == total else f"BLIND SPOT: {total - failed} of {total} passed"
        lines.append(f"  {kind:<11} {metric:<18} {f'{failed}/{total}':>8}   {verdict}")
    return "\n".join(lines)


def _break_rows(cal: Calibration) -> str:
    """Every break with every metric before -> after; * a target failed, ! a target still passed."""
    lines = ["PER BREAK (the good answer's score -> the break's; * target failed, ! target still passes)"]
    for b in cal.breaks:
        cells = []
        for m in b.thresholds:
            mark = ("*" if b.failed(m) else "!") if m in b.targets else " "
            cells.append(f"{m[:4]} {_s(b.original[m])}->{_s(b.broken[m])}{mark}")
        lines.append(f"  {b.item_id:<6} {b.kind:<11} " + "  ".join(cells))
    return "\n".join(lines)


def _stability(cal: Calibration) -> str:
    cells = "  ".join(f"{m} {_f(v, 3)}" for m, v in cal.variance.items())
    return f"STABILITY ({cal.samples} samples per input; mean score variance per metric)\n  {cells}"


def _verdict(cal: Calibration) -> str:
    gating = [m.metric for m in cal.metrics if m.may_gate]
    if cal.passed:
        return f"RESULT  PASS: every metric may gate ({', '.join(gating)})"
    lines = [f"RESULT  FAIL: {len(cal.failures)} bar(s) missed; may gate: {', '.join(gating) or 'none'}"]
    return "\n".join([*lines, *(f"  - {f}" for f in cal.failures)])


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _s(x: float | None) -> str:
    if x is None:
        return "?"
    return f"{x:g}" if float(x).is_integer() else f"{x:.2f}"
