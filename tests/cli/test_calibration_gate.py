"""`tracegrade run` warns when an uncalibrated judge gates; --require-calibrated refuses."""

from __future__ import annotations


import pytest

from places import ROOT
from tracegrade.cli import main
from tracegrade.case.schema import GoldenCase
from tracegrade.judge.scoring import load_rubric
from tracegrade.store.runstore import CalibrationRecord, open_store
from tracegrade.testing.fault_server import FaultServer
from tracegrade.core.trace import Reply

GOLDEN_PATH = ROOT / "evals" / "golden-dataset.json"
WARNING = "WARNING: judge scores gate this run"
NOT_REFUSED = (0, 1)  # the served judge scores 3..5, so the case may fail; 2 is the refusal


async def golden_answer(case: GoldenCase) -> Reply:
    """``--target test_calibration_gate:golden_answer``: the golden answer from the expected source."""
    return Reply(answer=case.golden_answer, retrieved_sources=(case.expected_source,),
                 context=f"SOURCE: {case.expected_source}\n(policy)")


@pytest.fixture
def judge_url(monkeypatch):
    """An OpenAI-compatible judge on loopback; ``--judge-model openai:fake-judge`` reaches it."""
    with FaultServer() as server:
        monkeypatch.setenv("TRACEGRADE_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "0")
        yield server.base_url


def _run(tmp_path, *flags: str) -> int:
    return main(["run", str(GOLDEN_PATH), "--target", "test_calibration_gate:golden_answer", "--only", "rag-return-01",
                 "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", str(tmp_path / "out"), "--quiet", *flags])


def _calibrated(tmp_path, passed: bool, partial: bool = False) -> None:
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.save_calibration(CalibrationRecord(
            f"cal-{passed}-{partial}", "fake-judge", load_rubric().hash, "v", passed, "2026-11-30T08:00:00+00:00",
            {"failures": [] if passed else ["relevance: Spearman rho 0.31 < 0.80"], "partial": partial}))


def test_an_uncalibrated_judge_warns_and_require_calibrated_refuses(tmp_path, judge_url, capsys):
    assert _run(tmp_path, "--judge-model", "openai:fake-judge") in NOT_REFUSED
    err = capsys.readouterr().err
    assert WARNING in err and "fake-judge" in err and "has no calibration" in err

    assert _run(tmp_path, "--judge-model", "openai:fake-judge", "--require-calibrated") == 2
    assert "--require-calibrated: judge fake-judge with rubric" in capsys.readouterr().err


def test_a_failed_calibration_is_named_and_a_passing_one_silences_the_warning(tmp_path, judge_url, capsys):
    _calibrated(tmp_path, passed=False)
    assert _run(tmp_path, "--judge-model", "openai:fake-judge", "--require-calibrated") == 2
    assert "failed its latest calibration" in capsys.readouterr().err
    _calibrated(tmp_path, passed=True)
    assert _run(tmp_path, "--judge-model", "openai:fake-judge", "--require-calibrated") in NOT_REFUSED
    assert WARNING not in capsys.readouterr().err


def test_a_checks_only_run_has_no_judge_to_warn_about(tmp_path, capsys):
    assert _run(tmp_path, "--checks-only", "--require-calibrated") == 0
    assert WARNING not in capsys.readouterr().err


def test_compare_warns_about_an_uncalibrated_judge_and_require_calibrated_refuses(tmp_path, capsys):
    from runs_support import result, run, scores
    from tracegrade.outputs import json_report

    paths = []
    for name in ("base", "cand"):
        results = [result(f"c{n}", score=scores(5)) for n in range(4)]
        paths.append(str(json_report.write(run(results, run_id=name), tmp_path / f"{name}.json")))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    assert main(["compare", *paths, "--db", db]) != 3
    assert "WARNING: judge scores gate this comparison, but judge judge-m with rubric rubric has no calibration" \
        in capsys.readouterr().err
    assert main(["compare", *paths, "--db", db, "--require-calibrated"]) == 3
    assert "--require-calibrated" in capsys.readouterr().err
    with open_store(db) as store:
        store.save_calibration(CalibrationRecord("c", "judge-m", "rubric", "v", True, "t", {"partial": False}))
    assert main(["compare", *paths, "--db", db, "--require-calibrated"]) != 3
    assert "WARNING" not in capsys.readouterr().err


def test_a_metric_its_calibration_does_not_allow_to_gate_is_shown_but_does_not_gate(tmp_path, judge_url, capsys):
    import json

    metrics = [{"metric": m.name, "mayGate": m.name != "correctness", "whyNot": ["AUC 0.55 < 0.80"]}
               for m in load_rubric().metrics]
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.save_calibration(CalibrationRecord("cal-m", "fake-judge", load_rubric().hash, "v", False,
                                                 "2026-11-30T08:00:00+00:00", {"partial": False, "metrics": metrics}))
    assert _run(tmp_path, "--judge-model", "openai:fake-judge", "--require-calibrated") in NOT_REFUSED
    err = capsys.readouterr().err
    assert "metric correctness not allowed to gate (calibration cal-m: AUC 0.55 < 0.80)" in err
    assert WARNING not in err  # the other metrics passed: the run is not unvalidated as a whole
    [results] = (tmp_path / "out").glob("*/results.json")
    [case] = json.loads(results.read_text())["results"]
    gates = {m["name"]: m["gates"] for m in case["metrics"]}
    assert gates == {"relevance": True, "correctness": False, "faithfulness": False, "helpfulness": True,
                     "hallucinationFree": True, "completeness": False}  # faithfulness, completeness: gate false in the rubric
