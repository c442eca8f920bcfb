"""Where an agent's exception came from, in one line a report can show.

    >>> def agent():
    ...     raise ValueError("no such city")
    >>> try:
    ...     agent()
    ... except ValueError as exc:
    ...     print(raised_at(exc).startswith(" (at "), "in agent" in raised_at(exc))
    True True

The innermost frames of the user's own code (and the libraries it called),
not tracegrade's or the standard library's: ``(at agent.py:12 in lookup <-
agent.py:30 in answer)``. Paths under the working directory are relative.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from pathlib import Path

_OURS = str(Path(__file__).resolve().parents[1])
_STDLIB = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


def raised_at(exc: BaseException, frames: int = 2) -> str:
    """`` (at FILE:LINE in FUNCTION <- ...)`` for the innermost ``frames`` frames
    outside tracegrade and the standard library; "" when there are none (or when
    the traceback cannot be read: this runs at the case boundary, which must not fail)."""
    try:
        return _where(exc, frames)
    except Exception:
        return ""


def _where(exc: BaseException, frames: int) -> str:
    mine = [f for f in traceback.extract_tb(exc.__traceback__, limit=-200) if _theirs(f.filename)]
    user = [f for f in mine if "site-packages" not in f.filename] or mine
    if not user:
        return ""
    shown = [f"{_short(f.filename)}:{f.lineno} in {f.name}" for f in reversed(user[-frames:])]
    return f" (at {' <- '.join(shown)})"


def _theirs(filename: str) -> bool:
    resolved = os.path.abspath(filename)
    return not resolved.startswith(_OURS) and not resolved.startswith(_STDLIB) and not filename.startswith("<frozen")


def _short(filename: str) -> str:
    resolved = os.path.abspath(filename)
    here = os.getcwd()
    return os.path.relpath(resolved, here) if resolved.startswith(here + os.sep) else resolved
