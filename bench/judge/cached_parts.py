"""Faithfulness's parts of every labelled answer, from the P(yes) bench/judge/judge_fill_cache.py logged: no model call.

Shared by bench/judge/faithfulness_natural_fit.py and bench/judge/judge_cascade.py. A fill log's
line per answer holds the model's P(yes) (``faithfulness.model=``) and the prompt tokens
its question evaluated; the code and overlap parts are computed by ``Judge.score`` with
the code checked out now, through a stand-in model that answers the faithfulness
question with the logged P(yes). WHY not replay the answer cache itself: its key is the
prompt, and building the prompt ranks the evidence by embeddings (~0.1-0.3 s an answer
on two shared cores); the parts do not depend on that ranking, so here it is lexical.
An answer no log holds is left out and counted.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Sequence

from tracegrade.core.results import Scores
from tracegrade.judge import relevant
from tracegrade.judge.attribution import matched_pairs
from tracegrade.judge.labels import LabelledItem, load_labels
from tracegrade.judge.overlap import word_overlap
from tracegrade.judge.prompt import section_texts
from tracegrade.judge.rubric import Rubric
from tracegrade.judge.scoring import Judge, evidence_overlap
from tracegrade.models import ChatOptions, ChatResponse, Message
from tracegrade.models.scripted import ScriptedModel

METRIC = "faithfulness"
PARTS = ("model", "code", "overlap")
DEFAULT_RANK = relevant.default_rank  # the ranking a run uses (embeddings when installed), put back by whoever needs prompts
SECONDS: dict[str, float] = {}  # item id -> seconds its judging took when the model was asked (the fill's wall clock)


@dataclass(frozen=True)
class Row:
    item: LabelledItem
    good: bool
    parts: dict[str, float]
    tokens: int  # prompt tokens the faithfulness question evaluated when it was asked
    pairing: float  # calibrate's pairing overlap (answer vs question + context + tools)

    @property
    def group(self) -> str:
        return self.item.case_id


@dataclass
class Domain:
    name: str
    natural: bool
    rows: list[Row]
    missing: int = 0  # labelled answers no log holds
    pairs: list[tuple[str, str]] = field(default_factory=list)

    def labelled(self) -> list[tuple[dict[str, float], bool]]:
        return [(r.parts, r.good) for r in self.rows]


def logged(paths: Sequence[str]) -> dict[str, tuple[float, int]]:
    """Item id -> (P(yes), prompt tokens evaluated) from fill logs; the last line of an item wins."""
    found: dict[str, tuple[float, int]] = {}
    SECONDS.clear()
    for path in paths:
        loading = True  # WHY: the first answer a fill asks loads the model (~25 s), no answer's cost
        for line in open(path, encoding="utf-8"):
            fields = line.split()
            if line.startswith("#"):
                loading = True
            if line.startswith("#") or len(fields) < 4:
                continue
            values = dict(f.split("=", 1) for f in fields[2:] if "=" in f)
            if f"{METRIC}.model" in values:  # a line answered from the cache says what it cost when asked
                found[fields[1]] = (float(values[f"{METRIC}.model"]), int(values["tokens"]))
                if values.get("asked") == "1" and int(values["tokens"]) > 0:  # WHY: a cache hit's seconds are no model's
                    if not loading:
                        SECONDS[fields[1]] = float(fields[4].removesuffix("s"))
                    loading = False
    return found


def load_domain(name: str, labels: str, rubric: Rubric, answers: dict[str, tuple[float, int]],
                natural: bool) -> Domain:
    items, _ = load_labels(labels)
    relevant.default_rank = lambda: relevant.lexical_rank  # type: ignore[assignment]  # the parts do not read it
    rows, missing = [], 0
    for item in items:
        verdict = item.verdict(METRIC)
        if verdict not in ("good", "bad"):
            continue
        if item.id not in answers:
            missing += 1
            continue
        p_yes, tokens = answers[item.id]
        parts = parts_of(item, rubric, p_yes)
        if parts is None:  # n/a: no evidence to be faithful to
            continue
        texts = section_texts(item.case(), item.reply())
        pairing = word_overlap(item.answer, [texts["question"], texts["context"], texts["tools"]])
        rows.append(Row(item, verdict == "good", parts, tokens, pairing))
    domain = Domain(name, natural, rows, missing)
    domain.pairs = matched_pairs([(r.item.id, r.pairing, "good" if r.good else "bad") for r in rows])
    return domain


def parts_of(item: LabelledItem, rubric: Rubric, p_yes: float) -> dict[str, float] | None:
    """The item's faithfulness parts as the code checked out now computes them, P(yes) given."""
    p = min(max(p_yes, 1e-12), 1 - 1e-12)

    def reply(messages: Sequence[Message], options: ChatOptions) -> ChatResponse:
        return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(p)), ("No", math.log(1 - p))),))

    judge = Judge(ScriptedModel(reply, token_probabilities=True), rubric.keep([METRIC]), ask_decided=True,
                  cascade=False)
    outcome = asyncio.run(judge.score(item.case(), item.reply()))
    if not isinstance(outcome, Scores) or outcome.metrics[0].value is None:
        return None
    parts = dict(outcome.metrics[0].parts)
    texts = section_texts(item.case(), item.reply())
    parts.setdefault("overlap", evidence_overlap(rubric, rubric.metric(METRIC), texts))
    return {n: parts[n] for n in PARTS}


def parse_domains(specs: Sequence[str], rubric: Rubric, answers: dict[str, tuple[float, int]]) -> list[Domain]:
    """NAME=LABELS or NAME=LABELS:natural, in order."""
    domains = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        path, _, kind = rest.partition(":")
        domains.append(load_domain(name, path, rubric, answers, kind == "natural"))
    return domains
