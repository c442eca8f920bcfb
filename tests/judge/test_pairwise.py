"""Pairwise order logic with scripted judges, and the command on results files."""

from __future__ import annotations

import asyncio
import json

import pytest

from tracegrade.cli import build_parser
from tracegrade.cli.pairwise import run_pairwise
from tracegrade.core.errors import ConfigError, JudgeReplyError
from tracegrade.models.scripted import ScriptedModel
from tracegrade.judge.pairwise import compare_runs, pair_messages, parse_preference, resolve
from tracegrade.outputs import json_report
from tracegrade.report.pairwise import render
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.core.trace import Reply, ToolCall

QUESTIONS = {f"case-{n}": f"Question {n}?" for n in range(6)}


def _run(run_id: str, answers: dict[str, str], model: str) -> Run:
    call = ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-101"}, result="Order ORD-101 is SHIPPED.")
    results = tuple(
        CaseResult(case_id, "pass", question=QUESTIONS[case_id],
                   reply=Reply(answer=answer, context="SOURCE: x.md\npolicy", tool_calls=(call,), model=model))
        for case_id, answer in answers.items())
    manifest = Manifest(run_id, "d.json", "v1", len(results), "t", model, "judge", "r")
    return Run(manifest, results)


GOOD = _run("run-good", {c: f"good answer {n}" for n, c in enumerate(QUESTIONS)}, "model-secret-a")
BAD = _run("run-bad", {c: f"bad answer {n}" for n, c in enumerate(QUESTIONS)}, "model-secret-b")


def _pick(winner: str, reason: str = "because") -> str:
    return json.dumps({"winner": winner, "reason": reason})


def first_position(messages, options) -> str:
    return _pick("A", "the first one")


def prefers_good(messages, options) -> str:
    text = messages[-1].content
    a = text.split("ANSWER A:\n", 1)[1].split("\n", 1)[0]
    return _pick("A" if a.startswith("good") else "B", "it is the good one")


def test_resolve_counts_a_verdict_only_when_both_orders_agree():
    assert [resolve("A", "B"), resolve("B", "A"), resolve("tie", "tie")] == ["a", "b", "tie"]
    assert [resolve("A", "A"), resolve("B", "B"), resolve("A", "tie"), resolve("tie", "B")] == ["tie"] * 4


def test_a_judge_that_always_prefers_the_first_position_flips_every_time_and_ties_every_pair():
    report = asyncio.run(compare_runs(GOOD, BAD, ScriptedModel(first_position), "rubric"))
    assert (report.wins, report.ties, report.losses) == (0, 6, 0)
    assert report.flip_rate == 1.0
    assert report.p_value == 1.0
    assert "position flip rate  100% (6 of 6" in render(report)


def test_a_judge_that_reads_the_content_gives_run_a_every_win_in_both_orders():
    model = ScriptedModel(prefers_good)
    report = asyncio.run(compare_runs(GOOD, BAD, model, "rubric"))
    assert (report.wins, report.ties, report.losses, report.flip_rate) == (6, 0, 0, 0.0)
    assert report.p_value == pytest.approx(2 / 2**6)
    assert len(model.calls) == 12  # every pair, both orders
    swapped = asyncio.run(compare_runs(BAD, GOOD, ScriptedModel(prefers_good), "rubric"))
    assert (swapped.wins, swapped.losses) == (0, 6)


def test_the_judge_never_sees_run_or_model_names_and_uses_the_schema():
    model = ScriptedModel(prefers_good)
    asyncio.run(compare_runs(GOOD, BAD, model, "rubric"))
    for messages, options in model.calls:
        text = " ".join(m.content for m in messages)
        assert not any(secret in text for secret in ("run-good", "run-bad", "model-secret"))
        assert options.json_schema["properties"]["winner"]["enum"] == ["A", "B", "tie"]
        assert options.temperature == 0.0


def test_identical_answers_tie_without_a_judge_call_and_unmatched_cases_are_skipped():
    a = _run("a", {"case-0": "same", "case-1": "x", "case-2": "only in a"}, "m")
    b = _run("b", {"case-0": "same", "case-1": "y", "case-3": "only in b"}, "m")
    model = ScriptedModel(prefers_good)
    report = asyncio.run(compare_runs(a, b, model, "rubric"))
    assert [(v.case_id, v.identical) for v in report.verdicts] == [("case-0", True), ("case-1", False)]
    assert report.skipped == (("case-2", "not in run B"), ("case-3", "not in run A"))
    assert len(model.calls) == 2


def test_an_unusable_reply_in_one_order_makes_a_tie_with_the_reason():
    replies = iter([_pick("A"), "no idea", "still no idea"])
    report = asyncio.run(compare_runs(_run("a", {"case-0": "x"}, "m"), _run("b", {"case-0": "y"}, "m"),
                                      ScriptedModel(lambda m, o: next(replies)), "rubric", concurrency=1, attempts=2))
    (verdict,) = report.verdicts
    assert verdict.outcome == "tie" and not verdict.judged and "not a JSON object" in verdict.error
    assert report.flip_rate is None


def test_parse_preference():
    assert parse_preference('{"winner": "B", "reason": " shorter "}').reason == "shorter"
    with pytest.raises(JudgeReplyError, match="winner must be"):
        parse_preference('{"winner": "C", "reason": ""}')


def test_shared_evidence_is_shown_once_and_different_evidence_per_answer():
    one = GOOD.results[0].reply
    shared = pair_messages("r", "Q?", one, BAD.results[0].reply)[1].content
    assert "EVIDENCE BOTH AGENTS SAW" in shared and "EVIDENCE FOR ANSWER A" not in shared
    apart = pair_messages("r", "Q?", one, Reply(answer="other", context="SOURCE: y.md"))[1].content
    assert "EVIDENCE FOR ANSWER A" in apart and "EVIDENCE FOR ANSWER B" in apart


def test_the_command_reads_run_ids_from_the_runs_folder(tmp_path, capsys):
    for run in (GOOD, BAD):
        json_report.write(run, tmp_path / "runs" / run.manifest.run_id / "results.json")
    args = build_parser().parse_args(["pairwise", "run-good", str(tmp_path / "runs" / "run-bad"), "--runs",
                                      str(tmp_path / "runs"), "--json", str(tmp_path / "p.json")])
    assert run_pairwise(args, ScriptedModel(prefers_good)) == 0
    assert "A wins 6   ties 0   B wins 0" in capsys.readouterr().out
    assert json.loads((tmp_path / "p.json").read_text())["wins"] == 6


def test_the_command_names_a_run_it_cannot_find(tmp_path):
    args = build_parser().parse_args(["pairwise", "nope", "nope", "--runs", str(tmp_path),
                                      "--db", f"sqlite:///{tmp_path / 'runs.db'}"])
    with pytest.raises(ConfigError, match="no run matching 'nope'"):
        run_pairwise(args, ScriptedModel(prefers_good))
