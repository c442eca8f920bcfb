"""Grounding checked by code: every specific claim in an answer must appear in the evidence.

    >>> evidence = "Order ORD-103 is DELIVERED. It was delivered 45 days ago, on 2026-10-16."
    >>> [c.text for c in ungrounded("It arrived 45 days ago, on 16 October.", evidence)]
    []
    >>> [c.text for c in ungrounded("A 15% restocking fee applies to ORD-103.", evidence)]
    ['15%']

A claim is something an answer can only know from somewhere: a money amount,
a percentage, a date, a count with a unit ("45 days", "2-year"), any other
number, an id with letters and digits ("ORD-102", "RD-7"), an e-mail address,
a URL, a time of day, or a name (a capitalised word inside a sentence, an acronym).
Each is normalised ("16 October" = "2026-10-16", "3 pm" = "15:00", "2-year" = "2 years", "9,90 €" =
"9.90 EUR", "9.2 million" = "9200000") and looked up in the evidence the same way. A sentence's first
word is not taken as a name: capitals there say nothing.

What a faithful paraphrase may change is held too: a hedged number ("almost 30",
"about 9 million") is held by an evidence number that rounds to it (29.9, 9,200,000);
a count of things ("800 pieces") by the number alone ("800 works"); a name by
another form of the same word ("Italy" by "Italian", "Germany" by "German").

    >>> [c.text for c in ungrounded("It is almost 30 m long and covers about 9.2 million km2.",
    ...                            "Its length is 29.9 m; its area 9,200,000 km2.")]
    []
    >>> [c.text for c in ungrounded("It is almost 35 m long.", "Its length is 29.9 m.")]
    ['35']

WHY rules and not the model: the small local judge asked "is every fact backed
by the evidence?" was at chance on the human labels; a missing number is a
fact a few lines of code can see, every time, and name in the report.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import AbstractSet, Iterable, Sequence

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?" \
         r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
CURRENCIES = {"€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "$": "USD", "usd": "USD", "dollars": "USD",
              "dollar": "USD", "£": "GBP", "gbp": "GBP", "pounds": "GBP", "chf": "CHF", "¥": "JPY", "jpy": "JPY"}
UNITS = {"second": "second", "minute": "minute", "hour": "hour", "day": "day", "week": "week", "month": "month",
         "year": "year", "night": "night", "item": "item", "piece": "item", "time": "time", "kg": "kg",
         "km": "km", "gb": "gb", "mb": "mb"}
_NUM = r"\d+(?:[.,]\d+)*"
_CUR = r"(?:€|\$|£|¥|\b(?:eur|usd|gbp|chf|jpy)\b|\beuros?\b|\bdollars?\b|\bpounds\b)"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    ("url", re.compile(r"\bhttps?://[^\s)>\]]+|\bwww\.[^\s)>\]]+", re.IGNORECASE)),
    # An id starts with a letter and holds a digit: ORD-102, RD-7, C-100, AB12345 (not "30-day").
    ("id", re.compile(r"\b(?=[A-Za-z0-9_-]*\d)[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+\b|\b[A-Z]{1,6}\d{2,}\b")),
    ("date", re.compile(rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b(?:,?\s+\d{{4}})?"
                        rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?"
                        r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b", re.IGNORECASE)),
    # A time of day: "15:00", "3 pm", "3:30 p.m." (the same key: "15:00", "15:30").
    ("time", re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d(?:\s*[ap]\.?m\b\.?)?|\b(?:1[0-2]|0?[1-9])\s*[ap]\.?m\b\.?",
                        re.IGNORECASE)),
    ("money", re.compile(rf"{_CUR}\s?{_NUM}|{_NUM}\s?{_CUR}", re.IGNORECASE)),
    ("percent", re.compile(rf"{_NUM}\s?(?:%|percent\b|per cent\b)", re.IGNORECASE)),
    ("quantity", re.compile(rf"\b{_NUM}(?:\s*(?:to|-|–|or|and)\s*{_NUM})?[\s-]+(?:business\s+|working\s+|calendar\s+)?"
                            r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|nights?|items?|pieces?|times"
                            r"|kg|km|gb|mb)\b(?:\(s\))?", re.IGNORECASE)),
    ("number", re.compile(rf"(?<![\w.]){_NUM}(?:st|nd|rd|th)?\b(?:\s+(?i:thousand|million|billion|trillion)\b)?")),
)
SCALES = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}
# Words that say a number is rounded: "about 30", "almost 30", "over 800", "~30".
_HEDGE = re.compile(r"(?:\b(?:about|around|roughly|nearly|almost|approximately|approx\.?|some|over|under|"
                    r"more than|less than|fewer than|close to|up to)|~)\s*$", re.IGNORECASE)
HEDGE_LOOKBACK = 16  # characters before a number read for a hedge (bounded work)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*•]\s*)?|[\"'(]\s*)$")
_NAME = re.compile(r"\b(?:[A-Z][a-z]*[A-Z][A-Za-z]*|[A-Z]{2,}|[A-Z][a-z]+)\b")
# Capitalised words that name nothing the evidence could hold: the pronoun, and
# generic acronyms ("the order with ID ORD-999" claims the id, not a name "ID").
_NOT_NAMES = frozenset({"I", "I'm", "OK", "Ok", "ID", "IDs", "FAQ", "URL", "AM", "PM"})
_WORD = re.compile(r"[a-z0-9]+")
# List markers say where an item starts, not what anything is: "1. Optimize", "2) Cache",
# "(3) Test" at a line start, and "1)" / "(1)" after a blank inside a line (not "9:00) ").
# WHY not "5." inside a line: "It costs 5. Then ..." states a number.
_MARKER = re.compile(r"(?m)^[ \t]*(?:[-*•][ \t]*)?\(?[1-9]\d?[.)](?=\s)|(?:(?<=^)|(?<=\s))\(?[1-9]\d?\)(?=\s)")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)$", re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    """One specific claim: its kind, the text as written, and the normalised key compared."""

    kind: str
    text: str
    key: str
    approx: bool = False  # a hedged number ("about 30"): held by evidence numbers that round to it


def claims(text: str, kinds: Iterable[str] | None = None) -> list[Claim]:
    """The claims in ``text`` in order of appearance (all kinds, or only ``kinds``)."""
    found = _all_claims(text)
    if kinds is None:
        return list(found)
    wanted = set(kinds)
    return [claim for claim in found if claim.kind in wanted]


# WHY cached: a run meets the same texts case after case (the policy contexts, tool
# results, canned answers), and each metric by code reads the same answer again.
@functools.lru_cache(maxsize=4096)
def _all_claims(text: str) -> tuple[Claim, ...]:
    return _scan(text, _possible_kinds(text))


def _scan(text: str, possible: frozenset[str]) -> tuple[Claim, ...]:
    """The claims of the kinds in ``possible``, patterns tried in priority order."""
    found: list[tuple[int, Claim]] = []
    taken = [False] * len(text)
    markers = [m.span() for m in _MARKER.finditer(text)] if "number" in possible else []
    for start, end in markers:
        taken[start:end] = [True] * (end - start)
    for kind, pattern in _PATTERNS:
        if kind not in possible:
            continue
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(taken[start:end]):
                continue  # part of a longer claim found first ("2026-10-16" is a date, not three numbers)
            taken[start:end] = [True] * (end - start)
            if kind == "number" and _ORDINAL.match(match.group(0)):
                continue  # "the 2nd step" orders, it states nothing the evidence could hold
            key = _key(kind, match.group(0))
            if key:
                hedged = kind in ("number", "quantity") and _HEDGE.search(text, max(start - HEDGE_LOOKBACK, 0), start)
                found.append((start, Claim(kind, match.group(0).strip(), key, bool(hedged))))
    if "name" in possible:
        found += list(_names(text, taken, {end for _, end in markers}))
    return tuple(claim for _, claim in sorted(found, key=lambda pair: pair[0]))


_ALL_KINDS = frozenset([*(kind for kind, _ in _PATTERNS), "name"])
_DIGIT = re.compile(r"[0-9]")
_UPPER = re.compile(r"[A-Z]")
_CURRENCY_WORDS = ("$", "eur", "usd", "gbp", "chf", "jpy", "dollar", "pound")
_PERCENT_WORDS = ("%", "percent", "per cent")
_MONTH_WORDS = tuple(month[:3] for month in MONTHS)
_DIGIT_DASH_DIGIT = re.compile(r"[0-9]-[0-9]")  # what an ISO date holds ("ORD-102" does not)


def _possible_kinds(text: str) -> frozenset[str]:
    """The kinds whose pattern can match ``text`` at all: each needs a character or word
    that a substring test finds much faster than the pattern's scan. WHY: the judge
    meets new text every case (the question is new), and scanning it with every pattern
    cost ~75 us a text. Only for ASCII text: there a case-insensitive pattern's letters
    are ASCII letters and its digits 0-9; any other text gets every pattern."""
    if not text.isascii():
        return _ALL_KINDS
    lower = text.lower()
    kinds = set()
    if "@" in text:
        kinds.add("email")
    if "http" in lower or "www." in lower:
        kinds.add("url")
    if _UPPER.search(text):
        kinds.add("name")
    if _DIGIT.search(text):
        kinds.update(("id", "quantity", "number"))
        if "/" in text or _DIGIT_DASH_DIGIT.search(text) or any(word in lower for word in _MONTH_WORDS):
            kinds.add("date")
        if any(word in lower for word in _CURRENCY_WORDS):
            kinds.add("money")
        if any(word in lower for word in _PERCENT_WORDS):
            kinds.add("percent")
        if ":" in text or "am" in lower or "pm" in lower or "m." in lower:
            kinds.add("time")
    return frozenset(kinds)


def ungrounded(answer: str, evidence: str | Sequence[str], kinds: Iterable[str] | None = None,
               names: str | Sequence[str] = ()) -> list[Claim]:
    """The claims of ``answer`` that ``evidence`` does not hold, each named once.
    ``names``: more text whose words count as known names (and only names)."""
    text = evidence if isinstance(evidence, str) else "\n\n".join(evidence)
    known = known_in(text)
    also = set(words(names if isinstance(names, str) else " ".join(names)))
    missing: list[Claim] = []
    for claim in claims(answer, kinds):
        if claim.kind == "name" and all(w in also for w in _WORD.findall(claim.key)):
            continue
        if not known.holds(claim) and claim not in missing:
            missing.append(claim)
    return missing


def words(text: str) -> list[str]:
    """The text's words, lower-cased: letters and digits (judge.overlap reads the same words)."""
    return _WORD.findall(text.lower())


@functools.lru_cache(maxsize=1024)
def known_in(evidence: str) -> Known:
    """What ``evidence`` states (cached: the same contexts come back case after case)."""
    return Known(evidence)


class Known:
    """Everything the evidence states, normalised the same way as the answer's claims."""

    def __init__(self, evidence: str) -> None:
        found = claims(evidence)
        self.keys = {(c.kind, c.key) for c in found}
        self.numbers = {n for c in found for n in _numbers(c.key)}
        self.sequence = words(evidence)
        self.words = set(self.sequence)
        self.stems = {_stem(w) for w in self.words}
        self.lower = evidence.lower()

    @functools.cached_property
    def initials(self) -> frozenset[str]:
        """WHY on first use: only an answer with an acronym asks for them."""
        return _initialisms(self.sequence)

    def holds(self, claim: Claim) -> bool:
        if (claim.kind, claim.key) in self.keys:
            return True
        if claim.kind == "date":
            return self._same_day(claim.key)
        if claim.kind == "number":
            return bool(_numbers(claim.key)) and all(self._number(n, claim.approx) for n in _numbers(claim.key))
        if claim.kind == "quantity":
            return self._quantity(claim)
        if claim.kind == "name":
            return all(self._name(w) for w in _WORD.findall(claim.key)) or self._acronym(claim.text)
        if claim.kind in ("id", "email", "url"):
            return claim.key in self.lower
        return False

    def _same_day(self, key: str) -> bool:
        """A date without a year matches the same day and month of any year in the evidence."""
        year, month_day = key.split("-", 1) if key.count("-") == 2 else ("", key)
        return any(k.endswith(month_day) and (not year or k.startswith(year) or k.count("-") == 1)
                   for kind, k in self.keys if kind == "date")

    def _number(self, number: str, approx: bool) -> bool:
        return number in self.numbers or (approx and any(_rounds_to(number, n) for n in self.numbers))

    def _name(self, word: str) -> bool:
        """"Sylvanians" is held by "Sylvanian", "Monday" by "Mondays": a plural adds nothing; and
        another form of the same word: "Italy" by "Italian", "Germany" by "German"."""
        if word in self.words or (word.endswith("s") and word[:-1] in self.words) or f"{word}s" in self.words:
            return True
        return len(word) >= MIN_STEM and _stem(word) in self.stems

    def _acronym(self, text: str) -> bool:
        """"PE" is held by "physical education", "BoE" by "Bank of England": a word of capitals
        (at least half its letters) spelled by the initials of words in a row."""
        word = text.strip()
        capitals = "".join(c for c in word if c.isupper())
        return word.isalpha() and len(capitals) >= max(2, len(word) / 2) and capitals.lower() in self.initials

    def _quantity(self, claim: Claim) -> bool:
        """"3 to 5 days" holds when each number appears with that unit ("3-5 days" or "3 days" and
        "5 days"); a count of things ("800 pieces") when its numbers appear at all ("800 works")."""
        numbers, unit = claim.key.rsplit(" ", 1)
        if unit == "item":
            return all(self._number(n, claim.approx) for n in numbers.split("-"))
        stated = {(n, k.rsplit(" ", 1)[1]) for kind, k in self.keys if kind == "quantity"
                  for n in k.rsplit(" ", 1)[0].split("-")}
        return all((n, unit) in stated or (claim.approx and any(u == unit and _rounds_to(n, m) for m, u in stated))
                   for n in numbers.split("-"))


def _key(kind: str, text: str) -> str:
    raw = text.strip().lower()
    if kind in ("email", "url"):
        return raw.rstrip(".,;:!?")
    if kind == "id":
        return raw
    if kind == "date":
        return _date_key(raw)
    if kind == "time":
        return _time_key(raw)
    if kind == "money":
        currency = next((CURRENCIES[c] for c in sorted(CURRENCIES, key=len, reverse=True) if c in raw.split()
                         or (len(c) == 1 and c in raw)), "")
        amount = _number(re.search(_NUM, raw).group(0))  # type: ignore[union-attr]
        return f"{amount} {currency}" if amount else ""
    if kind == "percent":
        return f"{_number(re.search(_NUM, raw).group(0))}%"  # type: ignore[union-attr]
    if kind == "quantity":
        numbers = [_number(n) for n in re.findall(_NUM, raw)]
        word = re.findall(r"[a-z]+", raw.replace("(s)", ""))[-1]
        unit = UNITS.get(word.rstrip("s") if word not in UNITS else word, word)
        return f"{'-'.join(numbers)} {unit}"
    if kind == "number":
        digits, *scale = raw.split(None, 1)  # "9.2 million", also across a line break
        return _scaled(_number(re.sub(r"(st|nd|rd|th)$", "", digits)), SCALES.get("".join(scale), 0))
    return raw


def _scaled(number: str, exponent: int) -> str:
    """"9.2" with 6 ("million") -> "9200000"."""
    if not exponent:
        return number
    try:
        return format((Decimal(number) * Decimal(10) ** exponent).normalize(), "f")
    except InvalidOperation:
        return number


def _rounds_to(stated: str, value: str) -> bool:
    """``value`` rounds to ``stated`` at its last significant digit: 29.9 to "30", 199 to
    "200", 9,200,000 to "9000000" ("about 9 million"); 150 not to "200" (half way)."""
    try:
        x, v = Decimal(stated), Decimal(value)
    except InvalidOperation:
        return False
    if x == v:
        return True
    significant = stated.replace(".", "").strip("0") if "." not in stated else stated.replace(".", "").lstrip("0")
    if x == 0 or not significant:
        return False
    place = Decimal(10) ** (x.adjusted() - len(significant) + 1)
    return abs(v - x) * 2 < place


# Acronyms spell up to this many words; the small words in them may be left out ("NASA").
MAX_ACRONYM = 6
_SMALL_WORDS = frozenset({"of", "and", "the", "for", "in", "on", "to", "a", "an", "&"})


def _initialisms(seen: Sequence[str]) -> frozenset[str]:
    """The initials of every run of 2..MAX_ACRONYM words that starts with a word that is not
    small, its small words left out: "physical education" -> "pe", "bank of england" -> "be"."""
    found = set()
    for start, first in enumerate(seen):
        if first in _SMALL_WORDS:
            continue
        spelled = ""
        for word in seen[start:start + 2 * MAX_ACRONYM]:
            if word not in _SMALL_WORDS:
                spelled += word[0]
                if len(spelled) > MAX_ACRONYM:
                    break
                if len(spelled) >= 2:
                    found.add(spelled)
    return frozenset(found)


MIN_STEM = 4
# Endings that make another form of a name: Italian/Italy, Japanese/Japan, Swedish/Sweden.
_ENDINGS = ("ians", "ian", "ese", "ish", "ia", "en", "y", "a")


def _stem(word: str) -> str:
    """The word without one of _ENDINGS, when MIN_STEM letters are left (or the word itself)."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_STEM:
            return word[: -len(ending)]
    return word


def _time_key(raw: str) -> str:
    """"3 pm" -> "15:00", "3:30 a.m." -> "03:30", "15:00" -> "15:00"."""
    hour, minute = (re.findall(r"\d+", raw) + ["0"])[:2]
    hours = int(hour) % 12 + (12 if "p" in raw else 0) if ("a" in raw or "p" in raw) else int(hour)
    return f"{hours:02d}:{int(minute):02d}"


def _date_key(raw: str) -> str:
    """"2026-10-16", "16 October 2026", "October 16" -> "2026-10-16" / "10-16"."""
    iso = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", raw)
    if iso:
        return f"{iso.group(1)}-{iso.group(2)}-{iso.group(3)}"
    slash = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{2,4})", raw)
    if slash:  # day/month/year, the order most of the world writes
        year = slash.group(3) if len(slash.group(3)) == 4 else f"20{slash.group(3)}"
        return f"{year}-{int(slash.group(2)):02d}-{int(slash.group(1)):02d}"
    month = next(i for i, name in enumerate(MONTHS, start=1) if re.search(rf"\b{name[:3]}", raw))
    numbers = re.findall(r"\d+", raw)
    day = next(n for n in numbers if len(n) <= 2)
    year = next((n for n in numbers if len(n) == 4), "")
    return f"{year}-{month:02d}-{int(day):02d}" if year else f"{month:02d}-{int(day):02d}"


def _number(raw: str) -> str:
    """"1,000" -> "1000", "9,90" -> "9.9", "9.90" -> "9.9", "30" -> "30"."""
    text = raw
    if re.fullmatch(r"\d{1,3}(,\d{3})+", text):
        text = text.replace(",", "")
    text = text.replace(",", ".")
    try:
        value = Decimal(text)
    except InvalidOperation:
        return raw
    return format(value.normalize(), "f")


def _numbers(key: str) -> list[str]:
    return [_number(n) for n in re.findall(r"\d+(?:\.\d+)?", key)]


def _names(text: str, taken: list[bool], marker_ends: AbstractSet[int] = frozenset()) -> list[tuple[int, Claim]]:
    found = []
    for match in _NAME.finditer(text):
        start, word = match.start(), match.group(0)
        if any(taken[start:match.end()]) or word in _NOT_NAMES or _at_sentence_start(text, start) \
                or _after_marker(text, start, marker_ends):
            continue
        found.append((start, Claim("name", word, word.lower())))
    return found


def _after_marker(text: str, start: int, marker_ends: AbstractSet[int]) -> bool:
    """The word starts a list item ("1) Optimize"): its capital says nothing, as at a sentence start."""
    begin = start
    while begin > 0 and text[begin - 1] in " \t":
        begin -= 1
    return begin in marker_ends


def _at_sentence_start(text: str, start: int) -> bool:
    """``_SENTENCE_START.search(text[:start])``, looking back only over the blanks and
    bullets just before ``start`` and the one character before them: every match of the
    pattern starts there. WHY: searching the whole prefix for every capitalised word made
    a long evidence text quadratic."""
    begin = start
    while begin > 0 and (text[begin - 1].isspace() or text[begin - 1] in "-*•"):
        begin -= 1
    return _SENTENCE_START.search(text, max(begin - 1, 0), start) is not None
