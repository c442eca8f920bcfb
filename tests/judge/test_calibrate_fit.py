"""Parts combined by fit (judge/combine.py): the fit, its cross-validation, the weights written into
a rubric by `tracegrade calibrate --write-weights`, and the judge scoring by them."""

from __future__ import annotations

import asyncio
import json
import math
import random

import pytest

from tracegrade.cli import build_parser
from tracegrade.cli.calibrate import run_calibration
from tracegrade.core.errors import ConfigError
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase
from tracegrade.judge.combine import combined, cross_validate, fit, logistic, part_alone
from tracegrade.judge.rubric import parse_rubric, with_weights
from tracegrade.judge.scoring import Judge
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel

RUBRIC = """---
metrics:
  - name: faithfulness
    measures: supported by what the assistant saw
    yesNo: Is everything the answer states supported by what the assistant saw?
    code: grounding
    evidence: [question, answer, context]
---
You check one answer of an assistant.
"""


def synthetic(seed: int = 0) -> list[tuple[str, dict[str, float], bool]]:
    """200 questions x 5 answers: a noisy model part, a code part that fails some bad answers,
    and an overlap part that is pure noise."""
    rng = random.Random(seed)
    rows = []
    for q in range(200):
        for a in range(5):
            good = a < 2
            model = min(1.0, max(0.0, rng.gauss(0.65 if good else 0.45, 0.2)))
            code = 1.0 if good or rng.random() < 0.6 else rng.choice([0.0, 0.5])
            rows.append((f"q{q}", {"model": model, "code": code, "overlap": rng.random()}, good))
    return rows


def test_a_noise_part_gets_weight_about_zero_and_the_fit_is_no_worse_than_its_best_part():
    rows = synthetic()
    weights = fit([(p, g) for _, p, g in rows], ["model", "code", "overlap"])
    assert weights["model"] > 1 and weights["code"] > 1  # both carry signal
    # the noise adds nothing: 0 or what chance correlation gives (seeds 0-7: at most 0.1 x the model's)
    assert weights["overlap"] <= 0.15 * weights["model"]
    best_part = max(cross_validate(rows, part_alone(n)).auc for n in ("model", "code", "overlap"))
    assert cross_validate(rows, logistic(["model", "code", "overlap"])).auc >= best_part


def test_a_part_that_points_the_wrong_way_gets_weight_zero_not_a_negative_one():
    rows = [(p, g) for _, p, g in synthetic(1)]
    flipped = [({**p, "overlap": 1 - p["model"]}, g) for p, g in rows]
    assert fit(flipped, ["model", "overlap"])["overlap"] == 0.0


def yes(p: float) -> ChatResponse:
    return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(p)), ("No", math.log(1 - p))),))


def faithfulness(rubric_text: str, answer: str, p: float = 0.8) -> tuple[float, dict[str, float], int]:
    model = ScriptedModel(lambda messages, options: yes(p), token_probabilities=True)
    case = GoldenCase(id="c", question="When does the museum open?")
    outcome = asyncio.run(Judge(model, parse_rubric(rubric_text)).score(case, Reply(
        answer=answer, context="The city museum opens at 9 am on weekdays.")))
    metric = outcome.metrics[0]
    return float(metric.value or 0.0), dict(metric.parts), len(model.calls)


def test_written_weights_are_what_the_judge_scores_by():
    weights = {"bias": -2.0, "model": 3.0, "code": 1.5, "overlap": 0.5}
    weighted = with_weights(RUBRIC, "faithfulness", weights)
    value, parts, _ = faithfulness(weighted, "The museum opens at 9 am.")
    assert parts.keys() == {"model", "code", "overlap"}
    assert value == pytest.approx(combined(weights, parts)) and value != pytest.approx(0.8)
    assert faithfulness(RUBRIC, "The museum opens at 9 am.")[0] == pytest.approx(0.8)  # no weights: as before
    rewritten = with_weights(weighted, "faithfulness", {**weights, "overlap": 0.0})
    assert rewritten.count("weights:") == 1 and parse_rubric(rewritten).metrics[0].weights["overlap"] == 0.0


def test_with_weights_a_missing_claim_skips_the_model_only_when_no_answer_could_pass():
    answer = "The museum opens at 10 am."  # a number the evidence does not hold: code part < 1
    low = with_weights(RUBRIC, "faithfulness", {"bias": -4.0, "model": 2.0, "code": 3.0})
    value, _, calls = faithfulness(low, answer)
    assert calls == 0 and value == pytest.approx(combined({"bias": -4.0, "model": 2.0, "code": 0.0}, {"model": 1.0}))
    high = with_weights(RUBRIC, "faithfulness", {"bias": -1.0, "model": 4.0, "code": 0.5})
    value, parts, calls = faithfulness(high, answer, p=0.9)
    assert calls == 1 and value == pytest.approx(combined({"bias": -1.0, "model": 4.0, "code": 0.5}, parts))


@pytest.mark.parametrize("weights, problem", [
    ({"bias": 0.0, "model": -1.0}, "must be >= 0"),
    ({"bias": 0.0, "modle": 1.0}, "unknown part 'modle'"),
    ({"model": 1.0}, "need a bias"),
])
def test_a_rubric_with_bad_weights_is_an_error(weights, problem):
    text = RUBRIC.replace("    code: grounding\n", f"    code: grounding\n    weights: {json.dumps(weights)}\n")
    with pytest.raises(ConfigError, match=problem):
        parse_rubric(text)


def labels_file(path) -> None:
    """20 questions over a museum's hours: a right answer, one with a wrong hour, one that invents a rule."""
    items = []
    for q in range(20):
        hour = 7 + q % 5
        context = f"Museum {q} opens at {hour} am on weekdays."
        for kind, answer, verdict in [("good", f"Museum {q} opens at {hour} am.", "good"),
                                      ("wrong", f"Museum {q} opens at {hour + 1} am.", "bad"),
                                      ("rule", f"Museum {q} is closed to children.", "bad")]:
            items.append({"id": f"m{q}-{kind}", "caseId": f"m{q}", "question": f"When does museum {q} open?",
                          "goldenAnswer": "", "evidence": {"context": context}, "answer": answer,
                          "labels": [{"annotator": "construction", "scores": {"faithfulness": verdict},
                                      "rationale": kind}]})
    path.write_text(json.dumps({"items": items}))


def test_calibrate_reports_the_combination_and_writes_its_weights_into_the_rubric(tmp_path, capsys):
    labels, rubric = tmp_path / "labels.json", tmp_path / "rubric.md"
    labels_file(labels)
    rubric.write_text(RUBRIC)
    rng = random.Random(0)

    def reply(messages, options):  # a judge that mostly says yes, more to the right answers
        right = "is closed" not in messages[-1].content.split("ANSWER TO JUDGE:", 1)[1]
        return yes(min(0.99, max(0.01, rng.gauss(0.75 if right else 0.6, 0.1))))

    judge = Judge(ScriptedModel(reply, "scripted-judge", token_probabilities=True), parse_rubric(RUBRIC))
    args = build_parser().parse_args(["calibrate", "--labels", str(labels), "--rubric", str(rubric), "--no-breaks",
                                      "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--write-weights", str(rubric)])
    run_calibration(args, judge)
    out = capsys.readouterr()
    assert "PARTS COMBINED BY FIT" in out.out and "parts combined by fit" in out.out
    assert "weights" in out.err and str(rubric) in out.err
    weights = parse_rubric(rubric.read_text()).metrics[0].weights
    assert weights is not None and weights["model"] > 0 and weights["code"] > 0
    # scored with the written rubric, a wrong hour no longer needs to be vetoed by hand: the fit fails it
    right, _, _ = faithfulness(rubric.read_text(), "The museum opens at 9 am.", p=0.75)
    wrong, _, _ = faithfulness(rubric.read_text(), "The museum opens at 11 am.", p=0.75)
    assert right > wrong


def test_write_weights_refuses_a_rubric_without_a_metric_with_parts(tmp_path):
    labels, rubric = tmp_path / "labels.json", tmp_path / "rubric.md"
    labels_file(labels)
    plain = RUBRIC.replace("    code: grounding\n", "")
    rubric.write_text(plain)
    judge = Judge(ScriptedModel(lambda m, o: yes(0.7), "scripted-judge", token_probabilities=True), parse_rubric(plain))
    args = build_parser().parse_args(["calibrate", "--labels", str(labels), "--rubric", str(rubric), "--no-breaks",
                                      "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--write-weights", str(rubric)])
    with pytest.raises(ConfigError, match="nothing to write"):
        run_calibration(args, judge)
    assert rubric.read_text() == plain
