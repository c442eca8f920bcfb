"""The files tracegrade ships as defaults, as package data (found in a wheel
as well as in a checkout): the judge rubric, the pairwise rubric, the gate
thresholds and the example human labels. ``tracegrade init`` copies them into
a user's project to edit."""

from __future__ import annotations

from pathlib import Path

DIR = Path(__file__).parent


def path(name: str) -> Path:
    """The shipped default file ``name`` (e.g. ``"judge-rubric.md"``)."""
    return DIR / name
