"""Re-score stored judge-model answers with the current code, and print the calibration.

    python bench/judge/judge_labels_replay.py bench/results/judge-labels-travel.json evals/judge-labels/travel.json \
        [--rubric FILE] [--out bench/results/judge-labels-travel-replay.txt]

Reads the model's P(yes) per item and metric (the ``model`` part each scored metric
keeps) from a `tracegrade calibrate --json` result, and judges every labelled answer
again through ``Judge.score`` with a stand-in model that answers each question with
that stored P(yes): the code parts (grounding, overlap, requires) are those of the
code checked out now, the model's answers those of the stored run. No model call.
WHY: the local model is slow on a shared 2-core machine; a change to the code parts
must not need the model run again to be measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math

from tracegrade.judge.calibrate import Thresholds, calibrate
from tracegrade.judge.labels import load_labels
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel
from tracegrade.report.calibration import render


def stored_answers(result: dict) -> dict[tuple[str, str], float]:
    """(item id, metric) -> the model's P(yes) in the stored run."""
    answers = {}
    for row in result["items"]:
        for metric in row["metrics"]:
            parts = dict(metric.get("parts") or [])
            if "model" in parts:
                answers[(row["itemId"], metric["name"])] = parts["model"]
            elif metric["source"] == "probability" and metric["value"] is not None:
                answers[(row["itemId"], metric["name"])] = metric["value"]
    return answers


def replay_model(items, rubric, answers: dict[tuple[str, str], float]) -> ScriptedModel:
    # WHY the answer under its heading: a faithful answer in the evidence's own words is also
    # inside the evidence, and must not stand for the other answers to the same question.
    heading = rubric.headings["answer"]
    by_answer = {(i.question, f"{heading}:\n{i.answer}\n"): i.id for i in items}
    questions = [(q, m.name) for m in rubric.metrics for q in (m.yes_no, m.reference_free) if q]

    def reply(messages, options):
        prompt = messages[-1].content + "\n"
        item = next(i for (question, answer), i in by_answer.items() if question in prompt and answer in prompt)
        metric = next(name for q, name in questions if q in prompt)
        p = min(max(answers[(item, metric)], 1e-6), 1 - 1e-6)
        return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(p)), ("No", math.log(1 - p))),))

    return ScriptedModel(reply, model_id="replay", token_probabilities=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("labels")
    parser.add_argument("--rubric")
    parser.add_argument("--out")
    parser.add_argument("--json")
    args = parser.parse_args()
    result = json.loads(open(args.result).read())
    items, version = load_labels(args.labels)
    rubric = load_rubric(args.rubric)
    judge = Judge(replay_model(items, rubric, stored_answers(result)), rubric)
    cal = asyncio.run(calibrate(items, judge, version, thresholds=Thresholds(), breaks=False, partial=True,
                                fit_thresholds=True))
    text = f"replay of {args.result} (model answers of judge {result['judgeModel']}) with the code now\n" + render(cal)
    print(text)
    if args.out:
        open(args.out, "w").write(text + "\n")
    if args.json:
        open(args.json, "w").write(json.dumps({**cal.to_json(), "judgeModel": result["judgeModel"],
                                               "replayOf": args.result}, indent=1) + "\n")


if __name__ == "__main__":
    main()
