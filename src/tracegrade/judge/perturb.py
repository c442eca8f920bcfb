"""Deterministic breaks of a good answer, each aimed at the judge metrics it should lower.

    >>> b = break_answer("stripFacts", "Can I still return ORD-102?",
    ...                  "Yes. ORD-102 was delivered 20 days ago, inside the 30 day window.", evidence="")
    >>> b.answer
    'Thank you for your question about ORD-102. Let me know if there is anything else I can help with.'
    >>> b.targets
    ('correctness', 'helpfulness')

Three kinds, one per failure a judge must see:

- ``inventFact`` appends one specific claim (a voucher, a courier, a fee) whose
  marker words appear nowhere in the evidence: faithfulness and hallucinationFree.
- ``stripFacts`` drops every sentence that carries a key fact (a number, a
  verdict, a status, a policy word) and keeps only politeness: correctness and
  helpfulness.
- ``offTopic`` replaces the answer with a true ShopNest policy sentence that
  shares no content word with the question or the answer: relevance.

WHY rules and not a model: a break must be the same every time, so a judge's
calibration can be compared across models and days. The choice among the
candidates is seeded by a hash of the question and answer, not by ``random``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal, Sequence, TypeVar

BreakKind = Literal["inventFact", "stripFacts", "offTopic"]
BREAK_KINDS: tuple[BreakKind, ...] = ("inventFact", "stripFacts", "offTopic")
TARGETS: dict[BreakKind, tuple[str, ...]] = {
    "inventFact": ("faithfulness", "hallucinationFree"),
    "stripFacts": ("correctness", "helpfulness"),
    "offTopic": ("relevance",),
}

# (marker words that must be absent from the evidence, the invented sentence)
INVENTED_FACTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("voucher", "25 eur"), "As an apology for the wait, we have added a 25 EUR voucher to your account."),
    (("fastparcel", "14 march"), "Our courier FastParcel will also collect it from your door on 14 March at no cost."),
    (("shopnest plus", "90 days"), "Because you are a ShopNest Plus member, every deadline is extended by 90 days."),
    (("restocking", "15%"), "Please note that a 15% restocking fee is deducted from every refund."),
    (("berlin", "upgraded"), "Your order was also upgraded to express shipping for free from our Berlin warehouse."),
)

OFF_TOPIC_ANSWERS: tuple[str, ...] = (
    "Every product has a 2-year warranty against manufacturing defects, counted from the delivery date.",
    "Express shipping takes 1 to 2 business days and costs 9.90 EUR.",
    "We ship to every country in the European Union, but not to P.O. boxes.",
    "Gift cards, opened software and personalised items cannot be returned.",
    "Orders over 50 EUR ship free with standard shipping.",
    "To make a warranty claim, send a photo of the defect and the order number.",
)

# A sentence with any of these carries a key fact: a number, a verdict, a status, a policy term.
_KEY_FACT = re.compile(
    r"\d|\b(yes|no|not|never|cannot|can|can't|only|shipped|ships?|delivered|delivery|processing|cancel\w*"
    r"|refund\w*|return\w*|warranty|free|found|progress|completed|draft|window|days?)\b",
    re.IGNORECASE,
)
# WHY the capital after the break: "P.O. boxes" must stay one sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_ORDER_ID = re.compile(r"\bord[-\s]?(\d+)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z]{4,}")
_COMMON = frozenset("with from that this your have been every will what when does than into they there their also about".split())


@dataclass(frozen=True)
class Break:
    """A broken answer and the metrics it must lower."""

    kind: BreakKind
    answer: str

    @property
    def targets(self) -> tuple[str, ...]:
        return TARGETS[self.kind]


def all_breaks(question: str, answer: str, evidence: str) -> tuple[Break, ...]:
    """The three breaks of one answer, in BREAK_KINDS order."""
    return tuple(break_answer(kind, question, answer, evidence) for kind in BREAK_KINDS)


def break_answer(kind: BreakKind, question: str, answer: str, evidence: str) -> Break:
    """One break; ``evidence`` is everything the judge will see besides the answer."""
    seed = int(hashlib.sha256(f"{question}\n{answer}".encode()).hexdigest(), 16)
    if kind == "inventFact":
        return Break(kind, _invent_fact(answer, evidence, seed))
    if kind == "stripFacts":
        return Break(kind, _strip_facts(question, answer))
    if kind == "offTopic":
        return Break(kind, _off_topic(question, answer, seed))
    raise ValueError(f"unknown break kind {kind!r}: use one of {', '.join(BREAK_KINDS)}")


def _invent_fact(answer: str, evidence: str, seed: int) -> str:
    seen = f"{evidence}\n{answer}".lower()
    for markers, sentence in _rotated(INVENTED_FACTS, seed):
        if not any(marker in seen for marker in markers):
            return f"{_with_stop(answer)} {sentence}"
    raise ValueError("every invented fact already appears in the evidence; add one to INVENTED_FACTS")


def _strip_facts(question: str, answer: str) -> str:
    kept = [s for s in _SENTENCE_END.split(answer.strip()) if s and not _KEY_FACT.search(s)]
    order = _ORDER_ID.search(question)
    opening = f"Thank you for your question about ORD-{order.group(1)}." if order else "Thank you for your question."
    return " ".join([opening, *kept, "Let me know if there is anything else I can help with."])


def _off_topic(question: str, answer: str, seed: int) -> str:
    asked = _content_words(f"{question} {answer}")
    candidates = _rotated(OFF_TOPIC_ANSWERS, seed)
    # The first candidate with no shared content word; failing that, the least overlapping one.
    return min(candidates, key=lambda text: len(_content_words(text) & asked))


def _content_words(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if w not in _COMMON}


_T = TypeVar("_T")


def _rotated(items: Sequence[_T], seed: int) -> list[_T]:
    start = seed % len(items)
    return [*items[start:], *items[:start]]


def _with_stop(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."
