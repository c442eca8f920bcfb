"""`tracegrade labels`: the labels given in `tracegrade view`, written as the labels file `calibrate` reads."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "labels", help="export the labels given in `tracegrade view` as a labels file for `tracegrade calibrate`",
        description="Write the answers people labelled good or bad in `tracegrade view` (a case page or a run's "
        "label queue) as the labels file `tracegrade calibrate --labels` reads: each answer with its question, "
        "the evidence the run's judge saw and the reference, and each person's labels and notes (skips left out). "
        "`tracegrade calibrate --from-store` reads the same labels without a file.",
    )
    p.add_argument("ref", nargs="?", metavar="RUN|DATASET",
                   help="the labels on one run (id, prefix, latest, previous) or on every run of a dataset "
                   "(default: on every run)")
    p.add_argument("--reference", metavar="NAME",
                   help="the annotator whose label comes first on each answer they labelled: the one `calibrate "
                   "--labels` compares the judge with (needed when several people labelled the same answer)")
    p.add_argument("--db", help="run store URL (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--out", type=Path, metavar="PATH", help="write the file here (default: print it)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from tracegrade.judge.stored_labels import label_file, runs_labelled
    from tracegrade.store.runstore import open_store

    with open_store(args.db) as store:
        data = label_file(store, runs_labelled(store, args.ref) if args.ref else None, args.reference)
        where = store.url
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    print(f"tracegrade: {len(data['items'])} labelled answers from {where}"
          + (f" written to {args.out}" if args.out else ""), file=sys.stderr)
    return 0
