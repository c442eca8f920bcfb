"""Calibration with scripted judges: per metric AUC, balanced accuracy, pairs, breaks, may it gate."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Callable, Mapping

import pytest

from judge_rubrics import SCALE_RUBRIC, SEED_METRICS
from tracegrade import defaults
from tracegrade.cli import build_parser
from tracegrade.cli.calibrate import run_calibration
from tracegrade.judge.calibrate import (
    Thresholds, calibrate, evidence_of, good_items,
)
from tracegrade.judge.gates import calibration_gates, calibration_problem
from tracegrade.judge.labels import DEFAULT_LABELS, balanced_subset, load_labels
from tracegrade.judge.perturb import TARGETS, all_breaks
from tracegrade.judge.rubric import load_rubric, parse_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel
from tracegrade.report.calibration import render
from tracegrade.store.runstore import CalibrationRecord, open_store

ITEMS, VERSION = load_labels()
# WHY: these judges are scripted from the labels and ignore the passages they are shown.
pytestmark = pytest.mark.usefixtures("evidence_ranked_by_words")
HUMAN = {(i.question, i.answer): i.labels[0].scores for i in ITEMS}




BREAK_KIND = {(i.question, b.answer): b.kind for i in good_items(ITEMS)
              for b in all_breaks(i.question, i.answer, evidence_of(i))}
Scorer = Callable[[str, str], Mapping[str, int]]


def _parts(messages) -> tuple[str, str]:
    text = messages[-1].content
    question = text.split("QUESTION:\n", 1)[1].split("\n\n", 1)[0]
    return question, text.split("ANSWER TO JUDGE:\n", 1)[1].split("\n\nQUESTIONS", 1)[0]


def judge_from(score: Scorer, model_id: str = "scripted-judge", rubric=SCALE_RUBRIC) -> Judge:
    """A JSON judge on the five 1..5 scale metrics whose scores come from ``score(question, answer)``."""
    def reply(messages, options):
        return json.dumps({**score(*_parts(messages)), "reason": "scripted"})
    return Judge(ScriptedModel(reply, model_id), rubric)


def oracle(question: str, answer: str) -> Mapping[str, int]:
    """Scores like annotator A, and sees every break for what it is."""
    if (question, answer) in HUMAN:
        return HUMAN[(question, answer)]
    kind = BREAK_KIND[(question, answer)]
    return {m: 2 if m in TARGETS[kind] else 5 for m in SEED_METRICS}


def always_five(question: str, answer: str) -> Mapping[str, int]:
    return dict.fromkeys(SEED_METRICS, 5)


def blind_to_off_topic(question: str, answer: str) -> Mapping[str, int]:
    if BREAK_KIND.get((question, answer)) == "offTopic":
        return dict.fromkeys(SEED_METRICS, 5)
    return oracle(question, answer)


# The shipped labels hold 3 bad answers for relevance: tests about the judge's behaviour
# lower the bar on label counts to that (the default, 10, is tested on its own below).
FEW = Thresholds(min_labels=3)


def test_a_judge_that_scores_like_the_human_and_fails_every_break_may_gate_on_every_metric():
    cal = asyncio.run(calibrate(ITEMS, judge_from(oracle), VERSION, thresholds=FEW))
    assert cal.passed, cal.failures
    for m in cal.metrics:
        assert m.may_gate and m.auc == 1.0 and m.balanced_accuracy == 1.0 and m.pairs_ordered == m.pairs
        assert m.agreement.mae == 0 and m.agreement.spearman == pytest.approx(1.0) and m.source == "json"
    correctness = cal.metric("correctness")
    assert (correctness.good, correctness.bad) == (25, 23) and correctness.pairs >= 20
    assert len(cal.breaks) == 3 * len(good_items(ITEMS)) and not cal.partial
    assert cal.annotators == ("A", "B") and cal.annotator_agreement[0].n >= 15
    assert "RESULT  PASS" in render(cal)


def test_a_judge_that_gives_five_to_everything_separates_nothing_and_may_not_gate():
    cal = asyncio.run(calibrate(ITEMS, judge_from(always_five), VERSION))
    assert not cal.passed and not any(m.may_gate for m in cal.metrics)
    correctness = cal.metric("correctness")
    assert correctness.auc == 0.5 and correctness.pairs_ordered == 0  # ties order nothing
    assert math.isnan(correctness.agreement.spearman)  # a constant judge has no rank order
    assert "correctness: AUC 0.50 < 0.70" in cal.failures
    assert "NO: AUC 0.50 < 0.70" in render(cal)
    assert "BLIND SPOT: 22 of 22 passed" in render(cal)  # every break passed correctness


def test_each_break_kind_is_judged_on_its_own_target_and_a_miss_is_a_blind_spot():
    cal = asyncio.run(calibrate(ITEMS, judge_from(blind_to_off_topic), VERSION, thresholds=FEW))
    count = len(good_items(ITEMS))
    assert cal.passed and cal.metric("relevance").breaks_failed == 0  # a blind spot, by default not a bar
    report = render(cal)
    assert any(line.split() == ["offTopic", "relevance", f"0/{count}", "BLIND", "SPOT:", f"{count}", "of",
                                f"{count}", "passed"] for line in report.splitlines())
    strict = asyncio.run(calibrate(ITEMS, judge_from(blind_to_off_topic), VERSION,
                                   thresholds=Thresholds(min_labels=3, min_break_share=0.8)))
    assert strict.failures == [f"relevance: failed 0 of {count} known-bad breaks, fewer than 80%"]
    assert "hl-01  offTopic    rele 5->5!" in report and "hl-01  inventFact  rele 5->5   corr 5->5   fait 5->2*" in report


def test_an_unscored_item_is_listed_and_left_out():
    target = ITEMS[1]

    def reply(messages, options):
        question, answer = _parts(messages)
        if (question, answer) == (target.question, target.answer):
            return "not json"
        return json.dumps({**oracle(question, answer), "reason": "ok"})

    cal = asyncio.run(calibrate(ITEMS, Judge(ScriptedModel(reply), SCALE_RUBRIC, attempts=2), VERSION, breaks=False))
    assert cal.metric("correctness").agreement.n == len(ITEMS) - 1
    assert cal.unscored == ((f"{target.id}/original", "judge reply unusable: not JSON: 'not json'"),)
    assert cal.partial


def test_samples_use_different_seeds_and_report_variance():
    seeds = []

    def wobbly(messages, options):
        seeds.append(options.seed)
        scores = dict(oracle(*_parts(messages)))
        scores["helpfulness"] = 5 if options.seed < 1000 else 1  # only the first sample agrees
        return json.dumps({**scores, "reason": "ok"})

    cal = asyncio.run(calibrate(ITEMS[:6], Judge(ScriptedModel(wobbly), SCALE_RUBRIC), VERSION, samples=2,
                                breaks=False))
    assert sorted(set(seeds)) == [1, 1001]
    assert cal.variance["relevance"] == 0 and cal.variance["helpfulness"] > 0
    assert "STABILITY (2 samples" in render(cal)


# --- probabilities, fitted thresholds, partial and binary labels ------------------------------

YES_NO = parse_rubric("""---
metrics:
  - {name: correctness, measures: agrees, yesNo: Does the answer agree with the reference answer, needsReference: true}
---
Judge.""")


def probability_judge(p_yes: Callable[[str, str], float]) -> Judge:
    def reply(messages, options):
        question, answer = _parts(messages)
        answer = answer.rsplit("\n\n", 1)[0]  # the question to the judge follows the answer
        p = p_yes(question, answer)
        return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(p)), ("No", math.log(1 - p))),))
    return Judge(ScriptedModel(reply, "prob-judge", token_probabilities=True), YES_NO)


def timid(question: str, answer: str) -> float:
    """Ranks perfectly but never says yes: good answers get 0.3, bad 0.1."""
    verdict = next(i for i in ITEMS if (i.question, i.answer) == (question, answer)).verdict("correctness")
    return 0.3 if verdict == "good" else 0.1 if verdict == "bad" else 0.2


def test_a_threshold_fitted_by_cross_validation_makes_a_well_ranking_judge_usable():
    plain = asyncio.run(calibrate(ITEMS, probability_judge(timid), VERSION, breaks=False))
    m = plain.metric("correctness")
    assert m.source == "probability" and m.auc == 1.0 and m.balanced_accuracy == 0.5 and not m.may_gate
    assert m.false_fail == 1.0  # every good answer fails at 0.5: such a gate would be red on every right answer
    assert m.agreement.mae != m.agreement.mae  # nan: MAE compares 1..5 scales only, not a probability
    fitted = asyncio.run(calibrate(ITEMS, probability_judge(timid), VERSION, breaks=False, fit_thresholds=True))
    m = fitted.metric("correctness")
    assert 0.1 < m.fitted_threshold < 0.3 and m.threshold == m.fitted_threshold
    assert m.cv_balanced_accuracy == 1.0 and m.cv_false_fail == 0.0 and m.balanced_accuracy == 1.0 and m.may_gate


def test_labels_may_be_binary_and_cover_only_some_metrics(tmp_path):
    raw = json.loads(DEFAULT_LABELS.read_text())
    for item in raw["items"]:
        for label in item["labels"]:
            c = label["scores"]["correctness"]
            label["scores"] = {"correctness": "good" if c >= 4 else "bad" if c <= 2 else 3}
        item.pop("kind")
    path = tmp_path / "binary.json"
    path.write_text(json.dumps(raw))
    items, version = load_labels(path)
    cal = asyncio.run(calibrate(items, judge_from(oracle), version, breaks=False))
    assert cal.metric("correctness").auc == 1.0 and cal.metric("correctness").may_gate
    assert cal.metric("relevance").good == 0 and not cal.metric("relevance").may_gate
    assert cal.metric("relevance").why_not == ("0 good and 0 bad labelled answers scored, fewer than 10 of each",)


def test_limit_takes_a_balanced_subset_not_the_first_n():
    subset = balanced_subset(ITEMS, 12)
    assert len(subset) == 12
    verdicts = [{i.verdict(m) for m in SEED_METRICS} for i in subset]
    assert sum(v == {"good"} for v in verdicts) == 4 and sum("bad" in v for v in verdicts) == 4
    assert len({i.case_id for i in subset}) >= 8  # spread over questions
    assert subset != list(ITEMS[:12])


def test_the_grounding_metrics_catch_every_invented_fact_in_the_shipped_rubric():
    def yes(messages, options):
        return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(0.9)), ("No", math.log(0.1))),))

    judge = Judge(ScriptedModel(yes, token_probabilities=True), load_rubric())
    cal = asyncio.run(calibrate(ITEMS, judge, VERSION))
    invented = [b for b in cal.breaks if b.kind == "inventFact"]
    assert invented and all(b.failed("hallucinationFree") for b in invented)
    # faithfulness weighs the share of claims found (the shipped rubric's fitted weights): lower, named
    assert all(b.broken["faithfulness"] < b.original["faithfulness"] for b in invented)
    assert cal.metric("faithfulness").source == "probability"
    assert cal.metric("hallucinationFree").breaks_failed == cal.metric("hallucinationFree").breaks >= len(invented)


# --- the command and what a run reads ----------------------------------------------------------


def _args(tmp_path, *flags: str):
    return build_parser().parse_args(["calibrate", "--labels", str(DEFAULT_LABELS), "--min-labels", "3",
                                      "--db", f"sqlite:///{tmp_path / 'runs.db'}", *flags])


def test_by_default_a_metric_needs_ten_good_and_ten_bad_labels_to_gate():
    cal = asyncio.run(calibrate(ITEMS, judge_from(oracle), VERSION))  # a perfect judge
    assert cal.metric("relevance").why_not == ("50 good and 3 bad labelled answers scored, fewer than 10 of each",)
    assert all(m.may_gate for m in cal.metrics if m.metric != "relevance")


@pytest.mark.parametrize("scorer, code", [(oracle, 0), (always_five, 1), (blind_to_off_topic, 0)])
def test_exit_code_and_stored_record(tmp_path, capsys, scorer, code):
    out = tmp_path / "cal.json"
    judge = judge_from(scorer)
    assert run_calibration(_args(tmp_path, "--json", str(out)), judge) == code
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        record = store.latest_calibration("scripted-judge", judge.rubric_hash)
    assert record.passed is (code == 0) and record.labels_version == VERSION
    written = json.loads(out.read_text())
    assert written["passed"] is (code == 0) and [m["metric"] for m in written["metrics"]] == list(SEED_METRICS)
    assert "JUDGE CALIBRATION" in capsys.readouterr().out


def test_labels_or_a_rubric_other_than_the_shipped_pair_are_stored_only_when_asked(tmp_path, capsys):
    other = tmp_path / "rubric.md"
    other.write_text(SCALE_RUBRIC.text)
    judge = judge_from(oracle)
    assert run_calibration(_args(tmp_path, "--rubric", str(other)), judge) == 0
    assert "not stored" in capsys.readouterr().err
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        assert store.latest_calibration("scripted-judge", judge.rubric_hash) is None
    assert run_calibration(_args(tmp_path, "--rubric", str(other), "--record"), judge) == 0
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        assert store.latest_calibration("scripted-judge", judge.rubric_hash).passed


def test_limit_makes_a_partial_calibration(tmp_path):
    run_calibration(_args(tmp_path, "--limit", "30", "--break-limit", "1"), judge_from(oracle))
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        record = store.latest_calibration("scripted-judge", judge_from(oracle).rubric_hash)
        assert record.result["partial"] and record.result["itemCount"] == 30
        assert "partial" in calibration_problem(store, "scripted-judge", record.rubric_hash)


def test_what_a_run_reads_per_metric(tmp_path):
    metrics = [{"metric": "correctness", "mayGate": True, "fittedThreshold": 0.31},
               {"metric": "relevance", "mayGate": False, "whyNot": ["AUC 0.61 < 0.80"]}]
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        assert "no calibration" in calibration_problem(store, "m", "r")
        assert calibration_gates(store, "m", "r").notes == ()
        store.save_calibration(CalibrationRecord("c1", "m", "r", "v", False, "t1",
                                                 {"partial": False, "fitted": True, "metrics": metrics}))
        assert calibration_problem(store, "m", "r") is None  # full, and some metric may gate
        gates = calibration_gates(store, "m", "r")
        assert gates.not_gating == {"relevance"} and gates.thresholds == {"correctness": 0.31}
        assert gates.notes == (
            "metric correctness gates at its calibrated threshold 0.31 (calibration c1)",
            "metric relevance not allowed to gate (calibration c1: AUC 0.61 < 0.80): scored and shown, it does not "
            "decide pass or fail")
        store.save_calibration(CalibrationRecord("c2", "m", "r", "v", False, "t2", {
            "partial": False, "metrics": [{**m, "mayGate": False} for m in metrics]}))
        assert "no metric passed its latest calibration (t2)" in calibration_problem(store, "m", "r")
        assert calibration_problem(store, "m", "other-rubric") is not None


def test_a_calibration_from_before_per_metric_verdicts_is_still_read(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        old = {"failures": ["relevance: Spearman rho 0.40 < 0.80", "x"], "partial": False}
        store.save_calibration(CalibrationRecord("c1", "m", "r", "v", False, "t1", old))
        assert "failed its latest calibration (t1): relevance: Spearman rho 0.40 < 0.80 (+1 more)" in \
            calibration_problem(store, "m", "r")


def test_a_metric_that_fails_too_many_good_answers_may_not_gate_however_well_it_ranks():
    goods = [i for i in ITEMS if i.verdict("correctness") == "good"]
    harsh = {(i.question, i.answer) for i in goods[: len(goods) // 3]}  # a third of the good answers

    def p_yes(question: str, answer: str) -> float:
        verdict = next(i for i in ITEMS if (i.question, i.answer) == (question, answer)).verdict("correctness")
        return 0.45 if (question, answer) in harsh else 0.9 if verdict == "good" else 0.1

    m = asyncio.run(calibrate(ITEMS, probability_judge(p_yes), VERSION, breaks=False)).metric("correctness")
    assert m.auc == 1.0 and m.balanced_accuracy >= 0.8  # ranks perfectly, ...
    assert m.false_fail == pytest.approx(len(harsh) / len(goods))  # ... but fails a third of the right answers
    assert not m.may_gate and m.why_not == (f"fails {m.false_fail:.2f} of the good answers at 0.5, more than 0.20",)


def test_the_default_judge_gates_by_the_shipped_calibration_until_the_store_has_its_own(tmp_path):
    from tracegrade.judge.scoring import load_rubric
    from tracegrade.models.weights import MODEL_ID

    rubric = load_rubric().hash
    shipped = json.loads(defaults.path("calibration-local.json").read_text())
    barred = {m["metric"] for m in shipped["metrics"] if not m["mayGate"]}
    assert (shipped["judgeModel"], shipped["rubricHash"]) == (MODEL_ID, rubric)  # measured on what ships
    assert barred and barred != {m["metric"] for m in shipped["metrics"]}  # some metrics gate, some do not
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        assert calibration_problem(store, MODEL_ID, rubric) is None
        gates = calibration_gates(store, MODEL_ID, rubric)
        assert gates.not_gating == barred and all("shipped with tracegrade" in n for n in gates.notes)
        ungated = frozenset(m.name for m in load_rubric().metrics if not m.gate)  # gate: false in the rubric
        assert ungated and not any(name in n for name in ungated for n in calibration_gates(
            store, MODEL_ID, rubric, ungated).notes)  # nothing said about a metric that never gates
        assert "no calibration" in calibration_problem(store, MODEL_ID, "an-edited-rubric")
        assert "no calibration" in calibration_problem(store, "another-judge", rubric)
        store.save_calibration(CalibrationRecord("mine", MODEL_ID, rubric, "v", True, "t9", {
            "partial": False, "metrics": [{"metric": m, "mayGate": True} for m in barred]}))
        assert calibration_gates(store, MODEL_ID, rubric).not_gating == frozenset()  # the user's own wins
