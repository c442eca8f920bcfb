"""The label forms: a case page's "Your labels" section and the queue's one form.

    >>> "csrf" in label_form(LabelTarget("r1", "a", 0, "faithfulness"), "ann", "TOKEN", "/back")
    True

Each form POSTs to /labels (never a GET) with the page's CSRF token, the
answer, the metric, the verdict (the button pressed), an optional note and the
person's name, then the view sends the browser to ``back``. They work without
JavaScript; the queue's keys only press their buttons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from tracegrade.core.results import CaseResult
from tracegrade.store.labelrows import NAME_CHARS, NOTE_CHARS, AnswerLabel, masked
from tracegrade.view.shell import e, run_url, section, with_query

POST_TO = "/labels"


@dataclass(frozen=True)
class LabelTarget:
    """What a form labels: one answer of a run on one metric."""

    run_id: str
    case_id: str
    repeat: int
    metric: str


def label_form(target: LabelTarget, annotator: str, csrf: str, back: str, current: AnswerLabel | None = None,
               skip: bool = False) -> str:
    """One metric's form: good and bad (and, in the queue, skip and keys), a note, who labels."""
    hidden = {"csrf": csrf, "run_id": target.run_id, "case_id": target.case_id, "repeat": str(target.repeat),
              "metric": target.metric, "back": back}
    fields = "".join(f'<input type="hidden" name="{e(k)}" value="{e(v)}">' for k, v in hidden.items())
    buttons = [("good", "Good", "g"), ("bad", "Bad", "b")] + ([("skip", "Skip", "s")] if skip else [])
    pressed = "".join(f'<button type="submit" name="verdict" value="{v}" class="verdict {v}" '
                      f'aria-keyshortcuts="{key}"{_pressed(current, v)}>{label}{f" ({key})" if skip else ""}</button>'
                      for v, label, key in buttons)
    note = current.note if current else ""
    # WHY hidden in the queue: its page names who labels once, above the form.
    who = (f'<input type="hidden" name="annotator" value="{e(annotator)}">' if skip else
           f'<label>as <input type="text" name="annotator" maxlength="{NAME_CHARS}" required size="12" '
           f'value="{e(annotator)}"></label>')
    return (f'<form method="post" action="{POST_TO}" class="label" data-metric="{e(target.metric)}">{fields}'
            f'<label>note <input type="text" name="note" maxlength="{NOTE_CHARS}" value="{e(note)}" '
            f'placeholder="optional: why"></label> '
            f'{who} {pressed}</form>')


def _pressed(current: AnswerLabel | None, verdict: str) -> str:
    return ' aria-pressed="true"' if current is not None and current.verdict == verdict else ""


def case_labels(run_id: str, result: CaseResult, given: Sequence[AnswerLabel], annotator: str, csrf: str,
                back: str) -> str:
    """A case page's section: per metric the judge's value, this person's label (a form) and the others'."""
    given = [masked(g) for g in given]
    if result.reply is None:
        return section("Your labels", '<p class="muted">no answer to label</p>', "labels")
    metrics = [(m.name, f"{m.value:.2f}" if m.value is not None else "not scored") for m in result.metrics] or \
        [(name, f"{value:g}") for name, value in (result.scores or {}).items()]
    if not metrics:
        return section("Your labels", '<p class="muted">the judge scored no metric here</p>', "labels")
    mine = {g.metric: g for g in given if g.annotator == annotator}
    others: Mapping[str, list[str]] = {name: [f"{g.annotator} {g.verdict}" for g in given
                                              if g.metric == name and g.annotator != annotator] for name, _ in metrics}
    rows = "".join(
        f'<tr class="label-row" data-metric="{e(name)}"><td>{e(name)}</td><td class="num">{e(value)}</td>'
        f'<td class="mine">{e(mine[name].verdict) if name in mine else "-"}</td>'
        f'<td>{label_form(LabelTarget(run_id, result.case_id, result.repeat, name), annotator, csrf, back, mine.get(name))}'
        f'</td><td class="muted">{e(", ".join(others[name]) or "-")}</td></tr>' for name, value in metrics)
    queue = with_query(queue_url(run_id), {"annotator": annotator})
    return section("Your labels", f'<p class="muted">Is the answer good or bad on each metric? Your labels are '
                   f'stored with the run; <code>tracegrade calibrate --from-store</code> measures the judge on them. '
                   f'<a href="{e(queue)}">Label this run\'s answers by keyboard</a>.</p>'
                   f'<table id="labels-table"><thead><tr><th>metric</th><th>judge</th><th>yours</th><th>label</th>'
                   f'<th>others</th></tr></thead><tbody>{rows}</tbody></table>', "labels")



def queue_url(run_id: str) -> str:
    return run_url(run_id) + "/label"
