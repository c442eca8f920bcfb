"""Extension points: checks and targets that other packages add.

A package adds to tracegrade without editing it, through the standard entry
points (the way pytest loads plugins), in its ``pyproject.toml``::

    [project.entry-points."tracegrade.checks"]
    cites_policy = "mypkg.checks:CitesPolicy"      # a Check class (built with no arguments) or instance

    [project.entry-points."tracegrade.targets"]
    myagent = "mypkg.agent:make_target"           # a factory: (**options) -> Target

``tracegrade run --target myagent`` then builds the target from the factory,
and every installed check runs on each case it ``applies`` to.

    >>> class Short:
    ...     name = "short"
    ...     def applies(self, case): return True
    ...     def __call__(self, case, reply): ...
    >>> isinstance(Short(), Check)
    True
"""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Awaitable, Callable, Protocol, runtime_checkable

from tracegrade.core.errors import ConfigError
from tracegrade.core.results import CheckResult
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase

CHECK_GROUP = "tracegrade.checks"
TARGET_GROUP = "tracegrade.targets"

# The agent under test is a plain async callable: a case in, a Reply out.
Target = Callable[[GoldenCase], Awaitable[Reply]]
TargetFactory = Callable[..., Target]


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


def _load(group: str) -> dict[str, Any]:
    loaded = {}
    for point in entry_points(group=group):
        try:
            loaded[point.name] = point.load()
        except Exception as exc:  # a broken plugin is named, not a traceback from deep inside
            raise ConfigError(f"plugin {point.name!r} ({point.value}) in {group}: cannot load: "
                              f"{type(exc).__name__}: {exc}") from None
    return loaded


@functools.cache
def installed_checks() -> tuple[Check, ...]:
    """Every check installed under the ``tracegrade.checks`` entry point group."""
    checks = []
    for name, obj in sorted(_load(CHECK_GROUP).items()):
        check = obj() if isinstance(obj, type) else obj
        if not isinstance(check, Check):
            raise ConfigError(f"plugin {name!r} in {CHECK_GROUP}: not a Check (needs name, applies(case), "
                              "__call__(case, reply))")
        checks.append(check)
    return tuple(checks)


@functools.cache
def installed_targets() -> dict[str, EntryPoint]:
    """Target entry points by name, from the ``tracegrade.targets`` group, not yet
    loaded: a run imports only the agent it runs."""
    return {point.name: point for point in entry_points(group=TARGET_GROUP)}


def load_target_factory(name: str) -> TargetFactory:
    """The factory registered as ``name``; ConfigError when it cannot be imported."""
    point = installed_targets()[name]
    try:
        return point.load()  # type: ignore[no-any-return]
    except Exception as exc:
        raise ConfigError(f"plugin {name!r} ({point.value}) in {TARGET_GROUP}: cannot load: "
                          f"{type(exc).__name__}: {exc}") from None
