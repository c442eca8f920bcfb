"""Declared string normalisation, and the numbers, amounts and dates written in text.

    >>> normalise("  Lisboa,  PT ", ("case", "whitespace", "punctuation"))
    'lisboa pt'
    >>> numbers_in("It costs 1,250.50 EUR, not 1.250,50 or 9,90.")
    [1250.5, 1250.5, 9.9]
    >>> money_in("€1,250 or 300 dollars")
    [(1250.0, 'EUR'), (300.0, 'USD')]
    >>> [d.isoformat() for d in dates_in("on May 1st, 2026 or 02.05.2026")]
    ['2026-05-01', '2026-05-02']

Every step is opt-in: a dataset, a case or one argument declares the steps it
wants; the default is an exact comparison. The readings of ambiguous text are
stated once here and in docs/trajectory.md:

- a number's group separator is ``,`` ``.`` ``'`` or a no-break/thin space, in
  groups of three; a single ``,`` followed by exactly three digits is a
  thousands separator (``1,000``), otherwise a decimal comma (``9,90``); a
  single ``.`` is always a decimal point (``1.000`` is one);
- a date written with slashes is read both ways (``05/01/2026`` is 1 May and
  5 January); with dots or dashes it is day first (``01.05.2026``).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from typing import Iterable

NORMALISATIONS = ("case", "whitespace", "punctuation", "unicode", "numbers", "spaces")
# A step ``remove:<characters>`` deletes each of the characters (a declared set of
# separators: ``remove:-_/`` makes "2026-05-01" and "20260501" one string).
REMOVE = "remove:"

# WHY the look-behind: the 103 of "ORD-103" and the 05 of "2026-05-01" are not numbers of their own.
# WHY separators in it too: a number starts where a run of digits and separators
# starts, never inside one (scanning from every digit of "1'1'1..." is quadratic).
_NUMBER = re.compile(r"(?<![\w.,'\u00a0\u202f\-−])(?:[-−](?=\d))?\d+(?:[.,'\u00a0\u202f]\d+)*(?![\w])")
_GROUP_SEPARATORS = "'\u00a0\u202f"


def normalise(text: str, steps: Iterable[str]) -> str:
    """Apply the declared steps in a fixed order: unicode first (NFKC turns a
    full-width digit into an ASCII one), numbers before punctuation (which would
    otherwise turn ``9,90`` into ``990``), declared separators, whitespace last
    (``spaces`` removes every space: "New York" and "NewYork" are one string)."""
    steps = frozenset(steps)
    if not steps:
        return text
    if "unicode" in steps:
        text = unicodedata.normalize("NFKC", text)
    if "numbers" in steps:
        text = _NUMBER.sub(lambda m: _canonical(m.group()), text)
    if "punctuation" in steps:
        text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    if "case" in steps:
        text = text.casefold()
    for step in steps:
        if step.startswith(REMOVE):
            text = text.translate({ord(ch): None for ch in step[len(REMOVE):]})
    if "spaces" in steps:
        text = "".join(text.split())
    elif "whitespace" in steps or "punctuation" in steps:
        # WHY punctuation implies collapsing: "Lisbon, PT" must become "Lisbon PT", not "Lisbon  PT".
        text = " ".join(text.split())
    return text


def _canonical(token: str) -> str:
    value = parse_number(token)
    if value is None:
        return token
    return str(int(value)) if value == int(value) else repr(value)


def parse_number(token: str) -> float | None:
    """The number one token writes, or None when its separators do not make one."""
    raw = token.strip().replace("−", "-")
    sign = -1.0 if raw.startswith("-") else 1.0
    text: str | None = raw.lstrip("+-")
    for mark in _GROUP_SEPARATORS:
        text = _drop_groups(text, mark) if text is not None and mark in text else text
    if text is None or not text:
        return None
    commas, dots = text.count(","), text.count(".")
    if commas and dots:  # the one written last is the decimal mark
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        whole, _, fraction = text.rpartition(decimal)
        grouped = _drop_groups(whole, "." if decimal == "," else ",")
        text = None if grouped is None else f"{grouped}.{fraction}"
    elif commas > 1 or (commas == 1 and re.fullmatch(r"\d{1,3},\d{3}", text)):
        text = _drop_groups(text, ",")
    elif commas == 1:
        text = text.replace(",", ".")
    elif dots > 1:
        text = _drop_groups(text, ".")
    if text is None or not re.fullmatch(r"\d+(\.\d+)?", text):
        return None
    return sign * float(text)


def _drop_groups(text: str, mark: str) -> str | None:
    head, *groups = text.split(mark)
    if not head or len(head) > 3 or any(len(g) != 3 for g in groups[:-1]) or (groups and len(groups[-1]) < 3):
        return None
    # The last group may carry a decimal part: "1,250.50" splits into "1" and "250.50".
    if groups and not re.fullmatch(r"\d{3}([.,]\d+)?", groups[-1]):
        return None
    return head + "".join(groups)


def numbers_in(text: str) -> list[float]:
    """Every number written in the text, in order."""
    return [v for m in _NUMBER.finditer(text) if (v := parse_number(m.group())) is not None]


# --- money -------------------------------------------------------------------

_CURRENCY_WORDS = {
    "€": "EUR", "euro": "EUR", "euros": "EUR", "eur": "EUR",
    "$": "USD", "us$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
    "¥": "JPY", "jpy": "JPY", "yen": "JPY", "chf": "CHF",
    "c$": "CAD", "cad": "CAD", "a$": "AUD", "aud": "AUD", "₹": "INR", "inr": "INR",
    "sek": "SEK", "nok": "NOK", "dkk": "DKK", "pln": "PLN",
}
_MARK = "|".join(re.escape(w) for w in sorted(_CURRENCY_WORDS, key=len, reverse=True))
_AMOUNT = r"[-−]?\d+(?:[.,'\u00a0\u202f]\d+)*"
# WHY the separators in the second look-behind: an amount written before its currency
# starts where its run of digits and separators starts; tried from every digit of
# 40,000 characters of "1." it took a minute.
_MONEY = re.compile(
    rf"(?:(?<![\w])(?P<before>{_MARK})\s?(?P<a1>{_AMOUNT})|"
    rf"(?<![\w.,'\u00a0\u202f])(?P<a2>{_AMOUNT})\s?(?P<after>{_MARK}))(?![\w])",
    re.IGNORECASE)


def money_in(text: str) -> list[tuple[float, str]]:
    """Every amount written with a currency (symbol, ISO code or word), as (amount, ISO code)."""
    found = []
    for m in _MONEY.finditer(text):
        amount = parse_number(m.group("a1") or m.group("a2"))
        mark = (m.group("before") or m.group("after")).casefold()
        if amount is not None:
            found.append((amount, _CURRENCY_WORDS[mark]))
    return found


def parse_money(text: str) -> tuple[float, str] | None:
    """The amount a whole string writes (``"EUR 1,250.00"``), or None."""
    found = money_in(text.strip())
    match = _MONEY.fullmatch(text.strip())
    return found[0] if found and match else None


# --- dates -------------------------------------------------------------------

_MONTHS = {name: n for n, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
     ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
     ("october", "oct"), ("november", "nov"), ("december", "dec")), start=1) for name in names}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_DATE_PATTERNS = (
    ("iso", re.compile(r"(?<!\d)(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?!\d)")),
    ("slash", re.compile(r"(?<!\d)(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<year>\d{4})(?!\d)")),
    ("dmy", re.compile(r"(?<!\d)(?P<day>\d{1,2})[.-](?P<month>\d{1,2})[.-](?P<year>\d{4})(?!\d)")),
    ("named-mdy", re.compile(rf"\b(?P<name>{_MONTH})\.?\s+{_DAY},?\s+(?P<year>\d{{4}})\b", re.IGNORECASE)),
    ("named-dmy", re.compile(rf"\b{_DAY}(?:\s+of)?\s+(?P<name>{_MONTH})\.?,?\s+(?P<year>\d{{4}})\b", re.IGNORECASE)),
)


def dates_in(text: str) -> list[dt.date]:
    """Every date written in the text in a common format (both readings of a slash date), in order."""
    placed = sorted((m.start(), n, d) for kind, pattern in _DATE_PATTERNS for m in pattern.finditer(text)
                    for n, d in enumerate(_readings(kind, m)))
    found: dict[dt.date, None] = {}  # WHY a dict: in order, and linear (a list's "in" made 9,000 dates quadratic)
    for _, _, date in placed:
        found.setdefault(date)
    return list(found)


def parse_date(text: str) -> list[dt.date]:
    """The readings of a string that is one date and nothing else ([] if it is not)."""
    text = text.strip()
    for kind, pattern in _DATE_PATTERNS:
        m = pattern.fullmatch(text)
        if m:
            return _readings(kind, m)
    return []


def _readings(kind: str, m: re.Match[str]) -> list[dt.date]:
    year = int(m.group("year"))
    if kind == "slash":
        a, b = int(m.group("a")), int(m.group("b"))
        pairs = [(a, b), (b, a)]  # month/day and day/month
    elif kind.startswith("named"):
        pairs = [(_MONTHS[m.group("name").casefold()], int(m.group("day")))]
    else:
        pairs = [(int(m.group("month")), int(m.group("day")))]
    dates = []
    for month, day in pairs:
        try:
            date = dt.date(year, month, day)
        except ValueError:
            continue
        if date not in dates:
            dates.append(date)
    return dates
