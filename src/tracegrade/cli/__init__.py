"""`tracegrade`: thin; parses flags and calls library functions.

Each command lives in ``tracegrade.cli.NAME`` with a ``register(subparsers)``
that adds its parser and sets ``handler``; flags map one-to-one to keyword
arguments of the library function it calls.

WHY the table of one-line helps: only the command being run is imported, so
``tracegrade --help`` and ``tracegrade run --help`` load none of the heavy
modules (models, telemetry, numpy) the other commands need.

``main()`` without arguments is the program (the ``tracegrade`` script, ``python -m
tracegrade.cli``): once its command has returned it ends the process at once
(``end_process``). With arguments (tests, a caller's own code) it returns the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from typing import Any, NoReturn

from tracegrade.core.errors import TracegradeError

COMMANDS = {
    "init": "write a starter evals/ folder (dataset, rubric, gate file) into this project",
    "run": "run a golden dataset against an agent, check traces, judge answers",
    "grade": "grade recorded traces (JSONL of Replies, OTLP JSON) against a dataset, without the agent",
    "history": "list the last runs; compare the latest run's aggregates with the previous run's",
    "compare": "compare two runs case by case and gate the candidate",
    "calibrate": "validate the judge: agreement with human labels, known-bad breaks, stability",
    "labels": "export the labels given in `tracegrade view` as a labels file for `tracegrade calibrate`",
    "pairwise": "compare two runs answer by answer with the judge, in both orders",
    "report": "report on a run: console, or one self-contained HTML file",
    "monitor": "serve a dashboard over the production traces in the local span store",
    "serve-model": "serve the local model as an OpenAI-compatible endpoint (chat completions, tools)",
    "view": "serve a local web UI over the runs, cases, traces, comparisons and production traces",
}


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the command it names is loaded in full
    (none for ``tracegrade --help``); without, every command."""
    parser = argparse.ArgumentParser(
        prog="tracegrade",
        description="Evaluate tool-using LLM agents by what they did, not only by what they said.",
        epilog="Run `tracegrade COMMAND --help` for a command's flags. Docs: README.md and docs/.",
    )
    subparsers = parser.add_subparsers(required=True, metavar="COMMAND")
    chosen = _command_in(argv)
    for name, summary in COMMANDS.items():
        if chosen is None or name == chosen:
            importlib.import_module(f"tracegrade.cli.{name.replace('-', '_')}").register(subparsers)
        else:
            subparsers.add_parser(name, help=summary)
    return parser


def _command_in(argv: list[str] | None) -> str | None:
    if argv is None:
        return None
    words = [a for a in argv if not a.startswith("-")]
    return words[0] if words and words[0] in COMMANDS else ""


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` names (default: the process's own arguments) and return its exit code;
    without ``argv``, the process then ends with that code (``end_process``)."""
    if argv is None:
        end_process(_command(sys.argv[1:]))
    return _command(argv)


def _command(argv: list[str]) -> int:
    args = build_parser(argv).parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        code: int = args.handler(args)
        return code
    except TracegradeError as exc:
        from tracegrade.core.redact import redact_secrets  # a driver's message may quote a secret

        print(f"tracegrade: error: {redact_secrets(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tracegrade: interrupted", file=sys.stderr)
        return 130


def end_process(code: int) -> NoReturn:
    """End this process with ``code`` the way the interpreter would, less its teardown.

    What the interpreter does at exit that anyone can see is done here too: the functions
    registered with ``atexit`` run (logging's flush, an exporter's last batch, coverage), and
    every file still open for writing is flushed, the standard streams last. What is skipped
    is freeing every object and module one by one: 0.3 s of a 10 s run with the openai SDK
    imported (bench/run/peer_limit.py), the same every run. When a thread that the interpreter
    would wait for is still running (not a daemon), Python exits as usual (``sys.exit``)."""
    import atexit
    import os
    import threading

    main_thread = threading.main_thread()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main_thread):
        sys.exit(code)
    atexit._run_exitfuncs()
    _flush_open_files()
    os._exit(code)


def _flush_open_files() -> None:
    """Flush every file object still open for writing, as closing it at teardown would.
    WHY by exact type: ``isinstance`` asks a lazy proxy's ``__class__``, which imports its module."""
    import gc
    import io

    kinds = {io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom}
    gc.unfreeze()  # WHY: gc.get_objects leaves out what gc.freeze() set aside (cli/run.py freezes)
    # WHY text first: a text file's buffer flushes into the binary file under it
    found = sorted((o for o in gc.get_objects() if type(o) in kinds), key=lambda o: type(o) is not io.TextIOWrapper)
    for stream in (*found, sys.stdout, sys.stderr):
        try:
            if not stream.closed:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe or a detached stream: the interpreter would drop it too
            pass


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """A warning on the console as one line a user reads ("tracegrade: warning: ..."),
    not Python's file, line and source: it speaks of their run, not of our code."""
    from tracegrade.core.redact import redact_secrets

    print(f"tracegrade: warning: {redact_secrets(str(message))}", file=file or sys.stderr)
