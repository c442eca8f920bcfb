"""Faithfulness asked per sentence of the answer, against the shipped one question per answer.

    python bench/judge/faithfulness_per_sentence.py [--domains dialogue travel general] [--limit N] \
        [--claims] [--question TEXT] [--no-sentences] [--out bench/results/faithfulness-per-sentence.json]

Issue 22 asks for a per-claim or per-sentence question "where it measures
better". For every faithfulness-labelled answer of evals/judge-labels/ this
asks the local model, with the judge's own prompt (the instructions, the
question, the answer and the part of the evidence most like it):

- the shipped question about the whole answer, and
- for each sentence of a multi-sentence answer, one more question naming the
  sentence, after the same prefix (llama.cpp's cache holds it, so a sentence
  costs only its own words and the question's),

and prints the AUC, on each domain and its overlap-matched pairs, of: the whole
answer's P(yes); the lowest sentence P(yes); the lower of the two; each with
code grounding's veto (0 when a specific claim is not in the evidence), as the
shipped metric has it. The model answers are written to --out, so the figures
can be read again without the model. ``--question`` asks another wording of
the whole-answer question (``--no-sentences``: that question alone), to compare
wordings on the same answers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

from tracegrade.judge.agreement import auc
from tracegrade.judge.attribution import matched_pairs
from tracegrade.judge.grounding import ungrounded
from tracegrade.judge.labels import LabelledItem, load_labels
from tracegrade.judge.overlap import word_overlap
from tracegrade.judge.probability import p_yes
from tracegrade.judge.prompt import evidence_text, question_prompt, section_texts, system_prompt
from tracegrade.judge.relevant import passages
from tracegrade.judge.rubric import Rubric, load_rubric
from tracegrade.judge.scoring import shown_to_model
from tracegrade.models import ChatOptions, Message
from tracegrade.models.local import LocalModel
from tracegrade.models.weights import MODEL_ID, default_model_path

METRIC = "faithfulness"
SENTENCE_QUESTION = 'Is this sentence of the answer supported by what the assistant saw: "{sentence}"?'
CLAIM_QUESTION = 'Is this claim of the answer supported by what the assistant saw: "{sentence}"?'
MAX_SENTENCES = 8
# A clause boundary inside a sentence: a semicolon, or a conjunction that starts a new
# statement (after a comma, or before a subject). Linear: no nested quantifiers.
_CLAUSE = re.compile(r";\s+|,\s+(?=(?:and|but|so|while|whereas|although|though|which)\s)"
                     r"|\s+(?=(?:and|but)\s+(?:it|they|he|she|we|you|I|the|this|that|there|its|their)\s)")
MIN_CLAUSE_WORDS = 3


def claims(answer: str) -> list[str]:
    """The answer's sentences cut at clause boundaries; a piece under MIN_CLAUSE_WORDS words
    stays with the one before it (a claim needs a subject and what is said of it).

        >>> claims("The hotel has a pool, and it opens at 9; breakfast is free. Thanks!")
        ['The hotel has a pool', 'and it opens at 9', 'breakfast is free.', 'Thanks!']
    """
    out: list[str] = []
    for sentence in passages(answer):
        pieces: list[str] = []
        for piece in (p.strip() for p in _CLAUSE.split(sentence)):
            if pieces and len(piece.split()) < MIN_CLAUSE_WORDS:
                pieces[-1] += " " + piece
            elif piece:
                pieces.append(piece)
        out.extend(pieces)
    return out


async def ask(model: LocalModel, rubric: Rubric, evidence: str, question: str) -> float | None:
    messages = [Message("system", system_prompt(rubric.instructions)),
                Message("user", question_prompt(evidence, question, "yesNo"))]
    response = await model.complete(messages, ChatOptions(temperature=0.0, max_tokens=1, logprobs=20))
    return p_yes(response.top_logprobs[0]) if response.top_logprobs else None


async def judge_item(model: LocalModel, rubric: Rubric, item: LabelledItem, args: argparse.Namespace) -> dict[str, Any]:
    spec = rubric.metric(METRIC)
    texts = section_texts(item.case(), item.reply())
    evidence = evidence_text(rubric.headings, shown_to_model(texts, [spec]), rubric.sections(spec))
    whole = await ask(model, rubric, evidence, args.question or spec.yes_no or "")
    split, wording = (claims, CLAIM_QUESTION) if args.claims else (passages, SENTENCE_QUESTION)
    sentences = split(texts["answer"])[:MAX_SENTENCES]
    each = [await ask(model, rubric, evidence, wording.format(sentence=s)) for s in sentences] \
        if len(sentences) > 1 and not args.no_sentences else [whole]
    sources = [texts[s] for s in rubric.headings if s in spec.evidence and s != "answer" and texts[s]]
    veto = bool(ungrounded(texts["answer"], sources, spec.claims, [*rubric.known, texts["reference"]]))
    return {"item": item.id, "verdict": item.verdict(METRIC), "kind": item.kind, "whole": whole,
            "sentences": each, "veto": veto, "overlap": word_overlap(texts["answer"], sources)}


VALUES: dict[str, Callable[[dict[str, Any]], float]] = {
    "whole answer": lambda r: r["whole"],
    "lowest sentence": lambda r: min(r["sentences"]),
    "lower of the two": lambda r: min(r["whole"], *r["sentences"]),
    "mean of sentences": lambda r: statistics.fmean(r["sentences"]),
}


def table(rows_by_domain: dict[str, list[dict[str, Any]]]) -> list[str]:
    lines = [f"{'value (with the code veto)':<28}" + "".join(f"{d + ' all':>14}{d + ' matched':>18}"
                                                           for d in rows_by_domain)]
    for name, value in VALUES.items():
        cells = ""
        for rows in rows_by_domain.values():
            scored = [r for r in rows if r["whole"] is not None and None not in r["sentences"]]
            score = {r["item"]: 0.0 if r["veto"] else value(r) for r in scored}
            good = [score[r["item"]] for r in scored if r["verdict"] == "good"]
            bad = [score[r["item"]] for r in scored if r["verdict"] == "bad"]
            pairs = matched_pairs([(r["item"], r["overlap"], r["verdict"]) for r in scored])
            matched = auc([score[g] for g, _ in pairs], [score[b] for _, b in pairs])
            cells += f"{auc(good, bad):>14.3f}{matched:>18.3f}"
        lines.append(f"{name:<28}{cells}")
    return lines


async def run(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    model, rubric = LocalModel(default_model_path(), MODEL_ID), load_rubric(args.rubric)
    out: dict[str, list[dict[str, Any]]] = {}
    for domain in args.domains:
        items, _ = load_labels(f"evals/judge-labels/{domain}.json")
        items = [i for i in items if i.verdict(METRIC) in ("good", "bad")][: args.limit]
        out[domain] = []
        for n, item in enumerate(items, 1):
            out[domain].append(await judge_item(model, rubric, item, args))
            print(f"  [{domain} {n}/{len(items)}] {item.id}", file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", nargs="+", default=["dialogue", "travel", "general"])
    parser.add_argument("--limit", type=int, help="only the first N labelled answers of each domain")
    parser.add_argument("--rubric", type=Path, help="judge rubric (default: the shipped one)")
    parser.add_argument("--question", help="another wording of the whole-answer question")
    parser.add_argument("--claims", action="store_true", help="ask per claim (clauses of sentences), not per sentence")
    parser.add_argument("--no-sentences", action="store_true", help="ask the whole-answer question only")
    parser.add_argument("--read", type=Path, help="read stored model answers (an --out file) instead of asking")
    parser.add_argument("--out", type=Path, help="write the model answers as JSON")
    args = parser.parse_args()
    print(f"uptime before: {os.getloadavg()}")
    started = time.perf_counter()
    rows = json.loads(args.read.read_text()) if args.read else asyncio.run(run(args))
    print(f"command: python {' '.join(sys.argv)}")
    print(f"seconds: {time.perf_counter() - started:.0f}; uptime after: {os.getloadavg()}")
    for domain, domain_rows in rows.items():
        several = sum(len(r["sentences"]) > 1 for r in domain_rows)
        print(f"{domain}: {len(domain_rows)} answers, {several} of several sentences")
    print("\n".join(table(rows)))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
