"""`tracegrade report RUN [--html] [-o FILE]`: a finished run as a report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tracegrade.core.errors import StoreError, TracegradeError
from tracegrade.report import console, html, json_report
from tracegrade.core.results import Run

RUNS_DIR = Path(".tracegrade/runs")


def register(subparsers) -> None:
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
        return 0
    path = html.write(run, args.output or args.runs_dir / run.manifest.run_id / "report.html")
    print(f"wrote {path}", file=sys.stderr)
    return 0


def load_run(ref: str, db: str | None = None, runs_dir: Path = RUNS_DIR) -> Run:
    """The run ``ref`` names: a results.json path, else from the run store, else from
    the newest results folders (sorted by run id, which starts with the UTC time)."""
    path = Path(ref)
    if path.suffix == ".json" or path.is_file():
        if not path.is_file():
            raise TracegradeError(f"no results file {path}")
        return json_report.read(path)
    run = _from_store(ref, db)
    if run is not None:
        return run
    folders = sorted(p.parent.name for p in Path(runs_dir).glob("*/results.json"))
    wanted = _pick(ref, folders)
    if wanted is None:
        raise TracegradeError(f"no run {ref!r} in the run store or in {runs_dir}")
    return json_report.read(Path(runs_dir) / wanted / "results.json")


def _from_store(ref: str, db: str | None) -> Run | None:
    try:
        from tracegrade.store.runstore import open_store
    except ImportError:  # a build without the run store
        return None
    try:
        with open_store(db) as store:
            if ref in ("latest", "previous"):
                ids = [info.run_id for info in reversed(store.runs(limit=2))]
            else:
                ids = store.run_ids(ref)
            wanted = _pick(ref, ids)
            return store.load_run(wanted) if wanted else None
    except StoreError:
        return None


def _pick(ref: str, ids_oldest_first: list[str]) -> str | None:
    if ref == "latest":
        return ids_oldest_first[-1] if ids_oldest_first else None
    if ref == "previous":
        return ids_oldest_first[-2] if len(ids_oldest_first) > 1 else None
    matches = [i for i in ids_oldest_first if i.startswith(ref)]
    if len(matches) > 1:
        raise TracegradeError(f"run {ref!r} is ambiguous: {', '.join(matches[:5])}")
    return matches[0] if matches else None
