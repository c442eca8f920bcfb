"""`tracegrade grade TRACES --dataset DATASET`: grade traces recorded elsewhere,
without running the agent again.

Reads tracegrade's JSONL of Replies and OTLP JSON exports (GenAI or
OpenInference spans; their OTLP logs as the spans' events), joins what belongs
together (a trace split over files, a conversation's turns by session id, fragments
by conversation id), matches each to its case (a case id, else the exact question),
says what did not match and which cases are ambiguous (two runs, fragments, a turn
apart: not graded, exit 2), then checks, judges, stores and reports exactly like
``tracegrade run`` (the same flags, report and exit codes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracegrade.agent.joined import Matched


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "grade", help="grade recorded traces (JSONL of Replies, OTLP JSON) against a dataset, without the agent",
        description="Grade traces recorded elsewhere against DATASET's cases without running the agent: "
        "tracegrade's JSONL of Replies (one per line, with its caseId) or OTLP JSON exports of an agent's "
        "OpenTelemetry spans (GenAI or OpenInference conventions, one trace per case; a span attribute "
        "tracegrade.case_id names the case, else the question must equal the case's). Traces that match no "
        "case are listed; cases without a trace are left out of the run. The run is checked, judged, stored "
        "and reported exactly like `tracegrade run`; exit 0 when every graded case passed, 1 when some "
        "failed, 2 for bad input (also when no trace matches any case).",
    )
    p.add_argument("traces", type=Path, nargs="+", help="trace files (.jsonl, .json)")
    p.add_argument("--dataset", type=Path, required=True, help="the dataset the traces answer (.json, .jsonl, .yaml)")
    p.add_argument("--judge-model", help="judge model (env TRACEGRADE_JUDGE_MODEL; default local)")
    p.add_argument("--rubric", type=Path, help="judge rubric file (default: the shipped judge-rubric.md)")
    p.add_argument("--checks-only", action="store_true", help="skip the judge: only the checks by code")
    p.add_argument("--concurrency", type=int, default=4, help="cases judged at once (default 4)")
    p.add_argument("--db", help="run store URL (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--out", type=Path, default=Path(".tracegrade/runs"),
                   help="folder for results.json, junit.xml, summary.md (default .tracegrade/runs)")
    p.add_argument("--quiet", action="store_true", help="print only the final report")
    p.add_argument("--latest", action="store_true",
                   help="a case with traces of several runs: grade the run that began last (default: the case is "
                   "not graded, naming them)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from tracegrade.agent.joined import match, replay_target
    from tracegrade.agent.recorded import load_recorded
    from tracegrade.cli import run
    from tracegrade.core.errors import DatasetError
    from tracegrade.case.dataset import load_dataset
    from tracegrade.store.runstore import open_store

    dataset = load_dataset(args.dataset)
    matched = match(dataset.cases, load_recorded(args.traces), latest=args.latest)
    _say_not_graded(matched)
    if not matched.replies:
        raise DatasetError(f"no trace in {', '.join(map(str, args.traces))} can be graded as a case of {args.dataset}")
    missing = [c.id for c in dataset.cases if c.id not in matched.replies and c.id not in matched.unscored]
    if missing:
        print(f"tracegrade: {len(missing)} case(s) have no trace and are not graded: {', '.join(missing[:20])}"
              + (" ..." if len(missing) > 20 else ""), file=sys.stderr)
    args = _as_run_args(args)
    # WHY the ungradable cases too: they are rows of the run, unscored with the reason, not only a message
    graded = [c.id for c in dataset.cases if c.id in matched.replies or c.id in matched.unscored]
    selected = dataset.select(graded) if len(graded) < len(dataset.cases) else dataset
    with open_store(args.db) as store:
        judge = None if args.checks_only else run._judge(args)
        judge = run._check_calibration(store, judge, args.require_calibrated)
        evaluation = run._execute(args, store, selected, judge, run._settings(args),
                                 replay_target(matched.replies, matched.unscored))
    return run._report(args, evaluation)


SHOWN = 20  # "not graded" lines printed; WHY a limit: an agent's thread pool can orphan thousands of traces


def _say_not_graded(matched: Matched) -> None:
    """The traces not graded (their lines redacted by ``match``), the first SHOWN of them,
    and once, the fix for orphaned ones."""
    from tracegrade.core.from_otel import ORPHAN_FIX

    for case_id, why in list(matched.unscored.items())[:SHOWN]:
        print(f"tracegrade: unscored, not graded: case {case_id}: {why}", file=sys.stderr)
    if len(matched.unscored) > SHOWN:
        print(f"tracegrade: unscored, not graded: {len(matched.unscored) - SHOWN:,} more case(s)", file=sys.stderr)
    lines = matched.unmatched + matched.duplicates
    for line in lines[:SHOWN]:
        print(f"tracegrade: not graded: {line}", file=sys.stderr)
    if len(lines) > SHOWN:
        print(f"tracegrade: not graded: {len(lines) - SHOWN:,} more trace(s)", file=sys.stderr)
    if matched.orphaned:
        print(f"tracegrade: {matched.orphaned:,} orphaned trace(s) not graded; fix: {ORPHAN_FIX}", file=sys.stderr)


def _as_run_args(args: argparse.Namespace) -> argparse.Namespace:
    """``tracegrade run``'s flags at their defaults, with the ones given here."""
    from tracegrade.cli import run

    parser = argparse.ArgumentParser()
    run.register(parser.add_subparsers())
    defaults = parser.parse_args(["run", str(args.dataset)])
    given = {k: v for k, v in vars(args).items() if k not in ("handler", "traces")}
    return argparse.Namespace(**{**vars(defaults), **given, "target": "recorded:" + ",".join(map(str, args.traces))})
