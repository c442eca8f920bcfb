"""Redaction of secrets and personal data before anything is stored or exported.

    >>> redact("key sk-abcdefghijklmnop1234 mail ann@example.com")
    'key [REDACTED_KEY] mail [REDACTED_EMAIL]'
"""

from __future__ import annotations

import re

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}"), "Bearer [REDACTED_TOKEN]"),
    (re.compile(r"\b(?:sk|pk|rk|key|api|tok)[-_][A-Za-z0-9_-]{12,}\b"), "[REDACTED_KEY]"),
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), "[REDACTED_EMAIL]"),
    (re.compile(r"\b(?:\d[ -]?){13,19}\b"), "[REDACTED_CARD]"),
    (re.compile(r"(?<![\w-])\+?\d{1,3}[ .-]?\(?\d{2,4}\)?[ .-]?\d{3,4}[ .-]?\d{3,4}\b"), "[REDACTED_PHONE]"),
]


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with known secret values and anything that looks like a key,
    token, e-mail, card or phone number replaced by a marker."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[REDACTED_KEY]")
    for pattern, marker in _PATTERNS:
        text = pattern.sub(marker, text)
    return text
