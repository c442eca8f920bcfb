"""`tracegrade calibrate`: measure the judge against human labels and known-bad answers."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from tracegrade.judge.calibrate import Calibration, Thresholds, calibrate, good_items
from tracegrade.core.errors import ConfigError
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.judge.labels import DEFAULT_LABELS, load_labels
from tracegrade.eval.provenance import new_run_id, now_iso
from tracegrade.models import load_model, model_spec
from tracegrade.judge.perturb import BREAK_KINDS
from tracegrade.eval.progress import progress_bar
from tracegrade.report import calibration as report
from tracegrade.store.runstore import CalibrationRecord, open_store


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate", help="validate the judge: agreement with human labels, known-bad breaks, stability",
        description="Score hand-labelled answers with the judge and compare with the humans (Spearman rho, MAE, "
        "exact agreement, kappa, confusion matrices); break every all-5 answer three ways and check each break "
        "lowers its target metric. The result is stored with the judge model id and rubric hash, so `run` can "
        "warn (or, with --require-calibrated, refuse) when an uncalibrated judge gates. "
        "Exits 0 when every threshold is met, 1 when any is missed.",
    )
    p.add_argument("--labels", type=Path, default=DEFAULT_LABELS, help="human labels (default: the shipped ShopNest human-labels.json)")
    p.add_argument("--judge-model", help="judge model: local (default), local:/path.gguf, openai:MODEL, "
                   "anthropic:MODEL (env TRACEGRADE_JUDGE_MODEL)")
    p.add_argument("--rubric", type=Path, help="judge rubric file (default: the shipped judge-rubric.md)")
    p.add_argument("--samples", type=int, default=1, metavar="K",
                   help="judge every input K times with K seeds and report score variance (default 1)")
    p.add_argument("--temperature", type=float, default=0.0,
                   help="judge temperature (default 0, as in a run; raise it to probe stability)")
    p.add_argument("--min-rho", type=float, default=0.8, help="Spearman rho each metric must reach (default 0.8)")
    p.add_argument("--max-mae", type=float, default=0.2, help="mean absolute error each metric may have (default 0.2)")
    p.add_argument("--min-drop", type=float, default=2.0, help="points each break must take off its target (default 2)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N labelled items (a partial calibration)")
    p.add_argument("--break-limit", type=int, metavar="N",
                   help="break only the first N all-5 answers (default: every one; a partial calibration)")
    p.add_argument("--no-breaks", action="store_true", help="skip the known-bad breaks (a partial calibration)")
    p.add_argument("--concurrency", type=int, default=2, help="judge calls in flight (default 2)")
    p.add_argument("--db", help="store URL for the result (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the full result as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    judge = Judge(load_model(model_spec("judge", args.judge_model), role="judge"), load_rubric(args.rubric),
                  temperature=args.temperature)
    return run_calibration(args, judge)


def run_calibration(args: argparse.Namespace, judge: Judge) -> int:
    """The command with its judge given: tests pass a scripted one."""
    if args.samples < 1 or (args.limit is not None and args.limit < 1):
        raise ConfigError("--samples and --limit must be at least 1")
    items, version = load_labels(args.labels)
    items = items[: args.limit] if args.limit else items
    breaks = 0 if args.no_breaks else len(good_items(items)[: args.break_limit]) * len(BREAK_KINDS)
    total = (len(items) + breaks) * args.samples
    print(f"tracegrade: calibrating judge {judge.model.model_id} (rubric {judge.rubric_hash}) on {len(items)} "
          f"labelled answers and {breaks} breaks, {total} judge calls", file=sys.stderr)
    with progress_bar(len(items) + breaks, "inputs") as advance:
        result = asyncio.run(calibrate(
            items, judge, version, samples=args.samples,
            thresholds=Thresholds(args.min_rho, args.max_mae, args.min_drop), breaks=not args.no_breaks,
            break_limit=args.break_limit, concurrency=args.concurrency, partial=bool(args.limit),
            on_judged=_reporter(advance, len(items) + breaks),
        ))
    print(report.render(result))
    _save(result, args)
    return 0 if result.passed else 1


def _reporter(advance, total: int):
    """Advance the bar; without a terminal (CI, a log file) print one line per judged input instead."""
    done = 0

    def on_judged(judged) -> None:
        nonlocal done
        done += 1
        advance()
        if not sys.stderr.isatty():
            first = judged.first()
            scores = " ".join(str(first[m]) for m in first) if first else "unscored"
            print(f"  [{done}/{total}] {judged.item_id}/{judged.variant}: {scores}", file=sys.stderr, flush=True)

    return on_judged


def _save(result: Calibration, args: argparse.Namespace) -> None:
    record = CalibrationRecord(f"cal-{new_run_id()}", result.judge_model, result.rubric_hash, result.labels_version,
                               result.passed, now_iso(), result.to_json())
    with open_store(args.db) as store:
        store.save_calibration(record)
        where = store.url
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record.result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"tracegrade: stored calibration {record.calibration_id} in {where}"
          + (f"; wrote {args.json}" if args.json else ""), file=sys.stderr)
