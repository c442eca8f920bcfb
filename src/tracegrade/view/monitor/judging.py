"""The sampled online judge: scores a share of production replies in the background.

    >>> sampled("00000000" + "0" * 24, 0.1), sampled("ffffffff" + "0" * 24, 0.1)
    (True, False)

WHY sampling by trace id rather than at random: the same trace is in or out of
the sample after a restart, so nothing is judged twice and nothing is skipped
because the monitor happened to be down.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from typing import Callable

from tracegrade.case.schema import GoldenCase
from tracegrade.core.results import Scores
from tracegrade.judge.scoring import Judge
from tracegrade.observe.spanstore import Judgement, SpanStore, StoredSpan, reply_from_spans


def sampled(trace_id: str, rate: float) -> bool:
    return int(trace_id[:8], 16) / 0xFFFFFFFF < rate


@dataclass
class OnlineJudge:
    """Judges every sampled, answered, not yet judged request. ``make_judge`` runs
    once, on first need, in a thread (loading a local model takes seconds)."""

    store: SpanStore
    make_judge: Callable[[], Judge]
    rate: float = 0.1
    interval_s: float = 10.0
    batch: int = 5
    _judge: Judge | None = None

    def pending(self) -> list[list[StoredSpan]]:
        judged = self.store.judgements()
        return [spans for spans in self.store.requests()
                if spans[0].trace_id not in judged and sampled(spans[0].trace_id, self.rate)
                and spans[0].attributes.get("tracegrade.status", "ok") == "ok"]

    async def judge_pending(self) -> int:
        """Judge up to ``batch`` waiting requests; how many were judged."""
        todo = (await asyncio.to_thread(self.pending))[: self.batch]
        if todo and self._judge is None:
            self._judge = await asyncio.to_thread(self.make_judge)
        for spans in todo:
            await self._judge_one(spans)
        return len(todo)

    async def _judge_one(self, spans: list[StoredSpan]) -> None:
        root = spans[0]
        # No golden answer in production: the judge scores against the evidence only.
        case = GoldenCase(id=root.trace_id, question=root.attributes.get("tracegrade.question") or "(none)")
        assert self._judge is not None  # made by judge_pending before the first request
        outcome = await self._judge.score(case, reply_from_spans(spans))
        scores = dict(outcome.values) if isinstance(outcome, Scores) else None
        judgement = Judgement(root.trace_id, time.time_ns(), self._judge.model.model_id, scores,
                              outcome.reason if scores else "", "" if scores else outcome.reason)
        await asyncio.to_thread(self.store.save_judgement, judgement)

    async def run_forever(self) -> None:
        while True:
            try:
                await self.judge_pending()
            except Exception as exc:  # a background loop must outlive one bad round; say why
                print(f"tracegrade monitor: online judge: {type(exc).__name__}: {exc}", file=sys.stderr)
            await asyncio.sleep(self.interval_s)
