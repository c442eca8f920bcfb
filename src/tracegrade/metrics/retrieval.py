"""Retrieval: Recall@k, Precision@k, MRR, NDCG@k with graded relevance, leakage.

    >>> relevance = {"return-policy.md": 2, "refund-policy.md": 1}
    >>> reciprocal_rank(["shipping-policy.md", "refund-policy.md"], relevance)
    0.5
    >>> round(ndcg_at_k(["refund-policy.md", "return-policy.md"], relevance, 2), 4)
    0.7967

A case's relevance is ``relevantSources`` (source -> grade, 0 = not relevant),
or its ``expectedSource`` at grade 1. Cases with no relevant source are left
out of the retrieval metrics (an order-status question needs no policy). ``k``
is what the agent retrieved unless given.

NDCG uses the exponential gain 2^grade - 1 and log2(rank + 1) discount
(Järvelin & Kekäläinen; the form most IR toolkits use), so a grade-2 source
counts three times a grade-1 source.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

from tracegrade.case.schema import GoldenCase
from tracegrade.metrics.base import Rate, Traced

Relevance = Mapping[str, int]

# Sources a customer may never see. ShopNest has none: its leakage is 0 by
# construction, measured so an agent with private documents is held to it.
RESTRICTED_PREFIX = "internal-"


def relevance_of(case: GoldenCase) -> dict[str, int]:
    if case.relevant_sources:
        return dict(case.relevant_sources)
    return {case.expected_source: 1} if case.expected_source else {}


def _relevant(relevance: Relevance) -> set[str]:
    return {source for source, grade in relevance.items() if grade > 0}


# WHY each measure in two parts, the second given the relevant sources: retrieval_metrics
# finds them once per item, not once per measure (every result of a run passes there).

def recall_at_k(retrieved: Sequence[str], relevance: Relevance, k: int) -> float:
    return _recall(retrieved, _relevant(relevance), k)


def _recall(retrieved: Sequence[str], relevant: set[str], k: int) -> float:
    return len(relevant & set(retrieved[:k])) / len(relevant)


def precision_at_k(retrieved: Sequence[str], relevance: Relevance, k: int) -> float:
    return _precision(retrieved, _relevant(relevance), k)


def _precision(retrieved: Sequence[str], relevant: set[str], k: int) -> float:
    return len(relevant & set(retrieved[:k])) / k if k else 0.0


def reciprocal_rank(retrieved: Sequence[str], relevance: Relevance, k: int | None = None) -> float:
    return _reciprocal_rank(retrieved, _relevant(relevance), k)


def _reciprocal_rank(retrieved: Sequence[str], relevant: set[str], k: int | None) -> float:
    for rank, source in enumerate(retrieved[:k], start=1):
        if source in relevant:
            return 1 / rank
    return 0.0


def _dcg(grades: Sequence[int]) -> float:
    return float(sum([(2**grade - 1) / math.log2(rank + 1) for rank, grade in enumerate(grades, start=1)]))


def ndcg_at_k(retrieved: Sequence[str], relevance: Relevance, k: int) -> float:
    ideal = _dcg(sorted(relevance.values(), reverse=True)[:k])
    return _dcg([relevance.get(s, 0) for s in retrieved[:k]]) / ideal if ideal else 0.0


def is_restricted(source: str) -> bool:
    return source.startswith(RESTRICTED_PREFIX)


def retrieval_metrics(
    items: Sequence[Traced], k: int | None = None, restricted: Callable[[str], bool] = is_restricted
) -> dict[str, Rate]:
    recall: list[float] = []  # of the items with a relevant source
    precision: list[float] = []
    mrr: list[float] = []
    ndcg: list[float] = []
    leaked: list[bool] = []  # of every item
    for case, reply in items:  # WHY one loop: every result of a run passes here as it commits
        sources = reply.retrieved_sources
        leaked.append(any(map(restricted, sources)))
        relevance = relevance_of(case)
        relevant = _relevant(relevance) if relevance else None
        if not relevant:
            continue
        ranked, at = list(sources), len(sources) if k is None else k
        recall.append(_recall(ranked, relevant, at))
        precision.append(_precision(ranked, relevant, at))
        mrr.append(_reciprocal_rank(ranked, relevant, at))
        ndcg.append(ndcg_at_k(ranked, relevance, at))
    return {
        "retrieval.recall@k": Rate.of(recall),
        "retrieval.precision@k": Rate.of(precision),
        "retrieval.mrr": Rate.of(mrr),
        "retrieval.ndcg@k": Rate.of(ndcg),
        "retrieval.leakage": Rate.of(leaked),
    }
