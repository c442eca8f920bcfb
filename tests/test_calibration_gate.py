"""`tracegrade run` warns when an uncalibrated judge gates; --require-calibrated refuses."""

from __future__ import annotations

import pytest

from support import GOLDEN_PATH, full_marks, openai_compatible, serving
from tracegrade.cli import main
from tracegrade.judge import load_rubric, rubric_hash
from tracegrade.store import CalibrationRecord, open_store

WARNING = "WARNING: judge scores gate this run"


@pytest.fixture
def judge_url(monkeypatch):
    with serving(openai_compatible(full_marks)) as url:
        monkeypatch.setenv("TRACEGRADE_JUDGE_BASE_URL", f"{url}/v1")
        monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "0")
        yield url


def _run(tmp_path, *flags: str) -> int:
    return main(["run", str(GOLDEN_PATH), "--target", "support:golden_reply", "--only", "rag-return-01",
                 "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", str(tmp_path / "out"), "--quiet", *flags])


def _calibrated(tmp_path, passed: bool, partial: bool = False) -> None:
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.save_calibration(CalibrationRecord(
            f"cal-{passed}-{partial}", "fake-judge", rubric_hash(load_rubric()), "v", passed, "2026-11-30T08:00:00+00:00",
            {"failures": [] if passed else ["relevance: Spearman rho 0.31 < 0.80"], "partial": partial}))


def test_an_uncalibrated_judge_warns_and_require_calibrated_refuses(tmp_path, judge_url, capsys):
    assert _run(tmp_path, "--judge-model", "openai:fake-judge") == 0
    err = capsys.readouterr().err
    assert WARNING in err and "fake-judge" in err and "has no calibration" in err

    assert _run(tmp_path, "--judge-model", "openai:fake-judge", "--require-calibrated") == 2
    assert "--require-calibrated: judge fake-judge with rubric" in capsys.readouterr().err


def test_a_failed_calibration_is_named_and_a_passing_one_silences_the_warning(tmp_path, judge_url, capsys):
    _calibrated(tmp_path, passed=False)
    assert _run(tmp_path, "--judge-model", "openai:fake-judge", "--require-calibrated") == 2
    assert "failed its latest calibration" in capsys.readouterr().err
    _calibrated(tmp_path, passed=True)
    assert _run(tmp_path, "--judge-model", "openai:fake-judge", "--require-calibrated") == 0
    assert WARNING not in capsys.readouterr().err


def test_a_checks_only_run_has_no_judge_to_warn_about(tmp_path, capsys):
    assert _run(tmp_path, "--checks-only", "--require-calibrated") == 0
    assert WARNING not in capsys.readouterr().err
