"""`tracegrade history`: the last runs, and the latest next to the previous one."""

from __future__ import annotations

import argparse
from typing import Any

from tracegrade.store import runref
from tracegrade.report import history
from tracegrade.store.runstore import open_store


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "history", help="list the last runs; compare the latest run's aggregates with the previous run's",
        description="The most recent runs in the store, then the latest finished run's per-metric aggregates "
        "next to the previous finished run's on the same dataset, with deltas.",
    )
    p.add_argument("--limit", type=int, default=10, help="how many runs to list (default 10)")
    p.add_argument("--dataset", help="only runs on this dataset (file name, e.g. golden-dataset.json)")
    p.add_argument("--db", help="run store URL (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    with open_store(args.db) as store:
        infos = store.runs(args.limit, args.dataset)
        print(history.runs_table(infos, store.url))
        finished = runref.finished_runs(store, args.dataset)
        if not finished:
            return 0
        same = runref.finished_runs(store, finished[0].dataset)
        if len(same) < 2:
            print(f"\nonly one finished run on {finished[0].dataset}: nothing to compare it with yet")
            return 0
        latest, previous = store.load_run(same[0].run_id), store.load_run(same[1].run_id)
    print()
    print(history.latest_vs_previous(latest, previous))
    return 0



