"""The latest calibration of each judge model and rubric, with its per-metric table:
which metrics may gate, and why the others may not.

    >>> "no calibration" in render([])
    True
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from tracegrade.store.runstore import CalibrationRecord
from tracegrade.view.shell import e, layout, section, table

HEADERS = ("metric", "source", "threshold", "good", "bad", "AUC", "balanced accuracy", "false fail", "may gate",
           "why not")


def render(records: Sequence[CalibrationRecord]) -> str:
    if not records:
        body = section("Calibration", "<p>no calibration in the store yet: <code>tracegrade calibrate</code> "
                       "records one per judge model and rubric.</p>")
        return layout("Calibration", body, here="/calibration")
    return layout("Calibration", "".join(_record(r) for r in records), here="/calibration")


def _record(r: CalibrationRecord) -> str:
    verdict = "pass" if r.passed else "fail"
    head = (f"<p>judge <b>{e(r.judge_model)}</b> · rubric {e(r.rubric_hash[:12])} · labels {e(r.labels_version)} · "
            f'{e(r.created_at)} · <span class="status {verdict}">{"passed" if r.passed else "failed"}</span></p>')
    metrics = [m for m in r.result.get("metrics", ()) if isinstance(m, Mapping)]
    rows = (_row(m) for m in metrics)
    failures = "".join(f"<li>{e(f)}</li>" for f in r.result.get("failures", ()) or ())
    return section(f"{r.judge_model} · {r.rubric_hash[:12]}", head + table(HEADERS, rows, "calibration-table")
                   + (f"<h3>Failures</h3><ul>{failures}</ul>" if failures else ""), f"cal-{r.calibration_id}")


def _row(m: Mapping[str, Any]) -> str:
    gate = "pass" if m.get("mayGate") else "fail"
    return (f"<tr><td>{e(m.get('metric', ''))}</td><td>{e(m.get('source', ''))}</td><td>{_n(m.get('threshold'))}</td>"
            f"<td>{e(m.get('good', '-'))}</td><td>{e(m.get('bad', '-'))}</td><td>{_n(m.get('auc'))}</td>"
            f"<td>{_n(m.get('balancedAccuracy'))}</td><td>{_n(m.get('falseFail'))}</td>"
            f'<td class="status {gate}">{"yes" if gate == "pass" else "no"}</td>'
            f"<td>{e(_why(m.get('whyNot')))}</td></tr>")


def _why(value: Any) -> str:
    return "; ".join(map(str, value)) if isinstance(value, list) else str(value or "")


def _n(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else e(value if value is not None else "-")
