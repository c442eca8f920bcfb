"""The judge grades what the agent said: grounding n/a without evidence, the model and code
parts of faithfulness, reference-free correctness, and calibration that says where the
signal comes from (issue 22)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from fastapi import FastAPI, Request

from support import serving
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase
from tracegrade.core.verdict import case_status
from tracegrade.judge.calibrate import calibrate
from tracegrade.judge.grounding import claims
from tracegrade.judge.labels import LabelledItem
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.models import ChatResponse, load_model
from tracegrade.models.scripted import ScriptedModel

GROUNDING = ("faithfulness", "hallucinationFree")


def always(p_yes: float, seen: list | None = None) -> ScriptedModel:
    """A judge model that gives every question the same P(yes)."""
    def reply(messages, options):
        if seen is not None:
            seen.append(messages[-1].content)
        return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(p_yes)), ("No", math.log(1 - p_yes))),))
    return ScriptedModel(reply, model_id=f"always-{p_yes}", token_probabilities=True)


NO_EVIDENCE = [  # (question, reference answer, a right answer): the agent saw nothing
    ("What is 2+3?", "5", "The answer is 5."),
    ("When did the Berlin Wall fall?", "9 November 1989", "It fell on 9 November 1989."),
    ("Who wrote Hamlet?", "William Shakespeare", "Hamlet was written by William Shakespeare."),
    ("How do I speed up a slow loop?", "", "1) Optimize the inner loop\n2) Cache repeated results\n3) Profile first"),
    ("What is 2+3?", "", "5"),
]


def _judged(model, question: str, reference: str, answer: str, context: str = "", ask_decided: bool = False,
            rubric=None):
    case = GoldenCase(id="c", question=question, goldenAnswer=reference)
    judge = Judge(model, rubric or load_rubric(), ask_decided=ask_decided)
    outcome = asyncio.run(judge.score(case, Reply(answer=answer, context=context)))
    return outcome, {m.name: m for m in outcome.metrics}


@pytest.mark.parametrize("question, reference, answer", NO_EVIDENCE)
def test_without_evidence_grounding_is_na_and_a_yes_judge_passes_a_right_answer(question, reference, answer):
    outcome, metrics = _judged(always(0.95), question, reference, answer)
    for name in GROUNDING:
        assert metrics[name].value is None and metrics[name].passed is None
        assert metrics[name].detail.startswith("n/a: the assistant saw no evidence")
    assert case_status([], outcome) == "pass"


@pytest.mark.parametrize("question, reference, answer", NO_EVIDENCE)
def test_without_evidence_a_no_judge_fails_the_same_answers(question, reference, answer):
    outcome, metrics = _judged(always(0.05), question, reference, answer)
    assert case_status([], outcome) == "fail"
    assert metrics["relevance"].passed is False and metrics["correctness"].passed is False


@pytest.mark.parametrize("ask_decided", [False, True])
def test_an_answer_contradicting_the_evidence_fails_faithfulness_even_when_the_model_says_yes(ask_decided):
    seen: list[str] = []
    outcome, metrics = _judged(always(0.99, seen), "How long do I have to return it?", "",
                               "You have 60 days to return it.", context="Returns are accepted within 30 days.",
                               ask_decided=ask_decided)
    faithfulness = metrics["faithfulness"]
    # No claim found: the shipped weights keep it under its threshold however sure the model is.
    assert faithfulness.value < faithfulness.threshold and faithfulness.passed is False
    assert dict(faithfulness.parts)["code"] == 0.0
    assert "'60 days' (quantity)" in faithfulness.detail and "failed: code" in faithfulness.detail
    assert metrics["hallucinationFree"].passed is False and case_status([], outcome) == "fail"
    asked_faithfulness = any("supported by what the assistant saw" in prompt for prompt in seen)
    # A run does not ask what code decided; calibration asks, to measure the model part alone.
    assert asked_faithfulness is ask_decided
    assert ("model" in dict(faithfulness.parts)) is ask_decided


def test_a_run_asks_no_question_whose_metric_a_failed_requirement_decides():
    seen: list[str] = []
    context = "Returns are accepted within 30 days."
    _, metrics = _judged(always(0.99, seen), "How long?", "Within 30 days.", "Within 45 days.", context=context)
    assert metrics["hallucinationFree"].passed is False
    for name in ("correctness", "helpfulness"):  # both require hallucinationFree
        assert metrics[name].value == 0.0 and metrics[name].detail.startswith("requires hallucinationFree failed")
        assert metrics[name].parts == (("requires", 0.0),)
    assert len(seen) == 1 and "respond to what the question asks" in seen[0]  # relevance alone was asked
    _, asked = _judged(always(0.99), "How long?", "Within 30 days.", "Within 45 days.", context=context,
                       ask_decided=True)
    assert {n: m.passed for n, m in asked.items()} == {n: m.passed for n, m in metrics.items()}  # same verdicts
    assert dict(asked["correctness"].parts)["model"] == pytest.approx(0.99)


def test_the_code_part_counts_a_claim_written_twice_once():
    _, metrics = _judged(always(0.99), "What does it cost?", "", "It costs $5 (5 USD) and ships in 2 days.",
                         context="It ships in 2 days.")
    assert dict(metrics["faithfulness"].parts)["code"] == pytest.approx(0.5)
    assert "'$5' (money), '5 USD' (money)" in metrics["faithfulness"].detail


def test_a_faithful_answer_in_the_evidences_words_passes_without_the_model_and_a_no_only_lowers_it():
    seen: list[str] = []
    _, metrics = _judged(always(0.05, seen), "How long do I have to return it?", "",
                         "Returns are accepted within 30 days.", context="Returns are accepted within 30 days.")
    faithfulness = metrics["faithfulness"]
    # the cheap parts settle it (the shipped cascade): every word and claim is in the evidence
    assert faithfulness.passed and "the model not asked" in faithfulness.detail
    assert not any("supported by what the assistant saw" in prompt for prompt in seen)
    assert dict(faithfulness.parts) == pytest.approx({"code": 1.0, "overlap": 1.0})
    # asked (the cascade off), the model's no lowers the value; on real replies it is the weakest part
    no = Judge(always(0.05), load_rubric(), cascade=False)
    yes = Judge(always(0.95), load_rubric(), cascade=False)
    case = GoldenCase(id="c", question="How long do I have to return it?")
    reply = Reply(answer="Returns are accepted within 30 days.", context="Returns are accepted within 30 days.")
    said_no, said_yes = (asyncio.run(j.score(case, reply)).metrics for j in (no, yes))
    low = next(m for m in said_no if m.name == "faithfulness")
    high = next(m for m in said_yes if m.name == "faithfulness")
    assert low.value < high.value and dict(low.parts) == pytest.approx({"model": 0.05, "code": 1.0, "overlap": 1.0})


def with_overlap():
    """The shipped rubric with faithfulness's optional word-overlap part switched on, in place
    of its fitted weights (the hand-set combination: P(yes) x (2 + overlap) / 3, the veto)."""
    import re

    from tracegrade.judge.rubric import parse_rubric

    text = re.sub(r"\n    weights: \{[^}\n]*\}", "", load_rubric().text, count=1)
    text = re.sub(r"\n    cascade: \{[^}\n]*\}", "", text, count=1)
    text = re.sub(r"\n    veto: \[[^]\n]*\]", "", text, count=1)
    marker = "supported by what the assistant saw?\n    code: grounding\n"
    assert text.count(marker) == 1  # faithfulness's entry
    rubric = parse_rubric(text.replace(marker, marker + "    overlap: true\n"))
    assert rubric.metric("faithfulness").weights is None
    return rubric


def test_overlap_can_lower_a_yes_but_never_turn_a_no_into_a_pass():
    evidence = "The museum is closed on Mondays."
    _, paraphrase = _judged(always(0.9), "Open on Monday?", "", "No, that is its day off.", context=evidence,
                            rubric=with_overlap())
    _, copied = _judged(always(0.2), "Open on Monday?", "", "The museum is closed on Mondays.", context=evidence,
                        rubric=with_overlap())
    assert paraphrase["faithfulness"].passed and dict(paraphrase["faithfulness"].parts)["overlap"] < 0.5
    assert not copied["faithfulness"].passed and dict(copied["faithfulness"].parts)["overlap"] == 1.0


def test_the_model_reads_the_part_of_long_evidence_most_like_the_answer(monkeypatch):
    from tracegrade.judge import relevant

    monkeypatch.setattr(relevant, "default_rank", lambda: relevant.lexical_rank)  # no embeddings model here
    filler = [f"Weather note {n}: cloudy skies over harbour town {n} this morning." for n in range(41, 71)]
    context = "\n".join([*filler[:15], "Returns are accepted within 30 days.", *filler[15:]])
    seen: list[str] = []
    _, metrics = _judged(always(0.9, seen), "How long do I have?", "", "You can return it within 30 days.",
                         context=context)
    asked = next(p for p in seen if "Returns are accepted within 30 days." in p)
    assert filler[0] in asked and filler[-1] not in asked  # kept in order up to the word budget, the rest cut
    assert metrics["faithfulness"].passed and dict(metrics["faithfulness"].parts)["code"] == 1.0


@pytest.mark.embeddings
def test_by_default_the_embeddings_model_ranks_a_passage_that_shares_no_word_with_the_answer_first():
    """The shipped ranking (all-MiniLM-L6-v2, real weights): meaning, not shared words.
    Word overlap alone would rank the first passage (it shares "parcel") above the answer's topic."""
    from tracegrade.judge.relevant import default_rank, lexical_rank

    answer = "You can send the parcel back for a full refund within two weeks."
    units = ["Parcel lockers are in the station hall.", "Returns are accepted for 14 days after delivery.",
             "Our office is closed on public holidays."]
    scores = default_rank()(answer, units)
    assert default_rank() is not lexical_rank and max(range(3), key=scores.__getitem__) == 1, scores
    assert max(range(3), key=lexical_rank(answer, units).__getitem__) == 0


def test_the_evidence_shown_grows_with_the_answer():
    from tracegrade.judge.relevant import lexical_rank, relevant_parts

    def relevant_part(answer: str, evidence: str) -> str:
        return relevant_parts(answer, {"context": evidence}, rank=lexical_rank)["context"]

    context = "\n".join(f"Note {n}: the harbour ferry leaves at {n} past the hour." for n in range(10, 40))
    short = relevant_part("The ferry leaves at 12 past.", context)
    long = relevant_part(" ".join(["The ferry leaves at 12 past the hour, every day."] * 8), context)
    assert "Note 12:" in short and len(short.split()) <= 40 < len(long.split()) <= 120


def test_context_and_tool_results_share_one_budget_and_each_keeps_its_best_passage():
    from tracegrade.judge.relevant import lexical_rank, relevant_parts

    policy = "\n".join(f"Policy rule {n}: parcels to region {n} are insured for free." for n in range(30))
    tools = 'getOrder(id="A1"): Order A1 shipped yesterday by courier.'
    shown = relevant_parts("Order A1 shipped yesterday.", {"context": policy, "tools": tools}, rank=lexical_rank)
    assert shown["tools"] == tools  # the passage like the answer, whichever section holds it
    kept = shown["context"].splitlines()
    assert 1 <= len(kept) <= 3 and all(line in policy for line in kept)  # never empty, never the whole policy
    assert len(" ".join(shown.values()).split()) <= 40


def test_the_evidence_shown_stops_at_the_first_passage_that_does_not_fit():
    """Passages below one left out are not shown either, however small: a source line or a
    title that fits in what the budget has left told the model less than the passage it lost."""
    from tracegrade.judge.relevant import lexical_rank, relevant_parts

    best = "The harbour ferry leaves at noon from pier two."
    second = "The harbour ferry to the island leaves from pier two at noon and at six, " \
             "except on public holidays, when the first boat leaves at two in the afternoon instead."
    context = "\n".join(["SOURCE: timetable.md", best, second, "# Ferry"])
    assert lexical_rank("The ferry leaves at noon from pier two.", [best, second])[1] > 0  # second ranks above the rest
    shown = relevant_parts("The ferry leaves at noon from pier two.", {"context": context}, max_words=20,
                           rank=lexical_rank)
    assert shown == {"context": best}


def test_list_markers_and_ordinals_are_not_claims():
    assert claims("1) Optimize the loop\n2) Cache results\n(3) Profile") == []
    assert claims("Steps: 1) Optimize, 2) Cache. Do the 2nd step first.") == []
    assert [c.key for c in claims("It costs 5. Open (6:30-9:00) daily, or from 3 pm.")] == ["5", "06:30", "09:00", "15:00"]


def test_without_a_reference_correctness_is_asked_reference_free_and_sees_the_evidence():
    seen: list[str] = []
    _, metrics = _judged(always(0.8, seen), "How long?", "", "30 days.", context="Returns: within 30 days.")
    for name in ("correctness", "helpfulness"):
        assert metrics[name].value == pytest.approx(0.8) and metrics[name].detail.startswith("reference-free")
    asked = next(p for p in seen if "a correct answer to the question" in p)
    assert "Returns: within 30 days." in asked and "REFERENCE ANSWER" not in asked
    _, guided = _judged(always(0.8), "How long?", "30 days.", "30 days.", context="Returns: within 30 days.")
    assert "reference-free" not in guided["correctness"].detail


def _labelled(item_id: str, question: str, context: str, answer: str, good: bool) -> LabelledItem:
    """One answer labelled for faithfulness, good or bad."""
    return LabelledItem.model_validate({
        "id": item_id, "caseId": item_id.split("-")[0], "question": question,
        "evidence": {"context": context}, "answer": answer,
        "labels": [{"annotator": "a", "rationale": "-", "scores": {"faithfulness": "good" if good else "bad"}}]})


def _item(index: int, good: bool) -> LabelledItem:
    answer = f"It takes {index} days." if good else f"It takes {index + 50} days."
    return _labelled(f"q{index}-{good}", "How long does it take?", f"Delivery takes {index} days.", answer, good)


def test_an_always_yes_model_does_not_make_faithfulness_gate_on_code_alone():
    items = [_item(i, good) for i in range(1, 13) for good in (True, False)]
    cal = asyncio.run(calibrate(items, Judge(always(0.97), load_rubric()), "v", breaks=False))
    faithfulness = cal.metric("faithfulness")
    assert faithfulness.auc == 1.0  # code separates every pair ...
    assert faithfulness.part_auc["model"] == 0.5 and faithfulness.part_auc["code"] == 1.0  # ... the model none
    assert not faithfulness.may_gate
    assert any("model part alone reaches AUC 0.500 < 0.60" in why for why in faithfulness.why_not)
    assert any("separation comes from code" in note for note in faithfulness.notes)


# --- the same rubric with a judge endpoint: token probabilities, or JSON answers --------------------


def _logprob_endpoint(p_yes: float) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict[str, Any]:
        body = await request.json()
        assert body["max_tokens"] == 1 and body["logprobs"] is True
        top = [{"token": "Yes", "logprob": math.log(p_yes)}, {"token": "No", "logprob": math.log(1 - p_yes)}]
        return {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "Yes"},
                             "logprobs": {"content": [{"token": "Yes", "logprob": top[0]["logprob"],
                                                       "top_logprobs": top}]}}],
                "usage": {"prompt_tokens": 80, "completion_tokens": 1, "total_tokens": 81}}

    return app


def test_a_user_dataset_without_retrieval_passes_its_right_answers_through_a_logprob_endpoint(monkeypatch):
    stack = serving(_logprob_endpoint(0.9))
    url = stack.__enter__()
    try:
        monkeypatch.setenv("TRACEGRADE_JUDGE_BASE_URL", f"{url}/v1")
        monkeypatch.setenv("TRACEGRADE_JUDGE_LOGPROBS", "1")
        monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "0")
        model = load_model("openai:strong-judge", role="judge")
        for question, reference, answer in NO_EVIDENCE:
            outcome, metrics = _judged(model, question, reference, answer)
            assert case_status([], outcome) == "pass", outcome
            assert metrics["correctness"].source == "probability"
        _, metrics = _judged(model, "How long?", "", "It takes a month.", context="It takes 30 days.")
        assert metrics["faithfulness"].passed is True and metrics["faithfulness"].source == "probability"
        _, metrics = _judged(model, "How long?", "", "It takes 60 days.", context="It takes 30 days.")
        assert metrics["faithfulness"].passed is False and metrics["faithfulness"].source == "code"
    finally:
        stack.__exit__(None, None, None)


def test_the_same_rubric_with_a_json_judge_scores_faithfulness_and_reference_free_correctness():
    from support import full_marks

    model = ScriptedModel(full_marks, model_id="json-judge")
    outcome, metrics = _judged(model, "How long?", "", "It takes 30 days.", context="It takes 30 days.",
                               ask_decided=True)
    assert metrics["faithfulness"].passed and dict(metrics["faithfulness"].parts)["model"] == 1.0
    assert metrics["correctness"].detail.startswith("reference-free") and case_status([], outcome) == "pass"
    _, metrics = _judged(model, "How long?", "", "It takes 60 days.", context="It takes 30 days.")
    assert metrics["faithfulness"].passed is False and "failed: code" in metrics["faithfulness"].detail


def test_the_console_says_n_a_for_a_grounding_metric_without_evidence():
    from tracegrade.report.console import metric_lines

    outcome, _ = _judged(always(0.95), "What is 2+3?", "5", "The answer is 5.")
    line = next(line for line in metric_lines(outcome.metrics) if "faithfulness" in line)
    assert " n/a " in line and "not a pass, not a fail" in line


def _negated(index: int, good: bool) -> LabelledItem:
    answer = f"Museum {index} is closed on Mondays." if good else f"Museum {index} is not closed on Mondays."
    return _labelled(f"m{index}-{good}", "Is it open on Monday?", f"Museum {index} is closed on Mondays.", answer, good)


def test_calibration_says_when_answers_matched_on_word_overlap_are_not_told_apart():
    items = [_negated(i, good) for i in range(1, 13) for good in (True, False)]
    cal = asyncio.run(calibrate(items, Judge(always(0.97), load_rubric()), "v", breaks=False))
    faithfulness = cal.metric("faithfulness")
    assert faithfulness.matched_pairs == 12 and faithfulness.matched_auc == 0.5  # "not" is a stop word
    assert any("on 12 good/bad pairs matched on word overlap" in note and "by meaning" in note
               for note in faithfulness.notes), faithfulness.notes


def test_long_evidence_no_question_shows_is_not_ranked(monkeypatch):
    from tracegrade.judge import relevant
    from tracegrade.judge.rubric import parse_rubric

    ranked: list[str] = []
    monkeypatch.setattr(relevant, "default_rank", lambda: lambda answer, units: ranked.append(answer) or [0.0] * len(units))
    rubric = parse_rubric("---\nmetrics:\n  - name: relevance\n    measures: on topic\n"
                          "    yesNo: Does the answer respond to the question?\n    evidence: [question, answer]\n---\n"
                          "Judge the answer.\n")
    case = GoldenCase(id="c", question="How long?")
    reply = Reply(answer="30 days.", context="Filler words here. " * 100)
    outcome = asyncio.run(Judge(always(0.9), rubric).score(case, reply))
    assert outcome.metrics[0].passed and ranked == []
