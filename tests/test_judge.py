"""The judge: strict parsing of scores, bounded retries, the evidence it is shown."""

from __future__ import annotations

import asyncio
import json

import pytest

from tracegrade.eval.dataset import GoldenCase, HistoryTurn
from tracegrade.core.errors import JudgeReplyError, ModelError
from tracegrade.judge.scoring import (
    DEFAULT_RUBRIC, METRICS, SCORE_SCHEMA, Judge, Scores, Unscored, evidence, load_rubric, parse_scores, rubric_hash,
)
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel
from tracegrade.core.trace import Reply, ToolCall

GOOD = {"relevance": 5, "correctness": 4, "faithfulness": 5, "helpfulness": 4, "hallucinationFree": 5,
        "reason": "Helpfulness lost a point: no next step."}


def scores_json(**changes) -> str:
    return json.dumps({**GOOD, **changes})


CASE = GoldenCase(
    id="combined-return-01", question="Can I still return ORD-102?",
    goldenAnswer="Yes. ORD-102 was delivered 20 days ago, inside the 30 day return window.",
    expectedBehaviour="Combine the tool result with the policy.",
)
REPLY = Reply(
    answer="Yes, you can: it arrived 20 days ago.",
    retrieved_sources=("return-policy.md",),
    context="SOURCE: return-policy.md\n# Return Policy\nItems can be returned within 30 days of delivery.",
    tool_calls=(ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-102"}, argument="ORD-102",
                         result="Order ORD-102 is DELIVERED. It was delivered 20 days ago.", status="ok"),),
)


# --- parse_scores ----------------------------------------------------------------


def test_parse_scores_reads_every_metric_and_the_reason():
    scores = parse_scores(scores_json())
    assert dict(scores.values) == {m: GOOD[m] for m in METRICS}
    assert scores.reason == GOOD["reason"] and scores.lowest() == 4


def test_parse_scores_finds_the_object_inside_surrounding_text():
    assert parse_scores(f"Here you go:\n```json\n{scores_json()}\n```").values["correctness"] == 4


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_is_not_an_int(value):
    with pytest.raises(JudgeReplyError, match=f"relevance must be 1..5, got {value}"):
        parse_scores(scores_json(relevance=value))


@pytest.mark.parametrize("value", [0, 6, 7, -1])
def test_scores_outside_1_to_5_are_rejected(value):
    with pytest.raises(JudgeReplyError, match=f"correctness must be 1..5, got {value}"):
        parse_scores(scores_json(correctness=value))


@pytest.mark.parametrize("value", [4.0, "4", None, [4]])
def test_scores_that_are_not_integers_are_rejected(value):
    with pytest.raises(JudgeReplyError, match="faithfulness must be 1..5"):
        parse_scores(scores_json(faithfulness=value))


def test_a_missing_metric_is_rejected():
    data = {k: v for k, v in GOOD.items() if k != "hallucinationFree"}
    with pytest.raises(JudgeReplyError, match="hallucinationFree must be 1..5, got None"):
        parse_scores(json.dumps(data))


def test_every_problem_is_named_at_once():
    with pytest.raises(JudgeReplyError) as info:
        parse_scores(scores_json(relevance=0, helpfulness=9))
    assert str(info.value) == "relevance must be 1..5, got 0; helpfulness must be 1..5, got 9"


@pytest.mark.parametrize("text", ["The answer is great, 5/5.", "", "{not json}", "} {", '{"relevance": 5'])
def test_non_json_is_rejected(text):
    with pytest.raises(JudgeReplyError, match="not JSON"):
        parse_scores(text)


def test_a_json_array_is_not_an_object():
    with pytest.raises(JudgeReplyError):
        parse_scores("[1, 2, 3]")


def test_a_missing_or_odd_reason_is_empty_not_an_error():
    assert parse_scores(json.dumps({m: 5 for m in METRICS})).reason == ""
    assert parse_scores(scores_json(reason=42)).reason == ""
    assert parse_scores(scores_json(reason="  fine  ")).reason == "fine"


# --- evidence ----------------------------------------------------------------------


def test_the_evidence_holds_question_context_tools_golden_answer_and_answer():
    text = evidence(CASE, REPLY)
    for part in (CASE.question, REPLY.context, 'getOrderStatus({"orderId": "ORD-102"})',
                 "[ok] Order ORD-102 is DELIVERED. It was delivered 20 days ago.",
                 CASE.golden_answer, CASE.expected_behaviour, REPLY.answer):
        assert part in text
    # The answer to score comes last, after everything it is judged against.
    assert text.index("ANSWER TO SCORE") > text.index("GOLDEN ANSWER") > text.index("TOOL CALLS")


def test_the_evidence_says_when_there_is_no_context_or_tool_call():
    text = evidence(GoldenCase(id="oos", question="Capital of France?"), Reply(answer="I can only help with ShopNest."))
    assert "POLICY CONTEXT THE AGENT SAW:\n(none)" in text
    assert "TOOL CALLS AND RESULTS:\n(none)" in text
    assert "GOLDEN ANSWER:\n(none given)" in text
    assert "EXPECTED BEHAVIOUR" not in text and "EARLIER CONVERSATION" not in text


def test_the_evidence_includes_an_earlier_conversation():
    multi = CASE.model_copy(update={"history": (HistoryTurn(role="user", content="I bought shoes."),)})
    assert "EARLIER CONVERSATION:\nuser: I bought shoes." in evidence(multi, REPLY)


# --- Judge with a scripted model ------------------------------------------------------


def judge_with(script, attempts: int = 3) -> tuple[Judge, ScriptedModel]:
    model = ScriptedModel(script, model_id="judge-m")
    return Judge(model, rubric="RUBRIC TEXT", attempts=attempts), model


async def test_a_valid_first_reply_is_scored_at_temperature_0_with_the_schema():
    judge, model = judge_with([scores_json()])
    result = await judge.score(CASE, REPLY)
    assert result == Scores({m: GOOD[m] for m in METRICS}, GOOD["reason"], 10, 5, attempts=1)
    ((messages, options),) = model.calls
    assert [(m.role, m.content) for m in messages] == [("system", "RUBRIC TEXT"), ("user", evidence(CASE, REPLY))]
    assert options.temperature == 0.0
    assert options.json_schema == SCORE_SCHEMA
    assert options.tools == ()


async def test_garbage_then_valid_gives_scores_after_two_attempts():
    judge, model = judge_with(["I think it is fine.", scores_json(correctness=5)])
    result = await judge.score(CASE, REPLY)
    assert isinstance(result, Scores)
    assert result.attempts == 2 and result.values["correctness"] == 5
    assert (result.input_tokens, result.output_tokens) == (20, 10)  # both calls counted
    first, retry = (options for _, options in model.calls)
    assert first.temperature == 0.0 and retry.temperature > 0.0  # the same input at 0 repeats the same mistake
    assert first.seed != retry.seed
    assert retry.json_schema == SCORE_SCHEMA


async def test_always_garbage_is_unscored_with_the_reason_after_bounded_attempts():
    calls = []

    def garbage(messages, options):
        calls.append(options)
        return scores_json(correctness=7)

    judge, _ = judge_with(garbage, attempts=3)
    result = await judge.score(CASE, REPLY)
    assert result == Unscored("judge reply unusable: correctness must be 1..5, got 7", 30, 15, attempts=3)
    assert len(calls) == 3


async def test_a_failing_judge_call_is_retried_then_unscored():
    judge, model = judge_with([ModelError("HTTP 500"), ModelError("HTTP 503")], attempts=2)
    result = await judge.score(CASE, REPLY)
    assert isinstance(result, Unscored)
    assert result.reason == "judge call failed: ModelError: HTTP 503" and result.attempts == 2
    assert len(model.calls) == 2


async def test_a_call_failure_then_a_good_reply_is_scored():
    judge, _ = judge_with([ConnectionError("reset"), ChatResponse(text=scores_json(), input_tokens=7, output_tokens=3)])
    result = await judge.score(CASE, REPLY)
    assert isinstance(result, Scores) and result.attempts == 2
    assert (result.input_tokens, result.output_tokens) == (7, 3)


async def test_the_judge_can_score_two_answers_at_once():
    # Nothing is stored on the judge: the same instance serves concurrent cases.
    def by_answer(messages, options):
        return scores_json(correctness=5 if "ANSWER TO SCORE:\nright" in messages[-1].content else 2)

    judge, _ = judge_with(by_answer)
    right, wrong = await asyncio.gather(judge.score(CASE, Reply(answer="right")), judge.score(CASE, Reply(answer="wrong")))
    assert (right.values["correctness"], wrong.values["correctness"]) == (5, 2)


# --- rubric ----------------------------------------------------------------------------


def test_the_shipped_rubric_names_every_metric_and_the_rules():
    rubric = load_rubric()
    assert load_rubric(DEFAULT_RUBRIC) == rubric
    for metric in METRICS:
        assert f"- {metric}:" in rubric
    for rule in ("use only the evidence", "golden answer", "unsupported", "out-of-scope", "5 = ", "1 = "):
        assert rule.lower() in rubric.lower()


def test_rubric_hash_changes_with_the_text():
    judge, _ = judge_with([])
    assert judge.rubric_hash == rubric_hash("RUBRIC TEXT") != rubric_hash("RUBRIC TEXT.")
    assert len(judge.rubric_hash) == 12


def test_the_score_schema_requires_every_metric_as_an_integer_1_to_5():
    assert SCORE_SCHEMA["required"] == [*METRICS, "reason"]
    assert SCORE_SCHEMA["additionalProperties"] is False
    for metric in METRICS:
        assert SCORE_SCHEMA["properties"][metric] == {"type": "integer", "minimum": 1, "maximum": 5}
