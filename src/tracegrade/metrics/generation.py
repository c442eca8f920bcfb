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
from typing import Any, Sequence

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


def _any_of(phrases: Sequence[str]) -> str:
    """A pattern found wherever one of ``phrases`` is: their alternation, shared prefixes
    written once ("can't help with|can't assist" as "can't (?:help with|assist)").

        >>> _any_of(["nope", "nur", "no"])
        'n(?:o|ur)'

    WHY a tree: the flat alternation tried every phrase at every letter of the answer,
    27 us for an answer of 700 characters (every answer of a run passes here); this tries
    each letter once per prefix, ~10 us. A phrase that begins with another is found
    wherever that one is, so what follows the shorter one is left out."""
    tree: dict[str, Any] = {}
    for phrase in phrases:
        node = tree
        for char in phrase:
            node = node.setdefault(char, {})
        node[""] = {}  # a phrase ends here
    return _written(tree)


def _written(node: dict[str, Any]) -> str:
    if "" in node:
        return ""
    branches = [re.escape(char) + _written(child) for char, child in sorted(node.items())]
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


# WHY one pattern: the phrases one by one were 42 searches of every answer.
_REFUSAL = re.compile(_any_of(REFUSAL_PHRASES))


def is_refusal(answer: str) -> bool:
    """The answer contains one of REFUSAL_PHRASES (case and apostrophe style aside)."""
    return _REFUSAL.search(answer.casefold().replace("\u2019", "'")) is not None


_PROBLEMS = (("table", _TABLE), ("header", _HEADER), ("code fence", _FENCE))


def markdown_problems(answer: str) -> list[str]:
    return [name for name, pattern in _PROBLEMS if pattern.search(answer)]


def in_format(answer: str) -> bool:
    """``not markdown_problems(answer)``, searched only in an answer with what one of them
    cannot be without: a table's rule "---", a header's "#", a fence (keep in step with the
    patterns). WHY: looking for three strings takes a tenth of the searches."""
    marked = "---" in answer or "#" in answer or "```" in answer
    return not marked or not markdown_problems(answer)


def generation_metrics(items: Sequence[Traced]) -> dict[str, Rate]:
    refusal: list[bool] = []  # on unanswerable cases
    false_refusal: list[bool] = []  # on nominal ones
    formatted: list[bool] = []
    for case, reply in items:  # WHY one loop: every result of a run passes here as it commits
        answer, split = reply.answer, case.split
        if split == "unanswerable":
            refusal.append(is_refusal(answer))
        elif split == "nominal":
            false_refusal.append(is_refusal(answer))
        formatted.append(in_format(answer))
    return {
        "generation.refusal": Rate.of(refusal),
        "generation.falseRefusal": Rate.of(false_refusal),
        "generation.format": Rate.of(formatted),
    }
