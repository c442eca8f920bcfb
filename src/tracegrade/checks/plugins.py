"""Checks that other packages add (``core.plugins``): every installed check runs on each
case it ``applies`` to.

    >>> class Short:
    ...     name = "short"
    ...     def applies(self, case): return True
    ...     def __call__(self, case, reply): ...
    >>> isinstance(Short(), Check)
    True
"""

from __future__ import annotations

import functools
from typing import Protocol, runtime_checkable

from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import ConfigError
from tracegrade.core.plugins import load_group
from tracegrade.core.results import CheckResult
from tracegrade.core.trace import Reply

CHECK_GROUP = "tracegrade.checks"


@runtime_checkable
class Check(Protocol):
    """A deterministic check over one case's trace.

    ``applies`` decides from the case alone whether the check has anything to
    say (a check on expected tools skips a case that expects none); the call
    returns one CheckResult and never needs the agent or the judge.
    """

    name: str

    def applies(self, case: GoldenCase) -> bool: ...

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult: ...


@functools.cache
def installed_checks() -> tuple[Check, ...]:
    """Every check installed under the ``tracegrade.checks`` entry point group."""
    checks = []
    for name, obj in sorted(load_group(CHECK_GROUP).items()):
        check = obj() if isinstance(obj, type) else obj
        if not isinstance(check, Check):
            raise ConfigError(f"plugin {name!r} in {CHECK_GROUP}: not a Check (needs name, applies(case), "
                              "__call__(case, reply))")
        checks.append(check)
    return tuple(checks)
