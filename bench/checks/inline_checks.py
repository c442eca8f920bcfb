"""How long the built-in checks of one case take on the event loop, by reply size.

    python bench/checks/inline_checks.py [--chars 8000,30000]

One case with a tool-schema ``pattern`` and a ``$regex`` (``^(a+)+$``) on its call's
argument, and ``$money``, ``$date`` and ``$number`` expectations on its answer; the
reply's answer and argument are each ``--chars`` characters of text that is
hostile to the readers. Prints the best of five ``run_checks`` calls per text: what
a case below ``run.runner.INLINE_CHARS`` (both texts together) may block the loop.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tracegrade.core.trace import Reply, ToolCall
from tracegrade.checks.builtin import run_checks
from tracegrade.case.dataset import load_dataset

EVIL = r"^(a+)+$"
DATASET = {"name": "d", "tools": [{"name": "lookup", "writes": False, "parameters": {
    "type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}}}}],
    "cases": [{"id": "a", "question": "q",
               "calls": {"expected": [{"tool": "lookup", "arguments": {"code": {"$regex": EVIL}}}]},
               "answer": {"include": [{"$money": {"amount": 1250, "currency": "EUR"}}, {"$date": "2026-05-01"},
                                      {"$number": 12}]}}]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", default="8000,30000")
    sizes = [int(n) for n in parser.parse_args().chars.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "d.json"
        path.write_text(json.dumps(DATASET))
        case = load_dataset(path).cases[0]
    for size in sizes:
        for unit in ("1.", "a.", "ab ", "1 "):
            reply = Reply(answer=unit * (size // len(unit)),
                          tool_calls=(ToolCall(name="lookup", arguments={"code": "a" * size + "!"}),))
            best = float("inf")
            for _ in range(5):
                started = time.perf_counter()
                run_checks(case, reply)
                best = min(best, time.perf_counter() - started)
            print(f"answer {size:,} chars of {unit!r} + argument {size:,} chars: {best * 1000:.1f} ms")


if __name__ == "__main__":
    main()
