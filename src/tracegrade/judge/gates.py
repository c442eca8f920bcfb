"""What a run reads from the latest calibration of its judge: may each metric gate, and at what threshold.

``tracegrade calibrate`` stores its result per judge model and rubric hash
(``judge.calibrate``); ``tracegrade run`` and ``compare`` read it here, so the
commands that gate need none of the measurement code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from tracegrade.store.runstore import RunStore


@dataclass(frozen=True)
class Gates:
    """What the latest calibration says for a run: metrics that may not gate,
    fitted thresholds, and one line per metric the run should print."""

    not_gating: frozenset[str] = frozenset()
    thresholds: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def calibration_problem(store: RunStore, judge_model: str, rubric_hash: str) -> str | None:
    """Why this judge is not validated as a whole, or None when its latest calibration
    covered every label and break (per-metric verdicts: ``calibration_gates``)."""
    record = store.latest_calibration(judge_model, rubric_hash)
    what = f"judge {judge_model} with rubric {rubric_hash}"
    if record is None:
        return f"{what} has no calibration in {store.url} (run `tracegrade calibrate`)"
    if record.result.get("partial"):
        return f"{what} passed only a partial calibration ({record.created_at}: --limit/--break-limit/--no-breaks)"
    metrics = record.result.get("metrics")
    if metrics is None and not record.passed:  # a calibration from before per-metric verdicts
        failures = record.result.get("failures") or ["thresholds missed"]
        more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
        return f"{what} failed its latest calibration ({record.created_at}): {failures[0]}{more}"
    if metrics is not None and not any(m.get("mayGate") for m in metrics):
        return f"{what}: no metric passed its latest calibration ({record.created_at})"
    return None


def calibration_gates(store: RunStore, judge_model: str, rubric_hash: str) -> Gates:
    """Per metric, from the latest calibration of this judge and rubric: may it gate, at what threshold."""
    record = store.latest_calibration(judge_model, rubric_hash)
    metrics = (record.result.get("metrics") or []) if record else []
    not_gating, thresholds, notes = set(), {}, []
    for m in metrics:
        name = m["metric"]
        if not m.get("mayGate"):
            not_gating.add(name)
            why = "; ".join(m.get("whyNot") or ["below its bar"])
            notes.append(f"metric {name} not allowed to gate (calibration {record.calibration_id}: {why}): "
                         "scored and shown, it does not decide pass or fail")
        elif record.result.get("fitted") and m.get("fittedThreshold") is not None:
            thresholds[name] = m["fittedThreshold"]
            notes.append(f"metric {name} gates at its calibrated threshold {m['fittedThreshold']:.3g} "
                         f"(calibration {record.calibration_id})")
    return Gates(frozenset(not_gating), thresholds, tuple(notes))
