"""What a run reads from the latest calibration of its judge: may each metric gate, and at what threshold.

``tracegrade calibrate`` stores its result per judge model and rubric hash
(``judge.calibrate``); ``tracegrade run`` and ``compare`` read it here, so the
commands that gate need none of the measurement code.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from tracegrade import defaults
from tracegrade.store.runstore import CalibrationRecord, RunStore

# The calibration we measured of the default judge (the local model) with the
# shipped rubric and labels: a run on that judge gates by it until the user's
# own store holds one. WHY ship it: without it a first run gates on metrics the
# measurement says must not gate (and warns that the judge is unvalidated).
SHIPPED_CALIBRATION = "calibration-local.json"


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
    record = latest_calibration(store, judge_model, rubric_hash)
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


def calibration_gates(store: RunStore, judge_model: str, rubric_hash: str,
                      ungated: frozenset[str] = frozenset()) -> Gates:
    """Per metric, from the latest calibration of this judge and rubric: may it gate, at what threshold.
    ``ungated``: metrics the rubric itself never lets gate (``gate: false``): nothing to say about them."""
    record = latest_calibration(store, judge_model, rubric_hash)
    if record is None:  # never calibrated: every metric gates at the rubric's threshold
        return Gates()
    metrics = record.result.get("metrics") or []
    not_gating: set[str] = set()
    thresholds: dict[str, float] = {}
    notes: list[str] = []
    for m in metrics:
        name = m["metric"]
        if name in ungated:
            continue
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


def latest_calibration(store: RunStore, judge_model: str, rubric_hash: str) -> CalibrationRecord | None:
    """The store's latest calibration of this judge and rubric, else the shipped one when
    they are the default judge and rubric it measured."""
    return store.latest_calibration(judge_model, rubric_hash) or shipped_calibration(judge_model, rubric_hash)


def shipped_calibration(judge_model: str, rubric_hash: str) -> CalibrationRecord | None:
    result = _shipped()
    if (result["judgeModel"], result["rubricHash"]) != (judge_model, rubric_hash):
        return None
    return CalibrationRecord(result["calibrationId"], judge_model, rubric_hash, result["labelsVersion"],
                             bool(result["passed"]), result["createdAt"], result)


@functools.cache
def _shipped() -> dict[str, Any]:
    """The shipped calibration, read once (a run asks twice: the warning and the gates)."""
    result: dict[str, Any] = json.loads(defaults.path(SHIPPED_CALIBRATION).read_text(encoding="utf-8"))
    return result
