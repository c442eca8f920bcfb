"""Faithfulness's parts of every labelled answer, replayed from the judge's answer cache: no model call.

Shared by bench/faithfulness_natural_fit.py and bench/judge_cascade.py. Each answer is
judged by ``Judge.score`` as calibration judges it (every part, the model asked through
``judge.answer_cache.CachedModel``); the model behind the cache refuses every call, so an
answer the cache does not hold is left out and counted, never asked. Fill the cache
first with bench/judge_fill_cache.py.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from tracegrade.core.results import Scores
from tracegrade.judge.answer_cache import CachedModel
from tracegrade.judge.attribution import matched_pairs
from tracegrade.judge.labels import LabelledItem, load_labels
from tracegrade.judge.overlap import word_overlap
from tracegrade.judge.prompt import section_texts
from tracegrade.judge.rubric import Rubric
from tracegrade.judge.scoring import Judge, evidence_overlap
from tracegrade.models import ChatOptions, ChatResponse, Message

METRIC = "faithfulness"
PARTS = ("model", "code", "overlap")


class NotInCache(Exception):
    """The answer cache does not hold this question."""


class Refusing:
    """A model that answers nothing: the cache must hold every answer."""

    model_id = "qwen2.5-coder-1.5b-instruct-q4_k_m"  # the embedded judge's id: the cache's keys carry it
    token_probabilities = True

    async def complete(self, messages: Sequence[Message], options: ChatOptions = ChatOptions()) -> ChatResponse:
        raise NotInCache("not in the answer cache")


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
    missing: int = 0  # labelled answers the cache does not hold
    pairs: list[tuple[str, str]] = field(default_factory=list)

    def labelled(self) -> list[tuple[dict[str, float], bool]]:
        return [(r.parts, r.good) for r in self.rows]


def load_domain(name: str, labels: str, rubric: Rubric, cache: str, natural: bool) -> Domain:
    """The domain's rows; each answer's parts kept in ``cache``.parts-NAME-VERSION.json once replayed.
    WHY kept: a replay ranks the evidence by embeddings, ~0.1 s an answer; the fits read them often."""
    items, version = load_labels(labels)
    kept_path = Path(f"{cache}.parts-{name}-{version}.json")
    kept: dict[str, dict] = json.loads(kept_path.read_text()) if kept_path.exists() else {}
    model = CachedModel(Refusing(), cache)
    judge = Judge(model, rubric.keep([METRIC]), ask_decided=True, cascade=False)
    rows, missing = [], 0
    for item in items:
        verdict = item.verdict(METRIC)
        if verdict not in ("good", "bad"):
            continue
        if item.id not in kept:
            found = _replayed(item, judge, model, rubric)
            if found is None:
                missing += 1
                continue
            kept[item.id] = found
        if kept[item.id]:  # {}: n/a, no knowledge to be faithful to
            k = kept[item.id]
            rows.append(Row(item, verdict == "good", k["parts"], k["tokens"], k["pairing"]))
    kept_path.write_text(json.dumps(kept))
    domain = Domain(name, natural, rows, missing)
    domain.pairs = matched_pairs([(r.item.id, r.pairing, "good" if r.good else "bad") for r in rows])
    return domain


def _replayed(item: LabelledItem, judge: Judge, model: CachedModel, rubric: Rubric) -> dict | None:
    """The item's parts, tokens and pairing overlap; {} when n/a; None when the cache lacks it."""
    before = model.evaluated
    outcome = asyncio.run(judge.score(item.case(), item.reply()))
    if not isinstance(outcome, Scores):  # the question is not in the cache
        return None
    parts = dict(outcome.metrics[0].parts)
    if "model" not in parts:
        return {}
    texts = section_texts(item.case(), item.reply())
    parts.setdefault("overlap", evidence_overlap(rubric, rubric.metric(METRIC), texts))
    pairing = word_overlap(item.answer, [texts["question"], texts["context"], texts["tools"]])
    return {"parts": {p: parts[p] for p in PARTS}, "tokens": model.evaluated - before, "pairing": pairing}


def parse_domains(specs: Sequence[str], rubric: Rubric, cache: str) -> list[Domain]:
    """NAME=LABELS or NAME=LABELS:natural, in order."""
    domains = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        path, _, kind = rest.partition(":")
        domains.append(load_domain(name, path, rubric, cache, kind == "natural"))
    return domains
