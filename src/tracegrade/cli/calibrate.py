"""`tracegrade calibrate`: measure the judge against human labels and known-bad answers."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from tracegrade.judge.calibrate import Calibration, Judged, Thresholds, calibrate, good_items
from tracegrade.core.errors import ConfigError
from tracegrade.judge.rubric import DEFAULT_RUBRIC, with_weights
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.judge.labels import DEFAULT_LABELS, LabelledItem, balanced_subset, load_labels
from tracegrade.judge.stored_labels import file_reference, label_file, parsed, run_judge, runs_labelled
from tracegrade.store.run_ids import new_run_id, now_iso
from tracegrade.judge.answer_cache import CachedModel
from tracegrade.models import ChatModel, load_model, model_spec
from tracegrade.judge.perturb import BREAK_KINDS
from tracegrade.cli.progress import progress_bar
from tracegrade.report import calibration as report
from tracegrade.store.runstore import CalibrationRecord, open_store


EVERY_RUN = ""  # --from-store with no value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "calibrate", help="validate the judge per metric: good vs bad human labels, known-bad breaks, stability",
        description="Score hand-labelled answers with the judge and measure, per metric, how well it tells the "
        "answers humans call good (4-5) from the bad ones (1-2): AUC, balanced accuracy at the pass threshold, "
        "same-question pairs ordered, plus Spearman rho (and MAE and kappas for 1..5 scales). Every all-good answer "
        "is broken three ways and each break must fail its target metric. A metric that meets every bar may gate; "
        "`tracegrade run` reads the stored result and does not gate on the others. The shipped labels with the "
        "shipped rubric are stored automatically; any other pairing only with --record. Labels given in "
        "`tracegrade view` are read from the store with --from-store. "
        "Exits 0 when every metric may gate, 1 otherwise.",
    )
    p.add_argument("--labels", type=Path,
                   help="human labels (default: the shipped ShopNest human-labels.json); a .jsonl file holds "
                   "attribution labels, one reply a line (knowledge, history, response, label: attributable | "
                   "not attributable), as public sets such as FaithDial's audit give them")
    p.add_argument("--from-store", nargs="?", const=EVERY_RUN, metavar="RUN|DATASET",
                   help="read the labels given in `tracegrade view` from the run store (--db) instead of a file: "
                   "those on one run (id, prefix, latest, previous), on every run of a dataset, or, with no "
                   "value, on every run; each labelled answer is judged as it was stored")
    p.add_argument("--reference", metavar="NAME",
                   help="the annotator whose labels the judge is compared with, on each answer they labelled "
                   "(default: a file's first label of each item; from the store, an answer's one label, and a "
                   "refusal naming the labellers when several labelled the same answer)")
    p.add_argument("--judge-model", help="judge model: local (default), local:/path.gguf, openai:MODEL, "
                   "anthropic:MODEL (env TRACEGRADE_JUDGE_MODEL)")
    p.add_argument("--rubric", type=Path, help="judge rubric file (default: the shipped judge-rubric.md)")
    p.add_argument("--metrics", metavar="NAME[,NAME]",
                   help="judge only these metrics of the rubric (and those they require), each asked as in the "
                   "whole rubric: labels of one metric need one question per answer (a .jsonl of attribution "
                   "labels labels faithfulness only)")
    p.add_argument("--model-cache", type=Path, metavar="FILE",
                   help="keep the judge model's answers in this file (JSON lines) and take them from it when the "
                   "same question comes again: a second calibration of the same labels asks the model nothing "
                   "new (docs/judge.md)")
    p.add_argument("--samples", type=int, default=1, metavar="K",
                   help="judge every input K times with K seeds and report score variance (default 1)")
    p.add_argument("--temperature", type=float, default=0.0,
                   help="judge temperature (default 0, as in a run; raise it to probe stability)")
    p.add_argument("--min-auc", type=float, default=0.7, help="AUC a metric must reach to gate (default 0.7)")
    p.add_argument("--min-balanced-accuracy", type=float, default=0.7,
                   help="balanced accuracy at the pass threshold a metric must reach to gate (default 0.7)")
    p.add_argument("--max-false-fail", type=float, default=0.2,
                   help="share of the good answers a metric may fail at its threshold and still gate (default 0.2)")
    p.add_argument("--min-labels", type=int, default=10,
                   help="good and bad labelled answers (each) a metric needs to gate (default 10)")
    p.add_argument("--min-break-share", type=float, default=0.0,
                   help="share of the known-bad breaks aimed at a metric it must fail to gate (default 0: breaks "
                   "a metric misses are reported as its blind spots)")
    p.add_argument("--fit-thresholds", action="store_true",
                   help="fit each metric's pass threshold on the labels (checked by cross-validation) and store "
                   "it: runs with this judge and rubric then gate at the fitted thresholds")
    p.add_argument("--limit", type=int, metavar="N",
                   help="a balanced subset of N labelled items (good, bad and in-between in turn; a partial calibration)")
    p.add_argument("--break-limit", type=int, metavar="N",
                   help="break only the first N all-good answers (default: every one; a partial calibration)")
    p.add_argument("--no-breaks", action="store_true", help="skip the known-bad breaks (a partial calibration)")
    p.add_argument("--concurrency", type=int, default=1,
                   help="inputs judged at once (default 1: one answer's questions share the model's prompt cache)")
    p.add_argument("--record", action="store_true",
                   help="store the result for `run` to use even with labels or a rubric other than the shipped pair")
    p.add_argument("--db", help="store URL for the result and --from-store's labels "
                   "(env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the full result as JSON")
    p.add_argument("--write-weights", type=Path, metavar="RUBRIC",
                   help="write the weights fitted for each metric with parts (model, code, overlap) into this rubric "
                   "file: the judge then combines that metric's parts by them (docs/judge.md)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    spec, rubric_path = _judge(args)
    model: ChatModel = load_model(spec, role="judge")
    if args.model_cache:
        model = CachedModel(model, args.model_cache)
    rubric = load_rubric(rubric_path)
    if args.metrics:
        rubric = rubric.keep([name.strip() for name in args.metrics.split(",") if name.strip()])
    code = run_calibration(args, Judge(model, rubric, temperature=args.temperature))
    if isinstance(model, CachedModel):
        print(f"tracegrade: {model.hits} judge answers taken from {args.model_cache}, {model.misses} asked",
              file=sys.stderr)
    return code


def run_calibration(args: argparse.Namespace, judge: Judge) -> int:
    """The command with its judge given: tests pass a scripted one."""
    if args.samples < 1 or (args.limit is not None and args.limit < 1):
        raise ConfigError("--samples and --limit must be at least 1")
    labelled, version = _labels(args)
    items = balanced_subset(labelled, args.limit) if args.limit else labelled
    breaks = 0 if args.no_breaks else len(good_items(items)[: args.break_limit]) * len(BREAK_KINDS)
    total = (len(items) + breaks) * args.samples
    print(f"tracegrade: calibrating judge {judge.model.model_id} (rubric {judge.rubric_hash}) on {len(items)} "
          f"labelled answers and {breaks} breaks, {total} judge calls", file=sys.stderr)
    with progress_bar(len(items) + breaks, "inputs") as advance:
        result = asyncio.run(calibrate(
            items, judge, version, samples=args.samples,
            thresholds=Thresholds(args.min_auc, args.min_balanced_accuracy, args.max_false_fail, args.min_labels,
                                  args.min_break_share),
            breaks=not args.no_breaks, break_limit=args.break_limit, concurrency=args.concurrency,
            partial=bool(args.limit), fit_thresholds=args.fit_thresholds,
            on_judged=_reporter(advance, len(items) + breaks),
        ))
    print(report.render(result))
    _save(result, args)
    if args.write_weights:
        _write_weights(result, args.write_weights)
    return 0 if result.passed else 1


def _judge(args: argparse.Namespace) -> tuple[str, Path | None]:
    """The judge's model spec and rubric: the flags (or TRACEGRADE_JUDGE_MODEL); with --from-store,
    what they leave open is the labelled runs' own judge, as their manifests record it."""
    spec, rubric = args.judge_model or os.environ.get("TRACEGRADE_JUDGE_MODEL"), args.rubric
    if args.from_store is None or (spec and rubric):
        return model_spec("judge", spec), rubric
    with open_store(args.db) as store:
        ran = run_judge(store, None if args.from_store == EVERY_RUN else runs_labelled(store, args.from_store))
    if not rubric and ran.rubric and not Path(ran.rubric).is_file():
        raise ConfigError(f"the labelled runs were judged with the rubric {ran.rubric}, not found from here: "
                          "name it, --rubric PATH")
    spec, rubric = spec or ran.model or model_spec("judge"), rubric or (Path(ran.rubric) if ran.rubric else None)
    print(f"tracegrade: the judge of the labelled runs unless told otherwise: {spec}, rubric "
          f"{rubric or 'shipped'}", file=sys.stderr)
    return spec, rubric


def _labels(args: argparse.Namespace) -> tuple[tuple[LabelledItem, ...], str]:
    """The labelled answers and their version: from --labels' file, or from the store (--from-store)."""
    if args.from_store is None:
        items, version = load_labels(args.labels)
        return file_reference(items, args.reference, str(args.labels or DEFAULT_LABELS)), version
    if args.labels is not None:
        raise ConfigError("--labels and --from-store each name the labels: give one")
    with open_store(args.db) as store:
        run_ids = None if args.from_store == EVERY_RUN else runs_labelled(store, args.from_store)
        data = label_file(store, run_ids, args.reference)
        where = store.url
    items, version = parsed(data)
    print(f"tracegrade: {len(items)} answers labelled in tracegrade view, from {where} (labels {version}): "
          f"{data['description']}", file=sys.stderr)
    return items, version


def _reporter(advance: Callable[[], None], total: int) -> Callable[[Judged], None]:
    """Advance the bar; without a terminal (CI, a log file) print one line per judged input instead."""
    done = 0

    def on_judged(judged: Judged) -> None:
        nonlocal done
        done += 1
        advance()
        if not sys.stderr.isatty():
            first = judged.first()
            scores = " ".join(f"{m} {v:.2f}" for m, v in first.items()) if first else "unscored"
            print(f"  [{done}/{total}] {judged.item_id}/{judged.variant}: {scores}", file=sys.stderr, flush=True)

    return on_judged


def _save(result: Calibration, args: argparse.Namespace) -> None:
    record = CalibrationRecord(f"cal-{new_run_id()}", result.judge_model, result.rubric_hash, result.labels_version,
                               result.passed, now_iso(), result.to_json())
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record.result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"tracegrade: wrote {args.json}", file=sys.stderr)
    if not (args.record or _shipped_pair(args)):
        # WHY: a stored calibration decides which metrics gate every run of this judge
        # and rubric; labels from another domain must not decide that silently.
        print("tracegrade: not stored: these labels and this rubric are not the shipped pair; pass --record "
              "to let `tracegrade run` use this calibration", file=sys.stderr)
        return
    with open_store(args.db) as store:
        store.save_calibration(record)
        where = store.url
    print(f"tracegrade: stored calibration {record.calibration_id} in {where}", file=sys.stderr)


def _write_weights(result: Calibration, path: Path) -> None:
    """Each fitted combination's weights into the rubric at ``path``, the rest of it as written."""
    fitted = [m for m in result.metrics if m.combination is not None]
    if not fitted:
        raise ConfigError(f"no metric with parts (yesNo and code: grounding) was fitted: nothing to write to {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the rubric: {exc.strerror or exc}") from None
    for m in fitted:
        assert m.combination is not None
        text = with_weights(text, m.metric, m.combination.weights, str(path))
        shown = ", ".join(f"{k} {v:.2f}" for k, v in m.combination.weights.items())
        print(f"tracegrade: {m.metric}: weights {shown} written to {path}", file=sys.stderr)
    path.write_text(text, encoding="utf-8")


def _shipped_pair(args: argparse.Namespace) -> bool:
    def same(given: str | Path | None, default: Path) -> bool:
        return given is None or Path(given).resolve() == default.resolve()

    # WHY not with --metrics: a calibration of some metrics must not stand for the whole rubric's.
    return args.from_store is None and same(args.labels, DEFAULT_LABELS) and same(args.rubric, DEFAULT_RUBRIC) \
        and not getattr(args, "metrics", None)
