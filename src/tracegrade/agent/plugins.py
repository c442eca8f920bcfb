"""The agent under test, and targets that other packages add (``core.plugins``):
``tracegrade run --target myagent`` builds the target from the factory registered as ``myagent``.
"""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points
from typing import Awaitable, Callable

from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import ConfigError
from tracegrade.core.trace import Reply

TARGET_GROUP = "tracegrade.targets"

# The agent under test is a plain async callable: a case in, a Reply out.
Target = Callable[[GoldenCase], Awaitable[Reply]]
TargetFactory = Callable[..., Target]


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
