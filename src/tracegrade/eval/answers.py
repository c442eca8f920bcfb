"""The answer text: which assistant turns a check reads, typed items in text, the decision stated.

    >>> options = {"yes": ("^yes", "can still return", "can return"), "no": ("^no", "cannot return", "outside")}
    >>> stated_decisions(["You can return ORD-103. It was delivered 45 days ago."], options)
    ['yes']
    >>> stated_decisions(["No. ORD-103 was delivered 45 days ago, outside the 30 day window."], options)
    ['no']
    >>> stated_decisions(["ORD-101 has shipped and has not been delivered yet."],
    ...                  {"shipped": ("shipped",), "delivered": ("delivered",)})
    ['shipped']

A phrase is matched on whole words (``can return`` is not inside ``cannot
return``) and counts only when it is not negated: no negation word among the
three words before it in the same clause. A clause ends at punctuation or at
"but", "however", "although", "though", "whereas". A phrase starting with
``^`` must open an assistant turn ("^no" for "No. ORD-103 ...").
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from tracegrade.core.trace import Reply
from tracegrade.eval.argmatch import AnyOf, Date, Literal, Money, Number, Regex, close
from tracegrade.eval.textnorm import dates_in, money_in, normalise, numbers_in

_TOKEN = re.compile(r"\w+(?:['-]\w+)*|[^\w\s]")
_BOUNDARY_WORDS = frozenset({"but", "however", "although", "though", "whereas"})
_NEGATIONS = frozenset({
    "not", "no", "never", "cannot", "cant", "nor", "neither", "without", "unable", "none", "nothing",
    # French, German, Spanish: the datasets ask in these languages too.
    "ne", "pas", "jamais", "nicht", "kein", "keine", "keinen", "keiner", "nie", "nunca", "tampoco",
})
_WINDOW = 3


def assistant_texts(reply: Reply, turn: str | int) -> list[str]:
    """The assistant text a check reads: the final answer, every assistant turn,
    or the turns that answer user message ``turn`` (1 = the question)."""
    if turn == "final":
        return [reply.answer]
    if not reply.turns:  # a single-turn reply: its answer follows the question
        return [reply.answer] if turn in ("any", 1) else []
    texts, user_messages = [], 0
    for message in reply.turns:
        if message.role == "user":
            user_messages += 1
        elif turn == "any" or user_messages == turn:
            texts.append(message.content)
    return texts


def contains(matcher: Any, text: str, steps: Sequence[str]) -> bool:
    """Whether the text holds the item: a string (after normalisation), a regex,
    a number, an amount or a date written in any common form."""
    if isinstance(matcher, AnyOf):
        return any(contains(option, text, matcher.steps(tuple(steps))) for option in matcher.options)
    own = matcher.steps(tuple(steps))
    if isinstance(matcher, Literal):
        return normalise(matcher.value, own) in normalise(text, own)
    if isinstance(matcher, Regex):
        return matcher.pattern.search(normalise(text, own)) is not None
    if isinstance(matcher, Number):
        return any(close(n, matcher.number) for n in numbers_in(normalise(text, ("unicode",))))
    if isinstance(matcher, Money):
        return any(close(a, matcher.amount) and c == matcher.currency for a, c in money_in(text))
    if isinstance(matcher, Date):
        return matcher.date in dates_in(text)
    raise TypeError(f"not an answer item: {matcher!r}")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.replace("’", "'").casefold())


def _is_boundary(token: str) -> bool:
    return token in _BOUNDARY_WORDS or (len(token) == 1 and not token.isalnum() and token not in "'-")


def _is_negation(token: str) -> bool:
    return token in _NEGATIONS or token.endswith("n't") or token.startswith("n'")


def _affirmed(tokens: list[str], phrase: str) -> bool:
    anchored = phrase.startswith("^")
    words = _tokens(phrase.lstrip("^"))
    first_word = next((i for i, t in enumerate(tokens) if not _is_boundary(t)), 0)
    for start in range(len(tokens) - len(words) + 1):
        if tokens[start:start + len(words)] != words or (anchored and start != first_word):
            continue
        before = []
        for token in reversed(tokens[max(0, start - _WINDOW):start]):
            if _is_boundary(token):
                break
            before.append(token)
        if not any(_is_negation(t) for t in before):
            return True
    return False


def stated_decisions(texts: Sequence[str], options: Mapping[str, Sequence[str]]) -> list[str]:
    """The options the texts affirm, in the order the options are declared."""
    token_lists = [_tokens(text) for text in texts]
    return [label for label, phrases in options.items()
            if any(_affirmed(tokens, phrase) for tokens in token_lists for phrase in phrases)]


def decision_phrases(texts: Sequence[str], phrases: Sequence[str]) -> list[str]:
    """The phrases of one option the texts affirm, to name them in a failure."""
    token_lists = [_tokens(text) for text in texts]
    return [p for p in phrases if any(_affirmed(tokens, p) for tokens in token_lists)]
