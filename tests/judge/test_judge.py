"""The judge: metrics from a rubric, scored by token probabilities, strict JSON or code; honest "not scored"."""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time

import pytest

from judge_rubrics import SCALE_RUBRIC, SEED_METRICS
from tracegrade.core.errors import ConfigError, ModelError
from tracegrade.core.results import Scores, Unscored
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.schema import GoldenCase, HistoryTurn
from tracegrade.judge import json_scores
from tracegrade.judge.prompt import evidence_text, section_texts
from tracegrade.judge.rubric import DEFAULT_RUBRIC, load_rubric, parse_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel

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
RUBRIC = parse_rubric("""---
evidence:
  question: ASKED
  reference: KNOWN RIGHT ANSWER
  context: PASSAGES
  tools: CALLS
  answer: REPLY
metrics:
  - name: relevance
    measures: on topic
    yesNo: Does the reply respond to what was asked?
    evidence: [question, reference, answer]
  - name: correctness
    measures: agrees with the reference
    yesNo: Does the reply agree with the known right answer?
    needsReference: true
    evidence: [question, reference, answer]
  - name: faithfulness
    measures: grounded
    code: grounding
    evidence: [question, context, tools]
  - name: completeness
    measures: all parts covered
    checklist:
      - Does it say whether the item can be returned?
      - Does it say why?
    rule: all
    evidence: [question, context, tools, answer]
  - name: tone
    measures: polite
    scale: How polite is the reply?
    evidence: [question, context, tools, answer]
---
Judge one reply.
""", "test-rubric.md")


def logprobs(**tokens: float) -> tuple:
    """One output position's alternatives from token -> probability."""
    return (tuple((token, math.log(p)) for token, p in tokens.items()),)


def by_question(answers: dict[str, tuple]) -> ScriptedModel:
    """A probability-capable model answering each question (matched by its text) with ``answers[...]``."""
    def reply(messages, options):
        text = messages[-1].content
        key = next(k for k in answers if k in text)
        return ChatResponse(text="Yes", top_logprobs=answers[key], input_tokens=100, output_tokens=1,
                            cached_tokens=60)
    return ScriptedModel(reply, model_id="judge-p", token_probabilities=True)


ANSWERS = {
    "respond to what was asked": logprobs(Yes=0.9, No=0.1),
    "agree with the known right answer": logprobs(Yes=0.3, No=0.6, Maybe=0.1),
    "whether the item": logprobs(Yes=0.8, No=0.2),
    "say why": logprobs(Yes=0.4, No=0.6),
    "How polite": logprobs(**{"5": 0.5, "4": 0.25, "3": 0.25}),
    "supported by what the assistant saw": logprobs(Yes=0.9, No=0.1),
}


# --- the probability path ----------------------------------------------------------------


async def test_each_metric_is_scored_from_token_probabilities_with_its_source():
    model = by_question(ANSWERS)
    scores = await Judge(model, RUBRIC).score(CASE, REPLY)
    assert isinstance(scores, Scores)
    got = {m.name: (round(m.value, 4), m.source) for m in scores.metrics}
    assert got == {
        "relevance": (0.9, "probability"),
        "correctness": (round(0.3 / 0.9, 4), "probability"),  # P(yes) / (P(yes) + P(no)); "Maybe" left out
        "faithfulness": (1.0, "code"),  # 20 days and ORD-102 are in the tool result
        "completeness": (0.4, "probability"),  # rule all: the lowest item
        "tone": (4.25, "probability"),  # expected digit: 5*.5 + 4*.25 + 3*.25
    }
    assert [m.name for m in scores.metrics] == [m.name for m in RUBRIC.metrics]  # rubric order
    assert (scores.input_tokens, scores.output_tokens, scores.cached_tokens) == (500, 5, 300)


async def test_one_output_token_per_question_and_the_evidence_is_a_shared_prefix():
    model = by_question(ANSWERS)
    await Judge(model, RUBRIC).score(CASE, REPLY)
    assert len(model.calls) == 5  # relevance, correctness, two checklist items, tone: faithfulness is code
    assert all(o.max_tokens == 1 and o.logprobs == 20 and o.json_schema is None for _, o in model.calls)
    prompts = [messages[-1].content for messages, _ in model.calls]
    # The questions with the same sections follow each other; each starts with their shared evidence.
    short = evidence_text(RUBRIC.headings, section_texts(CASE, REPLY), ["question", "reference", "answer"])
    full = evidence_text(RUBRIC.headings, section_texts(CASE, REPLY), ["question", "context", "tools", "answer"])
    assert [p.startswith(short + "\n\n") for p in prompts] == [True, True, False, False, False]
    assert all(p.startswith(full + "\n\n") for p in prompts[2:])
    assert prompts[0].endswith("Does the reply respond to what was asked?")
    assert prompts[4].endswith("How polite is the reply? Answer with one digit from 1 (worst) to 5 (best).")
    # The yes/no format is said once, in the system message every question shares (the cache holds it).
    assert all(messages[0].content == "Judge one reply.\nAnswer each question with Yes or No."
               for messages, _ in model.calls)


class LastPromptCache:
    """A fake runtime that keeps the last prompt only, as the local model's caches do, and counts
    the characters each call evaluates (those past the prefix it shares with the one before)."""

    def __init__(self) -> None:
        self.last, self.evaluated, self.calls = "", 0, []

    def __call__(self, messages, options):
        prompt = "\n".join(m.content for m in messages)
        shared = next((i for i, (a, b) in enumerate(zip(self.last, prompt)) if a != b), min(len(self.last), len(prompt)))
        self.evaluated += len(prompt) - shared
        self.last = prompt
        self.calls.append(messages[-1].content)
        return ChatResponse(text="Yes", top_logprobs=ANSWERS[next(k for k in ANSWERS if k in messages[-1].content)])


OTHER = (CASE.model_copy(update={"id": "other", "question": "Where is ORD-7?"}),
         REPLY.model_copy(update={"answer": "ORD-7 is on its way."}))


async def judged_at_once(one_call_at_a_time: bool) -> LastPromptCache:
    cache = LastPromptCache()
    judge = Judge(ScriptedModel(cache, token_probabilities=True, one_call_at_a_time=one_call_at_a_time), RUBRIC)
    await asyncio.gather(judge.score(CASE, REPLY), judge.score(*OTHER))
    return cache


async def test_answers_judged_at_once_on_a_one_call_model_ask_their_questions_in_a_row():
    cache = await judged_at_once(one_call_at_a_time=True)
    answers = ["ORD-7 is on its way" in prompt for prompt in cache.calls]
    assert answers == sorted(answers, key=lambda other: other != answers[0])  # one answer's five, then the other's
    alone = LastPromptCache()
    judge = Judge(ScriptedModel(alone, token_probabilities=True), RUBRIC)
    await judge.score(CASE, REPLY)
    await judge.score(*OTHER)
    assert cache.evaluated == alone.evaluated  # as cheap as one answer after the other


async def test_a_model_that_answers_in_parallel_is_not_held_to_one_answer_at_a_time():
    cache = await judged_at_once(one_call_at_a_time=False)
    answers = ["ORD-7 is on its way" in prompt for prompt in cache.calls]
    assert answers[:2] == [False, True]  # the two answers' first questions went out together
    assert cache.evaluated > (await judged_at_once(one_call_at_a_time=True)).evaluated


def test_one_call_models_judged_under_two_event_loops_at_once_each_get_their_own_turns():
    """A pytest plugin's or a Ray worker's judge may run under another loop of the same process."""
    def slow(messages, options):
        time.sleep(0.002)  # WHY: holds the turn while the other thread's loop asks for it
        return ChatResponse(text="Yes", top_logprobs=ANSWERS[next(k for k in ANSWERS if k in messages[-1].content)])

    judge = Judge(ScriptedModel(slow, token_probabilities=True, one_call_at_a_time=True), RUBRIC)
    scored: list[object] = []

    async def four_at_once() -> list[object]:
        return list(await asyncio.wait_for(asyncio.gather(*(judge.score(CASE, REPLY) for _ in range(4))), 30))

    def judge_in_own_loop() -> None:
        scored.extend(asyncio.run(four_at_once()))

    threads = [threading.Thread(target=judge_in_own_loop) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(scored) == 8 and all(isinstance(s, Scores) for s in scored)


async def test_the_headings_come_from_the_rubric_not_from_code():
    model = by_question(ANSWERS)
    await Judge(model, RUBRIC).score(CASE, REPLY)
    prompt = model.calls[2][0][-1].content
    for heading in ("ASKED:\n", "PASSAGES:\n", "CALLS:\n", "REPLY:\n"):
        assert heading in prompt
    assert "POLICY" not in prompt and "GOLDEN" not in prompt and "QUESTION:" not in prompt
    assert "KNOWN RIGHT ANSWER:\n" + CASE.golden_answer in model.calls[0][0][-1].content


async def test_a_case_without_a_reference_is_not_scored_on_the_metrics_that_need_one():
    model = by_question(ANSWERS)
    no_reference = CASE.model_copy(update={"golden_answer": ""})
    scores = await Judge(model, RUBRIC).score(no_reference, REPLY)
    correctness = next(m for m in scores.metrics if m.name == "correctness")
    assert correctness.value is None and correctness.passed is None
    assert correctness.detail == "not scored: the case has no reference answer"
    assert not any("known right answer" in m[-1].content for m, _ in model.calls)  # not asked at all
    assert "correctness" not in scores.values and scores.values["relevance"] == pytest.approx(0.9)


async def test_no_probabilities_from_a_provider_that_claims_them_is_not_scored_not_guessed():
    model = ScriptedModel(lambda m, o: ChatResponse(text="Yes"), token_probabilities=True)
    scores = await Judge(model, RUBRIC).score(CASE, REPLY)
    asked = [m for m in scores.metrics if m.source == "probability"]
    assert asked and all(m.value is None for m in asked)
    assert all(m.detail == "not scored: the provider returned no token probabilities" for m in asked)
    assert scores.values == {"faithfulness": 1.0}  # the code metric still counts


async def test_a_model_that_answers_neither_yes_nor_no_leaves_the_metric_not_scored():
    answers = {**ANSWERS, "respond to what was asked": logprobs(The=0.7, Yes=0.2, No=0.1)}
    scores = await Judge(by_question(answers), RUBRIC).score(CASE, REPLY)
    relevance = scores.metrics[0]
    assert relevance.value is None and "did not answer Yes or No (top token 'The')" in relevance.detail


async def test_a_failing_call_is_retried_then_the_metric_is_not_scored():
    calls = []

    def flaky(messages, options):
        calls.append(options.seed)
        if "respond to what was asked" in messages[-1].content:
            raise ModelError("HTTP 503")
        return ChatResponse(text="Yes", top_logprobs=logprobs(Yes=0.9, No=0.1))

    scores = await Judge(ScriptedModel(flaky, token_probabilities=True), RUBRIC, attempts=2).score(CASE, REPLY)
    assert scores.metrics[0].value is None and "judge call failed: ModelError: HTTP 503" in scores.metrics[0].detail
    assert scores.attempts == 2 and calls[:2] == [1, 2]
    assert scores.metrics[1].value == pytest.approx(0.9)


# --- the strict-JSON path -------------------------------------------------------------------


def json_judge(script, attempts: int = 3, rubric=RUBRIC) -> tuple[Judge, ScriptedModel]:
    model = ScriptedModel(script, model_id="judge-j")
    return Judge(model, rubric, attempts=attempts), model


GOOD_JSON = {"relevance": "yes", "correctness": "no", "completeness_1": "yes", "completeness_2": "no", "tone": 4,
             "reason": "It says yes, the reference says so too, but gives no reason."}


async def test_without_probabilities_one_json_call_asks_every_question():
    judge, model = json_judge([json.dumps(GOOD_JSON)])
    scores = await judge.score(CASE, REPLY)
    assert {m.name: (m.value, m.source) for m in scores.metrics} == {
        "relevance": (1.0, "json"), "correctness": (0.0, "json"), "faithfulness": (1.0, "code"),
        "completeness": (0.0, "json"), "tone": (4.0, "json")}
    assert scores.reason == GOOD_JSON["reason"]
    ((messages, options),) = model.calls
    assert options.temperature == 0.0 and options.logprobs == 0
    assert list(options.json_schema["properties"]) == [*GOOD_JSON]  # reason last
    assert options.json_schema["properties"]["tone"] == {"type": "integer", "minimum": 1, "maximum": 5}
    assert options.json_schema["properties"]["relevance"] == {"type": "string", "enum": ["yes", "no"]}
    assert options.max_tokens == json_scores.max_tokens(RUBRIC.metrics[:2] + RUBRIC.metrics[3:]) < 200
    assert messages[-1].content.index("REPLY:\n") < messages[-1].content.index("QUESTIONS")


async def test_garbage_then_valid_json_after_two_attempts():
    judge, model = json_judge(["I think it is fine.", json.dumps(GOOD_JSON)])
    scores = await judge.score(CASE, REPLY)
    assert scores.attempts == 2 and scores.values["tone"] == 4
    first, retry = (options for _, options in model.calls)
    assert first.temperature == 0.0 and retry.temperature > 0.0 and first.seed != retry.seed


@pytest.mark.parametrize("field, value, message", [
    ("tone", 7, "tone must be 1..5, got 7"),
    ("tone", True, "tone must be 1..5, got True"),
    ("relevance", "maybe", "relevance must be \"yes\" or \"no\", got 'maybe'"),
    ("relevance", None, "relevance must be \"yes\" or \"no\", got None"),
])
async def test_unusable_json_leaves_the_model_metrics_not_scored_with_the_reason(field, value, message):
    judge, model = json_judge([json.dumps({**GOOD_JSON, field: value})] * 2, attempts=2)
    scores = await judge.score(CASE, REPLY)
    assert len(model.calls) == 2
    assert scores.values == {"faithfulness": 1.0}
    assert all(m.detail == f"not scored: judge reply unusable: {message}" for m in scores.metrics if m.source == "json")


async def test_no_metric_scored_at_all_is_unscored():
    judge, _ = json_judge(["not json"], attempts=1, rubric=SCALE_RUBRIC)
    outcome = await judge.score(CASE, REPLY)
    assert outcome == Unscored("judge reply unusable: not JSON: 'not json'", 10, 5, 1, 0)


async def test_the_judge_can_score_two_answers_at_once():
    # Nothing is stored on the judge: the same instance serves concurrent cases.
    def by_answer(messages, options):
        value = 5 if "ANSWER TO JUDGE" in messages[-1].content and "right" in messages[-1].content else 2
        return json.dumps({**{m: value for m in SEED_METRICS}, "reason": ""})

    judge, _ = json_judge(by_answer, rubric=SCALE_RUBRIC)
    right, wrong = await asyncio.gather(judge.score(CASE, Reply(answer="right")), judge.score(CASE, Reply(answer="wrong")))
    assert (right.values["correctness"], wrong.values["correctness"]) == (5, 2)


# --- the shipped rubric and the evidence -----------------------------------------------------------


def test_the_shipped_rubric_defines_the_five_seed_metrics_domain_neutral():
    rubric = load_rubric()
    assert load_rubric(DEFAULT_RUBRIC).hash == rubric.hash and len(rubric.hash) == 12
    assert [m.name for m in rubric.metrics] == [*SEED_METRICS, "completeness"]
    kinds = {m.name: m.kind for m in rubric.metrics}
    assert kinds == {"relevance": "yesNo", "correctness": "yesNo", "faithfulness": "yesNo", "helpfulness": "yesNo",
                     "hallucinationFree": "code", "completeness": "code"}
    assert rubric.metric("correctness").needs_reference and rubric.metric("helpfulness").needs_reference
    # Faithfulness: the model and code together; both grounding metrics n/a without evidence.
    assert rubric.metric("faithfulness").model_and_code and rubric.metric("faithfulness").needs_evidence
    assert rubric.metric("hallucinationFree").needs_evidence
    # Grounding in what the assistant saw; hallucinationFree also accepts what the reference states.
    assert "reference" not in rubric.metric("faithfulness").evidence
    assert "reference" in rubric.metric("hallucinationFree").evidence
    # An answer that invents a specific is neither correct nor helpful; one that leaves out a
    # fact of the reference is not helpful, and that alone decides nothing (gate false).
    assert rubric.metric("correctness").requires == ("hallucinationFree",)
    assert rubric.metric("helpfulness").requires == ("hallucinationFree", "completeness")
    assert rubric.metric("completeness").code == "coverage" and not rubric.metric("completeness").gate
    text = rubric.text.lower()
    assert "shopnest" not in text and "policy" not in text and "shop" not in text


def test_the_evidence_holds_each_section_under_its_heading_and_says_none():
    texts = section_texts(CASE.model_copy(update={"history": (HistoryTurn(role="user", content="I bought shoes."),)}),
                          Reply(answer="Sure."))
    text = evidence_text(load_rubric().headings, texts, list(texts))
    assert "EARLIER CONVERSATION:\nuser: I bought shoes." in text
    assert "CONTEXT THE ASSISTANT SAW:\n(none)" in text and "TOOL CALLS:\n(none)" in text
    # The rubric's order: the answer, then the reference it is held to, then the evidence.
    assert text.index("QUESTION") < text.index("ANSWER TO JUDGE") < text.index("REFERENCE ANSWER") \
        < text.index("CONTEXT THE ASSISTANT SAW")
    assert "EXPECTED BEHAVIOUR:\n" + CASE.expected_behaviour in text


def test_an_empty_context_or_tool_section_is_left_out_when_the_other_holds_evidence():
    headings, sections = load_rubric().headings, ["question", "context", "tools", "answer"]
    read = evidence_text(headings, section_texts(CASE, Reply(answer="Sure.", context="Open daily.")), sections)
    assert "CONTEXT THE ASSISTANT SAW:\nOpen daily." in read and "TOOL CALLS" not in read
    called = evidence_text(headings, section_texts(CASE, Reply(answer="Sure.", tool_calls=(
        ToolCall(name="hours", arguments={}, result="9-5"),))), sections)
    assert "TOOL CALLS:\nhours(): 9-5" in called and "CONTEXT THE ASSISTANT SAW" not in called
    # Shown only one of them, an empty one still says so: it is all the judge learns of what was seen.
    only_context = evidence_text(headings, section_texts(CASE, Reply(answer="Sure.", tool_calls=(
        ToolCall(name="hours", arguments={}, result="9-5"),))), ["question", "context", "answer"])
    assert "CONTEXT THE ASSISTANT SAW:\n(none)" in only_context


# --- requires, and the rubric file's errors ---------------------------------------------------------


async def test_a_metric_fails_with_the_metric_it_requires_and_says_why():
    rubric = load_rubric()
    judge = Judge(by_question({"same conclusion": logprobs(Yes=0.9, No=0.1), "respond": logprobs(Yes=0.9, No=0.1),
                               "what the reference answer gives": logprobs(Yes=0.8, No=0.2)}), rubric)
    invented = REPLY.model_copy(update={"answer": "Yes, you can: it arrived 20 days ago. A 15% fee applies."})
    scores = {m.name: m for m in (await judge.score(CASE, invented)).metrics}
    assert scores["hallucinationFree"].value == 0.0 and "'15%' (percent)" in scores["hallucinationFree"].detail
    correctness = scores["correctness"]
    assert (correctness.value, correctness.source, correctness.passed) == (0.0, "code", False)
    assert correctness.detail == "requires hallucinationFree failed: not in the evidence: '15%' (percent)"
    assert scores["relevance"].value == pytest.approx(0.9)  # relevance requires nothing
    fine = {m.name: m for m in (await judge.score(CASE, REPLY)).metrics}
    assert fine["correctness"].value == pytest.approx(0.9) and fine["correctness"].source == "probability"


def test_names_in_the_reference_answer_and_the_known_list_are_grounded():
    judge = Judge(by_question(ANSWERS), load_rubric())
    refusal = GoldenCase(id="oos", question="Capital of France?", goldenAnswer="I only help with Acme orders.")
    answer = Reply(answer="Sorry, I only help with Acme orders, says Bob.", context="Shipping takes 3 days.")
    scores = {m.name: m for m in asyncio.run(judge.score(refusal, answer)).metrics}
    assert "not in the evidence: 'Bob' (name)" in scores["faithfulness"].detail  # Acme is in the reference
    assert scores["faithfulness"].passed is False
    known = parse_rubric(load_rubric().text.replace("name: tracegrade-default", "name: x\nknown: [Bob]"))
    scores = {m.name: m for m in asyncio.run(Judge(by_question(ANSWERS), known).score(refusal, answer)).metrics}
    # the name is held now; faithfulness's value also weighs word overlap, which a refusal lacks
    assert ("code", 1.0) in scores["faithfulness"].parts and "not in the evidence" not in scores["faithfulness"].detail


@pytest.mark.parametrize("change, message", [
    ("    yesNo: Is the answer polite?\n    questoin: x\n", "metric 'tone' (metrics[0]): field 'questoin': unknown field"),
    ("    yesNo: Is it polite?\n    scale: How polite?\n",
     "metric 'tone' (metrics[0]): give exactly one of yesNo, scale, checklist, code; got yesNo, scale"),
    ("    scale: How polite?\n    pass: 0.5\n", "metric 'tone' (metrics[0]): pass must be within 1..5 for a scale metric"),
    ("    yesNo: Polite?\n    requires: [tone]\n", "metric 'tone': requires 'tone', which is not another metric here"),
    ("    yesNo: Polite?\n    evidence: [question, sources]\n", "metric 'tone' (metrics[0]): field 'evidence.1'"),
    ("    code: grounding\n    claims: [money, names]\n", "metric 'tone' (metrics[0]): field 'claims.1'"),
])
def test_a_typo_in_a_rubric_file_names_the_file_the_metric_and_the_field(tmp_path, change, message):
    path = tmp_path / "my-rubric.md"
    path.write_text(f"---\nmetrics:\n  - name: tone\n    measures: politeness\n{change}---\nJudge.\n")
    with pytest.raises(ConfigError) as info:
        load_rubric(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)


@pytest.mark.parametrize("text, message", [
    ("Just instructions, no front matter.", "a rubric starts with a YAML front matter"),
    ("---\nmetrics: []\n---\nJudge.", "field 'metrics'"),
    ("---\nmetrics:\n  - {name: a, measures: x, yesNo: q}\n  - {name: a, measures: y, yesNo: r}\n---\nJudge.",
     "metric names must be unique; repeated: a"),
    ("---\nevidence: {question: Q, policy: P, answer: A}\nmetrics:\n  - {name: a, measures: x, yesNo: q}\n---\nJ.",
     "unknown section 'policy'"),
    ("---\nmetrics:\n  - {name: a, measures: x, yesNo: q}\n---\n", "the instructions after the front matter are empty"),
])
def test_a_broken_rubric_is_a_clear_error(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_rubric(text, "r.md")


async def test_completeness_is_the_share_of_the_reference_facts_the_answer_states():
    always_yes = ScriptedModel(lambda m, o: ChatResponse(text="Yes", top_logprobs=logprobs(Yes=0.9, No=0.1)),
                               token_probabilities=True)
    judge = Judge(always_yes, load_rubric())
    reference = "Yes. ORD-102 was delivered 20 days ago, inside the 30 day return window."
    case = CASE.model_copy(update={"golden_answer": reference})

    async def score(answer: str) -> dict:
        return {m.name: m for m in (await judge.score(case, Reply(answer=answer))).metrics}

    # ORD-102 is in the question: the user gave it, the answer need not repeat it.
    whole = await score("Yes: it arrived 20 days ago, within the 30-day window.")
    assert whole["completeness"].value == 1.0 and whole["helpfulness"].passed
    half = await score("It arrived 20 days ago.")  # 1 of the 2 facts: complete enough
    assert half["completeness"].value == 0.5 and half["completeness"].passed and "'30 day'" in half["completeness"].detail
    stripped = await score("Yes, you can still return it.")  # every fact left out: not helpful
    assert stripped["completeness"].value == 0.0 and "'30 day'" in stripped["completeness"].detail
    assert stripped["helpfulness"].value == 0.0 and "completeness failed" in stripped["helpfulness"].detail
    assert stripped["correctness"].passed  # the conclusion is right; only helpfulness needs the facts
    plain = CASE.model_copy(update={"golden_answer": "Yes, you can return it."})
    (completeness,) = [m for m in (await judge.score(plain, Reply(answer="Sure."))).metrics if m.name == "completeness"]
    assert completeness.value == 1.0 and "states no specific fact" in completeness.detail


def test_the_json_form_worked_out_once_asks_and_reads_exactly_as_the_per_call_functions():
    asked = tuple(m for m in RUBRIC.metrics if m.kind != "code")
    form = json_scores.form(asked)
    assert (list(form.fields), form.schema, form.max_tokens, form.instructions) == (
        json_scores.fields(asked), json_scores.schema(asked), json_scores.max_tokens(asked),
        json_scores.instructions(asked))
    replies = ['{"relevance": "yes", "correctness": "no", "completeness_1": "yes", "completeness_2": "no", '
               '"tone": 4, "reason": "half"}', '{"relevance": "maybe", "completeness_2": "yes", "tone": 9}']
    for reply in replies:
        try:
            expected = json_scores.parse_reply(asked, reply)
        except Exception as exc:
            with pytest.raises(type(exc), match=re.escape(str(exc))):
                form.parse_reply(reply)
        else:
            assert form.parse_reply(reply) == expected == ({"relevance": 1.0, "correctness": 0.0,
                                                            "completeness": 0.0, "tone": 4.0}, "half")
    assert json_scores.form(asked) is form  # the same metrics again: worked out once
