"""Every prompt the judge sends for each labelled set, to compare two versions of the judge byte for byte.

    PYTHONPATH=<a checkout of the version before>/src python bench/judge/judge_prompts.py --root <that checkout> --out before.json
    python bench/judge/judge_prompts.py --out after.json
    python bench/judge/judge_prompts.py --compare before.json after.json

Plays each labelled answer through ``Judge(..., ask_decided=True)`` as ``tracegrade
calibrate`` does (every question asked), on a stand-in model that answers "Yes"
and keeps the messages: the judge's own labelled sets (evals/judge-labels, with
the bench rubrics bench/judge/judge_labels.sh uses) and the shipped human labels (the
shipped rubric). No model is loaded. An answer whose prompts are the same in both
files is scored the same by both versions, so its figures need no new measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from collections import Counter
from pathlib import Path
from typing import Sequence

from tracegrade.judge.labels import load_labels
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.models import ChatOptions, ChatResponse, Message

YES = ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(0.9)), ("No", math.log(0.1))),))
SETS = {"travel": "bench/judge/judge-rubric-labelled.md", "general": "bench/judge/judge-rubric-labelled.md",
        "dialogue": "bench/judge/judge-rubric-labelled.md", "travel-noref": "bench/judge/judge-rubric-correctness.md",
        "general-noref": "bench/judge/judge-rubric-correctness.md", "human": None}


class Kept:
    """Answers every question "Yes" and keeps each prompt's messages."""

    token_probabilities = True
    model_id = "stand-in"

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    async def complete(self, messages: Sequence[Message], options: ChatOptions = ChatOptions()) -> ChatResponse:
        self.asked.append([f"{m.role}: {m.content}" for m in messages])
        return YES


async def prompts(root: Path) -> dict[str, list[list[str]]]:
    found = {}
    for name, rubric_path in SETS.items():
        items, _ = load_labels(None if name == "human" else root / f"evals/judge-labels/{name}.json")
        rubric = load_rubric(root / rubric_path if rubric_path else None)
        for item in items:
            model = Kept()
            await Judge(model, rubric, ask_decided=True).score(item.case(), item.reply())  # type: ignore[arg-type]
            found[f"{name}/{item.id}"] = model.asked
    return found


def compare(before: dict[str, list[list[str]]], after: dict[str, list[list[str]]]) -> dict[str, str]:
    """Per set: how many answers' prompts differ, of how many."""
    total, differ = Counter(), Counter()
    for key, asked in before.items():
        name = key.split("/")[0]
        total[name] += 1
        differ[name] += asked != after.get(key)
    return {name: f"{differ[name]} of {total[name]} answers' prompts differ" for name in total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the checkout whose labelled sets and bench rubrics are read (default: this one)")
    parser.add_argument("--out", type=Path, help="write every answer's prompts as JSON")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        print(json.dumps(compare(before, after), indent=2))
        return
    found = asyncio.run(prompts(args.root))
    if args.out:
        args.out.write_text(json.dumps(found, indent=0) + "\n", encoding="utf-8")
    print(f"{len(found)} answers' prompts" + (f" written to {args.out}" if args.out else ""))


if __name__ == "__main__":
    main()
