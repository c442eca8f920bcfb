"""Calibration with scripted judges: the measurements, the thresholds, the exit codes."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Callable, Mapping

import pytest

from tracegrade.judge.calibrate import Thresholds, calibrate, calibration_problem, good_items
from tracegrade.cli import build_parser
from tracegrade.cli.calibrate import run_calibration
from tracegrade.judge.scoring import METRICS, Judge, evidence
from tracegrade.judge.labels import DEFAULT_LABELS, load_labels
from tracegrade.models.scripted import ScriptedModel
from tracegrade.judge.perturb import TARGETS, all_breaks
from tracegrade.report.calibration import render
from tracegrade.store.runstore import CalibrationRecord, open_store

ITEMS, VERSION = load_labels()
HUMAN = {(i.question, i.answer): i.labels[0].scores for i in ITEMS}
BREAK_KIND = {
    (i.question, b.answer): b.kind
    for i in good_items(ITEMS)
    for b in all_breaks(i.question, i.answer, evidence(i.case(), i.reply(answer="")))
}
Scorer = Callable[[str, str], Mapping[str, int]]


def _parts(messages) -> tuple[str, str]:
    text = messages[-1].content
    question = text.split("QUESTION:\n", 1)[1].split("\n\n", 1)[0]
    return question, text.split("ANSWER TO SCORE:\n", 1)[1]


def judge_from(score: Scorer, model_id: str = "scripted-judge") -> Judge:
    """A judge whose scores come from ``score(question, answer)``."""
    def reply(messages, options):
        return json.dumps({**score(*_parts(messages)), "reason": "scripted"})
    return Judge(ScriptedModel(reply, model_id), "the rubric")


def oracle(question: str, answer: str) -> Mapping[str, int]:
    """Scores like annotator A, and sees every break for what it is."""
    if (question, answer) in HUMAN:
        return HUMAN[(question, answer)]
    kind = BREAK_KIND[(question, answer)]
    return {m: 2 if m in TARGETS[kind] else 5 for m in METRICS}


def always_five(question: str, answer: str) -> Mapping[str, int]:
    return dict.fromkeys(METRICS, 5)


def blind_to_off_topic(question: str, answer: str) -> Mapping[str, int]:
    if BREAK_KIND.get((question, answer)) == "offTopic":
        return dict.fromkeys(METRICS, 5)
    return oracle(question, answer)


def test_a_judge_that_scores_like_the_human_and_sees_every_break_passes():
    cal = asyncio.run(calibrate(ITEMS, judge_from(oracle), VERSION))
    assert cal.passed, cal.failures
    assert all(a.spearman == pytest.approx(1.0) and a.mae == 0 and a.exact == 1 for a in cal.agreement)
    assert len(cal.breaks) == 3 * len(good_items(ITEMS)) and not cal.partial
    assert cal.annotators == ("A", "B") and cal.annotator_agreement[0].n >= 15
    assert "RESULT  PASS" in render(cal)


def test_a_judge_that_gives_five_to_everything_fails_agreement_and_every_break():
    cal = asyncio.run(calibrate(ITEMS, judge_from(always_five), VERSION))
    assert not cal.passed
    assert all(math.isnan(a.spearman) for a in cal.agreement)  # a constant judge has no rank order
    assert {f.split(":")[0] for f in cal.failures} >= {f"{k} -> {m}" for k, ms in TARGETS.items() for m in ms}
    assert "FAIL" in render(cal)


def test_each_break_kind_is_judged_on_its_own_target():
    cal = asyncio.run(calibrate(ITEMS, judge_from(blind_to_off_topic), VERSION))
    count = len(good_items(ITEMS))
    assert cal.failures == [f"offTopic -> relevance: 0 of {count} breaks lowered it by >= 2"]
    report = render(cal)
    assert f"offTopic    relevance              0/{count}       0.00   FAIL" in report
    assert "hl-01  offTopic    rel 5->5!" in report and "hl-01  inventFact  rel 5->5   cor 5->5   fai 5->2*" in report


def test_an_unscored_item_is_listed_and_left_out_of_agreement():
    target = ITEMS[1]

    def reply(messages, options):
        question, answer = _parts(messages)
        if (question, answer) == (target.question, target.answer):
            return "not json"
        return json.dumps({**oracle(question, answer), "reason": "ok"})

    cal = asyncio.run(calibrate(ITEMS, Judge(ScriptedModel(reply), "r", attempts=2), VERSION, breaks=False))
    assert cal.agreement[0].n == len(ITEMS) - 1
    assert cal.unscored == ((f"{target.id}/original", "judge reply unusable: not JSON: 'not json'"),)
    assert cal.partial


def test_samples_use_different_seeds_and_report_variance():
    seeds = []

    def wobbly(messages, options):
        seeds.append(options.seed)
        question, answer = _parts(messages)
        scores = dict(oracle(question, answer))
        scores["helpfulness"] = 5 if options.seed < 1000 else 1  # only the first sample agrees
        return json.dumps({**scores, "reason": "ok"})

    cal = asyncio.run(calibrate(ITEMS[:6], Judge(ScriptedModel(wobbly), "r"), VERSION, samples=2, breaks=False))
    assert sorted(set(seeds)) == [1, 1001]
    assert cal.variance["relevance"] == 0 and cal.variance["helpfulness"] > 0
    assert "STABILITY (2 samples" in render(cal)


def _args(tmp_path, *flags: str):
    return build_parser().parse_args(["calibrate", "--labels", str(DEFAULT_LABELS),
                                      "--db", f"sqlite:///{tmp_path / 'runs.db'}", *flags])


@pytest.mark.parametrize("scorer, code", [(oracle, 0), (always_five, 1), (blind_to_off_topic, 1)])
def test_exit_code_and_stored_record(tmp_path, capsys, scorer, code):
    out = tmp_path / "cal.json"
    judge = judge_from(scorer)
    assert run_calibration(_args(tmp_path, "--json", str(out)), judge) == code
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        record = store.latest_calibration("scripted-judge", judge.rubric_hash)
    assert record.passed is (code == 0) and record.labels_version == VERSION
    assert json.loads(out.read_text())["passed"] is (code == 0)
    assert "JUDGE CALIBRATION" in capsys.readouterr().out


def test_thresholds_are_configurable(tmp_path):
    # A judge off by one on correctness everywhere: MAE 1 fails the default 0.2 and passes at 1.0.
    def off_by_one(question: str, answer: str) -> Mapping[str, int]:
        scores = dict(oracle(question, answer))
        scores["correctness"] = scores["correctness"] - 1 if scores["correctness"] > 1 else 2
        return scores

    strict = asyncio.run(calibrate(ITEMS, judge_from(off_by_one), VERSION, breaks=False))
    loose = asyncio.run(calibrate(ITEMS, judge_from(off_by_one), VERSION, breaks=False,
                                  thresholds=Thresholds(min_rho=0.5, max_mae=1.0)))
    assert any(f.startswith("correctness: MAE") for f in strict.failures)
    assert not loose.failures


def test_limit_makes_a_partial_calibration(tmp_path):
    assert run_calibration(_args(tmp_path, "--limit", "12", "--break-limit", "1"), judge_from(oracle)) == 0
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        record = store.latest_calibration("scripted-judge", judge_from(oracle).rubric_hash)
        assert record.result["partial"] and record.result["itemCount"] == 12
        assert "partial" in calibration_problem(store, "scripted-judge", record.rubric_hash)


def test_calibration_problem_names_what_is_missing(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        assert "no calibration" in calibration_problem(store, "m", "r")
        failed = {"failures": ["relevance: Spearman rho 0.40 < 0.80", "x"], "partial": False}
        store.save_calibration(CalibrationRecord("c1", "m", "r", "v", False, "t1", failed))
        assert "failed its latest calibration (t1): relevance: Spearman rho 0.40 < 0.80 (+1 more)" in \
            calibration_problem(store, "m", "r")
        store.save_calibration(CalibrationRecord("c2", "m", "r", "v", True, "t2", {"partial": False}))
        assert calibration_problem(store, "m", "r") is None
        assert calibration_problem(store, "m", "other-rubric") is not None
