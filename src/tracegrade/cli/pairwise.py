"""`tracegrade pairwise RUN_A RUN_B`: which run's answers does the judge prefer?"""

from __future__ import annotations

import argparse
from typing import Any
import asyncio
import json
import sys
from pathlib import Path

from tracegrade.store import runref
from tracegrade.case.dataset import load_dataset
from tracegrade.models import ChatModel, load_model, model_spec
from tracegrade.judge.pairwise import compare_runs, load_pairwise_rubric
from tracegrade.outputs import json_report
from tracegrade.report import pairwise as report
from tracegrade.core.results import Run
from tracegrade.store.runstore import open_store


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "pairwise", help="compare two runs answer by answer with the judge, in both orders",
        description="For every case both runs answered, show the judge the two answers anonymised and ask which "
        "is better (or a tie), once in each order. A win counts only when both orders agree. Prints wins, ties, "
        "losses, the position flip rate and a sign-test p-value.",
    )
    p.add_argument("run_a", help="run A: a results.json, a run folder, or a run id (looked up under --runs, "
                   "then in the run store)")
    p.add_argument("run_b", help="run B, in the same forms")
    p.add_argument("--judge-model", help="judge model: local (default), local:/path.gguf, openai:MODEL, "
                   "anthropic:MODEL (env TRACEGRADE_JUDGE_MODEL)")
    p.add_argument("--rubric", type=Path, help="pairwise rubric file (default: the shipped pairwise-rubric.md)")
    p.add_argument("--dataset", type=Path, help="golden dataset, to show the judge each case's golden answer")
    p.add_argument("--concurrency", type=int, default=2, help="judge calls in flight (default 2)")
    p.add_argument("--runs", type=Path, default=Path(".tracegrade/runs"),
                   help="folder of run results to look run ids up in (default .tracegrade/runs)")
    p.add_argument("--db", help="run store URL for run ids not found under --runs (env TRACEGRADE_DB)")
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the comparison as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    return run_pairwise(args, load_model(model_spec("judge", args.judge_model), role="judge"))


def run_pairwise(args: argparse.Namespace, model: ChatModel) -> int:
    """The command with its judge model given: tests pass a scripted one."""
    run_a, run_b = load_run(args.run_a, args.runs, args.db), load_run(args.run_b, args.runs, args.db)
    golden = {c.id: c for c in load_dataset(args.dataset).cases} if args.dataset else None
    print(f"tracegrade: pairwise {run_a.manifest.run_id} vs {run_b.manifest.run_id} with judge {model.model_id}",
          file=sys.stderr)
    result = asyncio.run(compare_runs(run_a, run_b, model, load_pairwise_rubric(args.rubric), golden,
                                      concurrency=args.concurrency))
    print(report.render(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


def load_run(ref: str, runs_folder: Path, db: str | None) -> Run:
    """A run from a results.json (or its folder), a run id under ``runs_folder``, or the run store
    (an id, a unique prefix, ``latest`` or ``previous``)."""
    for path in (Path(ref) / "results.json", runs_folder / ref / "results.json"):
        if not runref.is_file_ref(ref) and path.is_file():
            return json_report.read(path)
    if runref.is_file_ref(ref):
        return runref.load(ref, None)
    with open_store(db) as store:
        return runref.load(ref, store)
