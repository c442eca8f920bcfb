"""Calibration records in the run store: the latest per judge model and rubric wins."""

from __future__ import annotations

from tracegrade.store.runstore import CalibrationRecord, open_store


def _record(cid: str, passed: bool, model: str = "judge-m", rubric: str = "r1") -> CalibrationRecord:
    return CalibrationRecord(cid, model, rubric, "labels-v", passed, "2026-11-30T10:00:00+00:00", {"id": cid})


def test_latest_calibration_is_per_model_and_rubric_and_survives_reopening(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        store.save_calibration(_record("c1", True))
        store.save_calibration(_record("c2", True, rubric="r2"))
        store.save_calibration(_record("c3", False))
    with open_store(url) as store:
        latest = store.latest_calibration("judge-m", "r1")
        assert (latest.calibration_id, latest.passed, latest.result) == ("c3", False, {"id": "c3"})
        assert store.latest_calibration("judge-m", "r2").passed is True
        assert store.latest_calibration("other-model", "r1") is None
