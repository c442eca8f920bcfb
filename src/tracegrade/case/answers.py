"""The answer text: which assistant turns a check reads, typed items in text, the decision stated.

    >>> options = {"yes": ("^yes", "can still return", "can return"), "no": ("^no", "cannot return", "outside")}
    >>> stated_decisions(["You can return ORD-103. It was delivered 45 days ago."], options)
    ['yes']
    >>> stated_decisions(["No. ORD-103 was delivered 45 days ago, outside the 30 day window."], options)
    ['no']
    >>> stated_decisions(["ORD-101 has shipped and has not been delivered yet."],
    ...                  {"shipped": ("shipped",), "delivered": ("delivered",)})
    ['shipped']

A phrase is matched on whole words, case-insensitively, whatever the spacing
(``can return`` is not inside ``cannot return``) and counts only when it is
not negated: no negation word among the three words before it in the same
clause. A clause ends at punctuation or at "but", "however", "although",
"though", "whereas". A phrase starting with ``^`` must open an assistant turn
("^no" for "No. ORD-103 ...").
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from tracegrade.core.trace import Reply
from tracegrade.case.argmatch import AnyOf, Date, Literal, Money, Number, Regex
from tracegrade.case.textnorm import dates_in, money_in, normalise, numbers_in

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


class TextView:
    """One answer text, read once per normalisation and once for its numbers,
    amounts and dates, however many items a case checks in it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._normal: dict[tuple[str, ...], str] = {}
        self._numbers: list[float] | None = None
        self._money: list[tuple[float, str]] | None = None
        self._dates: list[Any] | None = None

    def normal(self, steps: tuple[str, ...]) -> str:
        if steps not in self._normal:
            self._normal[steps] = normalise(self.text, steps)
        return self._normal[steps]

    def numbers(self) -> list[float]:
        if self._numbers is None:
            self._numbers = numbers_in(normalise(self.text, ("unicode",)))
        return self._numbers

    def money(self) -> list[tuple[float, str]]:
        if self._money is None:
            self._money = money_in(self.text)
        return self._money

    def dates(self) -> list[Any]:
        if self._dates is None:
            self._dates = dates_in(self.text)
        return self._dates


def contains(matcher: Any, text: str | TextView, steps: Sequence[str]) -> bool:
    """Whether the text holds the item: a string (after normalisation), a regex,
    a number, an amount or a date written in any common form."""
    view = text if isinstance(text, TextView) else TextView(text)
    if isinstance(matcher, AnyOf):
        return any(contains(option, view, matcher.steps(tuple(steps))) for option in matcher.options)
    own = matcher.steps(tuple(steps))
    if isinstance(matcher, Literal):
        return normalise(matcher.value, own) in view.normal(own)
    if isinstance(matcher, Regex):
        return matcher.pattern.search(view.normal(own)) is not None
    if isinstance(matcher, Number):
        return matcher.number in view.numbers()
    if isinstance(matcher, Money):
        return (matcher.amount, matcher.currency) in view.money()
    if isinstance(matcher, Date):
        return matcher.date in view.dates()
    raise TypeError(f"not an answer item: {matcher!r}")


_PUNCTUATION = ".,;:!?()[]{}\"“”«»…/"
_OPENERS = " \"'“«(["


def _plain(text: str) -> str:
    """Case-folded, one space between words, one kind of apostrophe."""
    return " ".join(text.replace("’", "'").casefold().split())


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "'-_"


def _is_negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith("n't") or word.startswith("n'")


def _negated(plain: str, start: int) -> bool:
    """A negation word among the three words before ``start``, in the same clause."""
    for word in reversed(plain[max(0, start - 80):start].split()[-_WINDOW:]):
        if word[-1] in _PUNCTUATION:  # punctuation ends the clause before the phrase
            return False
        core = word.strip(_PUNCTUATION)
        if core in _BOUNDARY_WORDS:
            return False
        if _is_negation(core):
            return True
    return False


class DecisionMatcher:
    """The phrases of every option, compiled once per case.

    WHY substring search first: ``str.find`` runs in C; the word boundaries and
    the negation are looked at only where a phrase occurs, which keeps the
    check at a few microseconds per answer.
    """

    def __init__(self, options: Mapping[str, Sequence[str]]) -> None:
        self.labels = tuple(options)
        self.phrases = [(label, _plain(p.lstrip("^")), p.startswith("^"), p)
                        for label, phrases in options.items() for p in phrases if _plain(p.lstrip("^"))]

    def hits(self, texts: Sequence[str]) -> list[tuple[str, str]]:
        """(label, phrase) for every phrase the texts affirm."""
        found = []
        for text in texts:
            plain = _plain(text)
            first = len(plain) - len(plain.lstrip(_OPENERS))  # where the first word starts
            for label, body, anchored, phrase in self.phrases:
                at = plain.find(body, first if anchored else 0)
                # Most phrases do not occur at all: that case is decided by find, in C.
                while at != -1 and (not anchored or at == first):
                    end = at + len(body)
                    if ((at == 0 or not _is_word_char(plain[at - 1]))
                            and (end == len(plain) or not _is_word_char(plain[end])) and not _negated(plain, at)):
                        found.append((label, phrase))
                        break
                    at = plain.find(body, at + 1)
        return found

    def stated(self, texts: Sequence[str]) -> list[str]:
        """The options the texts affirm, in the order the options are declared."""
        labels = {label for label, _ in self.hits(texts)}
        return [label for label in self.labels if label in labels]


def stated_decisions(texts: Sequence[str], options: Mapping[str, Sequence[str]]) -> list[str]:
    """The options the texts affirm, in the order the options are declared."""
    return DecisionMatcher(options).stated(texts)


def decision_phrases(texts: Sequence[str], phrases: Sequence[str]) -> list[str]:
    """The phrases of one option the texts affirm, to name them in a failure."""
    return sorted({phrase for _, phrase in DecisionMatcher({"x": phrases}).hits(texts)}, key=list(phrases).index)
