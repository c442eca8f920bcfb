"""`tracegrade report RUN [--html] [-o FILE]`: a finished run as a report."""

from __future__ import annotations

import argparse
from typing import Any
import sys
from pathlib import Path

from tracegrade.core.errors import ConfigError
from tracegrade.report import console, costs, html
from tracegrade.store import runref
from tracegrade.store.runstore import open_store
from tracegrade.core.results import Run

RUNS_DIR = Path(".tracegrade/runs")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report", help="report on a run: console, or one self-contained HTML file",
        description="Report on a finished run. RUN is a run id (or a unique prefix), latest, previous, "
        "or the path of a results.json. With --html, write one HTML file that opens from disk with no network.",
    )
    p.add_argument("run", metavar="RUN", help="run id or prefix, latest, previous, or path/to/results.json")
    p.add_argument("--html", action="store_true", help="write the HTML report instead of printing the console one")
    p.add_argument("-o", "--output", type=Path, help="HTML file to write (default .tracegrade/runs/RUN_ID/report.html)")
    p.add_argument("--db", help="run store URL (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--runs-dir", type=Path, default=RUNS_DIR,
                   help="results folders to fall back on when the store lacks the run (default .tracegrade/runs)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    run = load_run(args.run, args.db, args.runs_dir)
    if not args.html:
        print(console.render(run))
        print(costs.render(run))
        return 0
    path = html.write(run, args.output or args.runs_dir / run.manifest.run_id / "report.html")
    print(f"wrote {path}", file=sys.stderr)
    return 0


def load_run(ref: str, db: str | None = None, runs_dir: Path = RUNS_DIR) -> Run:
    """The run ``ref`` names, resolved as every command resolves it (``runref``);
    a run the store lacks is looked up in the results folders. A broken store
    is an error, never "no run"."""
    if runref.is_file_ref(ref):
        return runref.load(ref, None)
    with open_store(db) as store:
        try:
            return runref.load(ref, store)
        except ConfigError as in_store:
            try:
                return runref.from_folders(ref, runs_dir)
            except ConfigError as in_folders:
                raise ConfigError(f"{in_store}; {in_folders}") from None
