"""Patterns a dataset or a tool schema writes, matched in linear time (RE2).

    >>> pattern = compile_pattern(r"^(a+)+$")
    >>> pattern.search("a" * 100_000 + "!") is None  # instant: Python's re backtracks for ever here
    True
    >>> try:
    ...     compile_pattern(r"(?=a)b")
    ... except PatternError as exc:
    ...     print(exc)
    look-around and back-references are not supported (patterns run on RE2, in linear time): invalid perl operator: (?=

WHY RE2 and not a time budget: a dataset's ``$regex`` and a tool schema's
``pattern`` meet agent output, and Python's backtracking engine is
exponential on patterns like ``^(a+)+$`` (a run hung for good on one case);
RE2 bounds every match by the length of the text, and cannot be stopped
half-way by a clock it does not need. What it gives up, look-around and
back-references, is refused when the dataset loads, with this reason.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

__all__ = ["PatternError", "compile_pattern", "search"]


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why."""


def compile_pattern(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (``.search(text)``, ``.pattern``); PatternError when it cannot be."""
    if not isinstance(pattern, str):
        raise PatternError(f"a pattern must be text, not {type(pattern).__name__}")
    return _compiled(pattern)


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False  # WHY: the reason goes into the PatternError, not onto stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        if any(part in pattern for part in ("(?=", "(?!", "(?<=", "(?<!")) or _backreference(pattern):
            reason = f"look-around and back-references are not supported (patterns run on RE2, in linear time): {reason}"
        raise PatternError(reason) from None


def search(pattern: str, text: str) -> bool:
    """Whether ``text`` contains a match of ``pattern`` (compiled once, then cached)."""
    return compile_pattern(pattern).search(text) is not None


def _backreference(pattern: str) -> bool:
    return any(f"\\{digit}" in pattern for digit in "123456789") or "(?P=" in pattern
