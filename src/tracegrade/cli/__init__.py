"""`tracegrade`: thin; parses flags and calls library functions.

Each command lives in ``tracegrade.cli.NAME`` with a ``register(subparsers)``
that adds its parser and sets ``handler``; flags map one-to-one to keyword
arguments of the library function it calls.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tracegrade.core.errors import TracegradeError

COMMANDS = ("run", "history", "compare", "calibrate", "pairwise", "report", "monitor")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracegrade",
        description="Evaluate tool-using LLM agents by what they did, not only by what they said.",
    )
    subparsers = parser.add_subparsers(required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"tracegrade.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except TracegradeError as exc:
        print(f"tracegrade: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tracegrade: interrupted", file=sys.stderr)
        return 130

