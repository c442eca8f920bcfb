"""Faithfulness asked only where it decides: the cascade, the answer cache, attribution labels, a rubric cut."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from places import TESTS
from tracegrade.core.errors import ConfigError, DatasetError
from tracegrade.core.results import Scores
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase
from tracegrade.judge import cascade
from tracegrade.judge.answer_cache import CachedModel
from tracegrade.judge.combine import combined, fit
from tracegrade.judge.labels import load_labels
from tracegrade.judge.rubric import DEFAULT_RUBRIC, load_rubric, parse_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.models import ChatOptions, ChatResponse, Message
from tracegrade.models.scripted import ScriptedModel

SAMPLE = TESTS / "fixtures" / "faithdial" / "sample.jsonl"
WEIGHTS = "{bias: -4.0, model: 2.0, code: 1.0, overlap: 4.0}"
CASCADE = "{model: 0.3, low: 0.2, high: 0.8}"
EVIDENCE = "The museum opens at nine and closes at five. Entry is free on Sundays."


def rubric(cascade_line: str = f"cascade: {CASCADE}") -> str:
    return f"""---
metrics:
  - name: faithfulness
    measures: grounded
    yesNo: Is everything the answer states supported by what the assistant saw?
    code: grounding
    weights: {WEIGHTS}
    {cascade_line}
    needsEvidence: true
    evidence: [question, answer, context]
---
Judge the answer."""


def yes(p: float) -> ChatResponse:
    return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(p)), ("No", math.log(1 - p))),),
                        input_tokens=50, cached_tokens=10)


def counting(p: float) -> tuple[ScriptedModel, list[int]]:
    calls: list[int] = []

    def reply(messages: object, options: object) -> ChatResponse:
        calls.append(1)
        return yes(p)
    return ScriptedModel(reply, token_probabilities=True), calls


def faithfulness(judge: Judge, answer: str) -> object:
    case = GoldenCase(id="c", question="When does the museum open?")
    outcome = asyncio.run(judge.score(case, Reply(answer=answer, context=EVIDENCE)))
    assert isinstance(outcome, Scores)
    return outcome.metrics[0]


# --- the cascade ---------------------------------------------------------------------------


def test_an_answer_in_the_evidences_words_is_settled_without_the_model() -> None:
    model, calls = counting(0.9)
    score = faithfulness(Judge(model, parse_rubric(rubric())), "The museum opens at nine.")
    expected = combined({"bias": -4.0, "model": 2.0, "code": 1.0, "overlap": 4.0},
                        {"model": 0.3, "code": 1.0, "overlap": 1.0})
    assert calls == []
    assert score.source == "code" and score.value == pytest.approx(expected)
    assert "settled without the model" in score.detail and dict(score.parts) == {"code": 1.0, "overlap": 1.0}


def test_an_open_answer_asks_the_model_and_combines_every_part() -> None:
    model, calls = counting(0.9)
    answer = "The museum opens at nine, and the guides are friendly."  # half its words are not in the evidence
    score = faithfulness(Judge(model, parse_rubric(rubric())), answer)
    parts = dict(score.parts)
    assert calls == [1] and score.source == "probability"
    assert score.value == pytest.approx(combined({"bias": -4.0, "model": 2.0, "code": 1.0, "overlap": 4.0}, parts))


@pytest.mark.parametrize("how", ["judge", "env", "rubric"])
def test_the_cascade_turns_off(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "env":
        monkeypatch.setenv("TRACEGRADE_JUDGE_CASCADE", "off")
    model, calls = counting(0.9)
    text = rubric("") if how == "rubric" else rubric()
    judge = Judge(model, parse_rubric(text), **({"cascade": False} if how == "judge" else {}))
    score = faithfulness(judge, "The museum opens at nine.")
    assert calls == [1] and score.source == "probability"


def test_calibration_asks_the_model_but_scores_what_a_run_scores() -> None:
    run_model, _ = counting(0.9)
    calibrate_model, calls = counting(0.9)
    run = faithfulness(Judge(run_model, parse_rubric(rubric())), "The museum opens at nine.")
    measured = faithfulness(Judge(calibrate_model, parse_rubric(rubric()), ask_decided=True), "The museum opens at nine.")
    assert calls == [1]
    assert measured.value == pytest.approx(run.value)
    assert dict(measured.parts)["model"] == pytest.approx(0.9)  # the model part measured on every answer


@pytest.mark.parametrize("line, problem", [
    ("cascade: {model: 0.3, low: 0.9, high: 0.2}", "low <= high"),
    ("cascade: {model: 0.3, low: 0.2}", "give exactly model, low, high"),
])
def test_a_bad_cascade_is_an_error_naming_the_field(line: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_rubric(rubric(line))


def test_a_cascade_needs_weights() -> None:
    text = rubric().replace(f"weights: {WEIGHTS}\n    ", "")
    with pytest.raises(ConfigError, match="cascade needs weights"):
        parse_rubric(text)


def test_the_fitted_band_keeps_the_auc_and_asks_less() -> None:
    # Overlap decides the clear answers; the model alone tells the middle ones apart.
    rows = [({"model": 0.9 if good else 0.1, "code": 1.0, "overlap": o}, good)
            for o, good in [(1.0, True), (0.95, True), (0.0, False), (0.05, False), (0.5, True), (0.5, False)] * 5]
    weights = fit(rows, ["model", "code", "overlap"])
    rule = cascade.fit([rows], weights, tolerance=0.0)
    assert 0 < cascade.asked_share(weights, rule, rows) < 1
    values = [cascade.value(weights, rule, p) for p, _ in rows]
    goods = [v for v, (_, g) in zip(values, rows) if g]
    bads = [v for v, (_, g) in zip(values, rows) if not g]
    assert min(goods) > max(bads)


def test_the_shipped_rubric_carries_a_cascade() -> None:
    spec = load_rubric().metric("faithfulness")
    assert spec.cascade is not None and spec.weights is not None


# --- the answer cache ----------------------------------------------------------------------


def test_a_question_asked_once_is_answered_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    asked = [Message("user", "Is it so?")]
    options = ChatOptions(max_tokens=1, logprobs=20)
    first = CachedModel(ScriptedModel([yes(0.8)], token_probabilities=True), path)
    asyncio.run(first.complete(asked, options))
    again = CachedModel(ScriptedModel([], token_probabilities=True), path)
    response = asyncio.run(again.complete(asked, options))
    assert (again.hits, again.misses, again.evaluated) == (1, 0, 40)
    assert response.top_logprobs == yes(0.8).top_logprobs
    other = CachedModel(ScriptedModel([yes(0.2)], token_probabilities=True), path)
    asyncio.run(other.complete([Message("user", "Is it not so?")], options))  # another question: asked
    assert other.misses == 1


def test_a_torn_last_line_is_skipped_and_a_bad_one_before_it_is_named(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    CachedModel(ScriptedModel([yes(0.8)], token_probabilities=True), path)
    asyncio.run(CachedModel(ScriptedModel([yes(0.8)], token_probabilities=True), path).complete([Message("user", "q")]))
    path.write_text(path.read_text() + '{"key": "abc", "te')
    assert len(CachedModel(ScriptedModel([]), path)._answers) == 1
    path.write_text('{"nokey": 1}\n' + path.read_text())
    with pytest.raises(ConfigError, match="line 1"):
        CachedModel(ScriptedModel([]), path)


# --- attribution labels and a rubric cut ---------------------------------------------------


def test_attribution_labels_read_as_faithfulness_labels() -> None:
    items, version = load_labels(SAMPLE)
    records = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    assert len(items) == len(records) and version
    first, record = items[0], records[0]
    assert first.case_id == f"{record['system']}/{record['benchmark']}"
    assert first.evidence.context == record["knowledge"] and first.answer == record["response"]
    assert [i.verdict("faithfulness") for i in items] == \
        ["good" if r["label"] == "attributable" else "bad" for r in records]


def test_a_bad_attribution_label_names_the_line(tmp_path: Path) -> None:
    lines = SAMPLE.read_text().splitlines()
    record = json.loads(lines[2])
    record["label"] = "maybe"
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join([*lines[:2], json.dumps(record)]) + "\n")
    with pytest.raises(DatasetError, match=r"line 3 .*'label'"):
        load_labels(path)


def test_a_rubric_cut_keeps_what_a_metric_requires_and_says_so_in_its_hash() -> None:
    whole = load_rubric(DEFAULT_RUBRIC)
    cut = whole.keep(["correctness"])
    assert [m.name for m in cut.metrics] == ["correctness", "hallucinationFree"]
    assert cut.hash != whole.hash and cut.hash.startswith(whole.hash)
    with pytest.raises(ConfigError, match="no metric 'tone'"):
        whole.keep(["tone"])


def test_row_weights_weigh_a_domain() -> None:
    a = [({"x": 0.9}, True), ({"x": 0.1}, False)] * 3
    b = [({"x": 0.1}, True), ({"x": 0.9}, False)] * 3
    leaning_a = fit([*a, *b], ["x"], row_weights=[1.0] * 6 + [0.1] * 6)
    even = fit([*a, *b], ["x"])
    assert leaning_a["x"] > even["x"]


def test_overlap_counts_the_grounds_not_the_users_words() -> None:
    spec = parse_rubric(rubric()).metric("faithfulness")
    from tracegrade.judge.scoring import evidence_overlap
    texts = {"question": "Are the guides friendly?", "history": "", "context": EVIDENCE, "tools": "",
             "reference": "", "expected": "", "answer": "The guides are friendly."}
    assert evidence_overlap(parse_rubric(rubric()), spec, texts) == 0.0


# --- the command: attribution labels, one metric, the answers kept ------------------------


def test_calibrate_on_attribution_labels_asks_one_question_an_answer_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from tracegrade.cli import calibrate as command
    from tracegrade.cli import build_parser

    asked: list[str] = []

    def reply(messages: list[Message], options: ChatOptions) -> ChatResponse:
        asked.append(messages[-1].content)
        return yes(0.7)

    models = iter([ScriptedModel(reply, "local-judge", token_probabilities=True),
                   ScriptedModel([], "local-judge", token_probabilities=True)])  # the second answers nothing
    monkeypatch.setattr(command, "load_model", lambda spec, role: next(models))
    flags = ["calibrate", "--labels", str(SAMPLE), "--metrics", "faithfulness", "--no-breaks",
             "--model-cache", str(tmp_path / "answers.jsonl"), "--db", f"sqlite:///{tmp_path / 'runs.db'}"]
    outputs = []
    for _ in range(2):
        args = build_parser().parse_args(flags)
        args.handler(args)
        outputs.append(capsys.readouterr())
    assert 0 < len(asked) <= 16 and all("supported by what the assistant saw" in q for q in asked)
    assert f"0 judge answers taken from {tmp_path / 'answers.jsonl'}, {len(asked)} asked" in outputs[0].err
    assert f"{len(asked)} judge answers taken from" in outputs[1].err and ", 0 asked" in outputs[1].err
    assert outputs[0].out == outputs[1].out and "faithfulness" in outputs[0].out
    assert "relevance" not in outputs[0].out  # the rubric cut to the labelled metric
    assert "not stored" in outputs[0].err


def test_a_missing_number_vetoes_without_the_model_and_a_missing_name_does_not() -> None:
    text = rubric().replace(f"cascade: {CASCADE}", f"cascade: {CASCADE}\n    veto: [money, number, quantity, time]")
    model, calls = counting(0.99)
    wrong = faithfulness(Judge(model, parse_rubric(text)), "The museum opens at nine. Entry costs 12 euros on Sundays.")
    assert calls == [] and wrong.passed is False and "vetoed" in wrong.detail and "12" in wrong.detail
    named = faithfulness(Judge(model, parse_rubric(text)), "The museum opens at nine, says Anna.")
    assert "vetoed" not in named.detail
    with pytest.raises(ConfigError, match="veto needs weights"):
        parse_rubric(text.replace(f"weights: {WEIGHTS}\n    ", "").replace(f"cascade: {CASCADE}\n    ", ""))
