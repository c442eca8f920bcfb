"""Extension points: what other packages add, through the standard entry points (the way
pytest loads plugins), in their ``pyproject.toml``::

    [project.entry-points."tracegrade.checks"]
    cites_policy = "mypkg.checks:CitesPolicy"      # a Check class (built with no arguments) or instance

    [project.entry-points."tracegrade.targets"]
    myagent = "mypkg.agent:make_target"           # a factory: (**options) -> Target

The checks are loaded by ``checks.plugins``, the targets by ``agent.plugins``.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from tracegrade.core.errors import ConfigError


def load_group(group: str) -> dict[str, Any]:
    """Every entry point of ``group`` loaded, by name; ConfigError naming a plugin that cannot load."""
    loaded = {}
    for point in entry_points(group=group):
        try:
            loaded[point.name] = point.load()
        except Exception as exc:  # a broken plugin is named, not a traceback from deep inside
            raise ConfigError(f"plugin {point.name!r} ({point.value}) in {group}: cannot load: "
                              f"{type(exc).__name__}: {exc}") from None
    return loaded
