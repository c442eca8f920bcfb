"""Word overlap: the share of an answer's content words that the evidence holds.

    >>> round(word_overlap("The museum opens at nine.", "Opening hours: the museum opens at 9 am."), 2)
    0.67
    >>> word_overlap("Yes.", "anything")
    1.0

WHY a part and never a metric alone: on knowledge-grounded replies it ranks
attributable above unattributable ones well (most invented replies bring new
words), but an answer that reuses the evidence's words and misstates them (a
swapped relation, a negation) scores as high as a faithful one, and a faithful
paraphrase in other words scores low. Content words only, lower-cased, with a
plural "s" dropped; an answer with none has nothing to miss (1.0).
"""

from __future__ import annotations

from typing import Sequence

from tracegrade.judge.grounding import words

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not of off on once
only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves yes also may might must shall one s t
""".split())


def content_words(text: str) -> list[str]:
    """The text's words that carry content, normalised (lower case, a plural s dropped)."""
    return [_stem(w) for w in words(text) if w not in STOPWORDS]


def word_overlap(answer: str, evidence: str | Sequence[str]) -> float:
    """The share (0..1) of the answer's content words found in the evidence; 1.0 when it has none."""
    words = content_words(answer)
    if not words:
        return 1.0
    text = evidence if isinstance(evidence, str) else "\n".join(evidence)
    known = set(content_words(text))
    return sum(w in known for w in words) / len(words)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
