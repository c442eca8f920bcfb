"""Where the judge's prompt tokens per answer come from: each question's new tokens by part, no forward pass.

    python bench/judge/judge_prompt_parts.py [--limit N] [--rubric FILE] [--interleave N] [--out FILE]

Replays the judge a run uses (``Judge(model, load_rubric())``) over the shipped
human labels on a stand-in model that answers every question "Yes" and keeps
the prompts: a run asks the same questions (which ones code has already
decided does not depend on the model). Each prompt is tokenized as
ik_llama.cpp's scorer sends it (models/next_token.py: the embedded model's
chat template, each message's text as plain text; loads the weights file, runs
no layer), and a cache that keeps the last prompt only is played over them, as
both runtimes' judge slot does: a prompt evaluates what follows the prefix it
shares with the one before (at least its last token).

Per question it reports the new tokens and which part of the prompt they fall
in: the system message, a section of the evidence (heading and text), the
question's own words, or the chat template's markers. ``--interleave N``
plays the questions of N answers taking turns, one question each, as four
cases judged at once did before one answer's questions were kept together:
what the cache then misses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Sequence

from tracegrade.judge.labels import load_labels
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.models import ChatOptions, ChatResponse, Message
from tracegrade.models.local import _flattened
from tracegrade.models.next_token import ROLE_MARK, NextTokenScorer, _shared_prefix
from tracegrade.models.weights import default_model_path

YES = ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(0.9)), ("No", math.log(0.1))),))


class Prompts:
    """Answers every question "Yes" and keeps each prompt, with the metric whose question it is."""

    token_probabilities = True
    model_id = "stand-in"

    def __init__(self, questions: dict[str, str]) -> None:
        self.questions = questions  # question text -> metric
        self.asked: list[tuple[str, list[Message]]] = []

    async def complete(self, messages: Sequence[Message], options: ChatOptions = ChatOptions()) -> ChatResponse:
        last = messages[-1].content
        metric = next((m for q, m in self.questions.items() if last.rstrip().endswith(q.strip())), "?")
        self.asked.append((metric, [_flattened(m) for m in messages]))
        return YES


def parts_of(scorer: NextTokenScorer, messages: list[Message], headings: dict[str, str]) -> list[tuple[str, int]]:
    """The prompt's tokens as (part, count) runs, in order, adding up to the tokens sent."""
    template = scorer._template([m.role for m in messages])
    pieces = template.split(ROLE_MARK)
    runs: list[tuple[str, int]] = []
    for index, piece in enumerate(pieces):
        if piece:
            name = "chat markers after the question" if index == len(messages) else "chat markers"
            runs.append((name, len(scorer._model.tokenize(piece, add_bos=False, special=True))))
        if index == len(messages):
            break
        text = messages[index].content
        if messages[index].role == "system":
            runs.append(("system", len(scorer._model.tokenize(text, add_bos=False, special=False))))
            continue
        # WHY cumulative prefixes: a part's tokens are those its text adds to the tokens of all
        # before it (the pre-tokenizer splits at the blank lines between parts, so they add up).
        bounds = [(name, text.find(f"{heading}:\n")) for name, heading in headings.items()]
        bounds = sorted((at, name) for name, at in bounds if at >= 0)
        question_at = text.rfind("\n\n") + 2 if "\n\n" in text else 0
        cuts = [(at, name) for at, name in bounds if at < question_at] + [(question_at, "question words")]
        before = 0
        for (at, name), (end, _) in zip(cuts, [*cuts[1:], (len(text), "")]):
            count = len(scorer._model.tokenize(text[:end], add_bos=False, special=False))
            runs.append((name, count - before))
            before = count
    return runs


def evaluated(runs: list[tuple[str, int]], shared: int) -> Counter[str]:
    """The tokens past the first ``shared``, by part."""
    new: Counter[str] = Counter()
    position = 0
    for name, count in runs:
        new[name] += max(0, min(count, position + count - shared))
        position += count
    return new


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """What the scorer keeps of ``a`` for ``b``: at least ``b``'s last token is evaluated."""
    return min(_shared_prefix(a, b), len(b) - 1)


async def prompts_per_answer(limit: int | None, rubric_path: Path | None) -> tuple[list[Any], Any]:
    items, _ = load_labels()
    items = items[:limit] if limit else items
    rubric = load_rubric(rubric_path)
    questions = {q: m.name for m in rubric.metrics for q in m.questions}
    questions.update({m.reference_free: m.name for m in rubric.metrics if m.reference_free})
    answers = []
    for item in items:
        model = Prompts(questions)
        await Judge(model, rubric).score(item.case(), item.reply())  # type: ignore[arg-type]
        answers.append((item.id, model.asked))
    return answers, rubric


def play(order: list[tuple[str, str, list[Message]]], scorer: NextTokenScorer,
         headings: dict[str, str]) -> list[dict[str, Any]]:
    """The one-prompt cache over the questions in ``order`` (answer, metric, messages)."""
    cached: list[int] = []
    calls = []
    for answer, metric, messages in order:
        tokens = scorer._tokens(messages)
        shared = shared_prefix(cached, tokens)
        runs = parts_of(scorer, messages, headings)
        assert sum(c for _, c in runs) == len(tokens), (answer, metric, runs, len(tokens))
        calls.append({"answer": answer, "metric": metric, "tokens": len(tokens), "cached": shared,
                      "evaluated": len(tokens) - shared, "parts": dict(evaluated(runs, shared))})
        cached = tokens
    return calls


def interleaved(answers: list[Any], width: int) -> list[tuple[str, str, list[Message]]]:
    """Groups of ``width`` answers, their questions taking turns one each."""
    order = []
    for start in range(0, len(answers), width):
        queues = [[(a, m, msgs) for m, msgs in asked] for a, asked in answers[start:start + width]]
        while any(queues):
            order += [queue.pop(0) for queue in queues if queue]
    return order


def summary(calls: list[dict[str, Any]], first: str) -> dict[str, Any]:
    per_answer: dict[str, int] = defaultdict(int)
    by_part: Counter[str] = Counter()
    by_metric: dict[str, list[int]] = defaultdict(list)
    for call in calls:
        if call["answer"] == first:  # WHY left out: the first answer evaluates the system message once
            continue
        per_answer[call["answer"]] += call["evaluated"]
        by_part.update(call["parts"])
        by_metric[call["metric"]].append(call["evaluated"])
    values = sorted(per_answer.values())
    n = len(values)
    return {"answers": n, "p50": values[max(0, round(0.5 * n + 0.5) - 1)], "mean": statistics.fmean(values),
            "perAnswerByPart": {k: round(v / n, 1) for k, v in by_part.most_common()},
            "perQuestionByMetric": {m: {"asked": len(v), "mean": round(statistics.fmean(v), 1)}
                                    for m, v in by_metric.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N labelled answers")
    parser.add_argument("--rubric", type=Path, help="judge rubric (default: the shipped one)")
    parser.add_argument("--interleave", type=int, default=4, help="answers taking turns in the second play")
    parser.add_argument("--out", type=Path, help="write every call as JSON")
    args = parser.parse_args()
    answers, rubric = asyncio.run(prompts_per_answer(args.limit, args.rubric))
    scorer = NextTokenScorer(default_model_path(), n_ctx=4096, threads=1)
    headings = dict(rubric.headings)
    in_a_row = play([(a, m, msgs) for a, asked in answers for m, msgs in asked], scorer, headings)
    turns = play(interleaved(answers, args.interleave), scorer, headings)
    result = {"command": " ".join(["python", *sys.argv]), "inARow": summary(in_a_row, answers[0][0]),
              f"takingTurns{args.interleave}": summary(turns, answers[0][0])}
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({**result, "calls": in_a_row, "turnCalls": turns}, indent=2) + "\n",
                            encoding="utf-8")


if __name__ == "__main__":
    main()
