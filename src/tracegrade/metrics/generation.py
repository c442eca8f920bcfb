"""Generation: refusal correctness and format compliance, by plain rules.

    >>> is_refusal("Sorry, I can only help with ShopNest orders and policies.")
    True
    >>> markdown_problems("| order | status |\\n|---|---|\\n| ORD-101 | shipped |")
    ['table']

- refusal: on ``unanswerable`` cases, the share of answers that decline or say
  the information is not available. False refusal: on ``nominal`` cases
  (answerable by construction), the share that do.
- format: the chat front end shows plain text, so an answer with a markdown
  table, header or code fence is out of format. Lists and bold are allowed.

Refusal is read from phrases, not judged: cheap and stable, and it misses a
refusal worded in a way the list does not know (see the list for what it knows;
English, German, French and Spanish).
"""

from __future__ import annotations

import re
from typing import Sequence

from tracegrade.metrics.base import Rate, Traced

REFUSAL_PHRASES = (
    "only help with", "can only assist", "can't help with", "cannot help with", "not able to help",
    "unable to help", "can't assist", "cannot assist", "not related to",
    "i don't know", "i do not know", "i'm not sure", "don't have information", "do not have information",
    "don't have any information", "do not have any information", "no information",
    "doesn't say", "does not say", "doesn't mention", "does not mention", "not mentioned", "not specified",
    "doesn't specify", "does not specify", "can't answer", "cannot answer", "unable to answer",
    "not able to answer", "can't provide", "cannot provide", "unable to provide",
    # de, fr, es
    "nur bei", "kann ich nicht", "keine informationen", "je ne peux", "je peux seulement", "pas d'information",
    "solo puedo", "no puedo", "no tengo información",
)
# WHY no "not covered" or "outside": "water damage is not covered" and "outside
# the 30 day window" are answers, not refusals.

# WHY [ \t] and possessive *+: with \s* (which crosses lines) twice in a row, a
# 16,000-character line of tabs took 1.8 s (quadratic); these look at one line.
_TABLE = re.compile(r"^[ \t]*+\|?[ \t]*+:?-{3,}+:?[ \t]*+(?:\|[ \t]*+:?-{3,}+:?[ \t]*+)+\|?[ \t]*+$", re.MULTILINE)
_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*+```", re.MULTILINE)


# WHY one pattern: the phrases one by one were 42 searches of every answer.
_REFUSAL = re.compile("|".join(re.escape(phrase) for phrase in REFUSAL_PHRASES))


def is_refusal(answer: str) -> bool:
    """The answer contains one of REFUSAL_PHRASES (case and apostrophe style aside)."""
    return _REFUSAL.search(answer.casefold().replace("\u2019", "'")) is not None


def markdown_problems(answer: str) -> list[str]:
    found = [("table", _TABLE), ("header", _HEADER), ("code fence", _FENCE)]
    return [name for name, pattern in found if pattern.search(answer)]


def generation_metrics(items: Sequence[Traced]) -> dict[str, Rate]:
    return {
        "generation.refusal": Rate.of(is_refusal(r.answer) for c, r in items if c.split == "unanswerable"),
        "generation.falseRefusal": Rate.of(is_refusal(r.answer) for c, r in items if c.split == "nominal"),
        "generation.format": Rate.of(not markdown_problems(r.answer) for _, r in items),
    }
