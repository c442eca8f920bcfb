"""The other process of a split dataset load (``eval.load_part``): the cases of a JSONL file
from a byte offset on, as frames on stdout.

    python -m tracegrade.eval.part_reader PATH OFFSET

WHY a module of its own: it reads with ``eval.dataset``, which starts it through ``eval.load_part``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tracegrade.eval.dataset import part_cases
from tracegrade.eval.load_part import send_frames


def main(argv: list[str]) -> int:
    code = send_frames(part_cases(Path(argv[0]), int(argv[1])), sys.stdout.buffer)
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
