"""The other process of a split dataset load (``engine.split_load``): the cases of a JSONL file
from a byte offset on, as frames on stdout.

    python -m tracegrade.case.part_reader PATH OFFSET

WHY a module of its own: it reads with ``case.dataset``, which starts it through ``engine.split_load``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tracegrade.case.dataset import part_cases
from tracegrade.engine.split_load import send_frames


def main(argv: list[str]) -> int:
    code = send_frames(part_cases(Path(argv[0]), int(argv[1])), sys.stdout.buffer)
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
