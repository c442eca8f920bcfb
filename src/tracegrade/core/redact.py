"""Redaction of secrets and personal data before anything is stored or exported.

    >>> redact("key sk-abcdefghijklmnop1234 mail ann@example.com")
    'key [REDACTED_KEY] mail [REDACTED_EMAIL]'
"""

from __future__ import annotations

import re

_CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")

# Order matters: tokens and keys before the number patterns, so a key's digits
# are never half-redacted as a phone number.
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}"), "Bearer [REDACTED_TOKEN]"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}"), "[REDACTED_TOKEN]"),
    # WHY a digit is required: "key-performance-indicators" is prose, not a key.
    (re.compile(r"\b(?:sk|pk|rk|key|api|tok)[-_](?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{12,}\b"), "[REDACTED_KEY]"),
    (re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}\b"), "[REDACTED_KEY]"),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), "[REDACTED_KEY]"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "[REDACTED_KEY]"),
    (re.compile(r"(?i)\b(api[_-]?key|(?:client[_-]?)?secret|password|passwd|(?:access[_-]?|auth[_-]?)?token)"
                r"(\s*[:=]\s*)[^\s\"',;]+"),
     r"\1\2[REDACTED_KEY]"),
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), "[REDACTED_EMAIL]"),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"), "[REDACTED_IP]"),
    (re.compile(r"(?<![\w-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)|\d{2,4})[ .-]?\d{3,4}[ .-]?\d{3,4}(?![\w-])"),
     "[REDACTED_PHONE]"),
]

# Phone forms the pattern above misses: international numbers in small groups
# ("+33 6 12 34 56 78") and national numbers with a trunk 0 ("07700 900123").
# WHY a digit count: "+1 2" or "0 12" in prose are not phone numbers.
_PHONE_GROUPS = re.compile(r"(?<![\w-])(?:\+\d{1,3}(?:[ .-]?\d{1,5}){2,6}|0\d{3,4}[ .-]\d{5,7})(?![\w-])")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    # WHY Luhn: a 13-digit millisecond timestamp is not a card number.
    digits = re.sub(r"\D", "", match.group())
    return "[REDACTED_CARD]" if _luhn_ok(digits) else match.group()


def _phone(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group())
    return "[REDACTED_PHONE]" if 9 <= len(digits) <= 15 else match.group()


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with known secret values and anything that looks like a key,
    token, e-mail, card, IP address or phone number replaced by a marker."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[REDACTED_KEY]")
    text = _CARD.sub(_card, text)
    for pattern, marker in _PATTERNS:
        text = pattern.sub(marker, text)
    return _PHONE_GROUPS.sub(_phone, text)
