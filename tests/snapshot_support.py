"""One snapshot helper for every report (the console report's test and compare's)."""

from __future__ import annotations

import difflib
import os

from places import SNAPSHOTS


def assert_matches_snapshot(text: str, name: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    stored = path.read_text(encoding="utf-8") if path.exists() else ""
    if text != stored:
        diff = "".join(difflib.unified_diff(stored.splitlines(True), text.splitlines(True),
                                            f"{name} (stored)", f"{name} (now)"))
        raise AssertionError(
            f"the report differs from tests/snapshots/{name}; if the change is intended, review it and run "
            f"the test again with UPDATE_SNAPSHOTS=1\n{diff}")
