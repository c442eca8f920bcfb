"""`tracegrade compare BASE CANDIDATE`: a measured verdict with an exit code."""

from __future__ import annotations

import argparse
from typing import Any
import dataclasses
import sys
from pathlib import Path

from tracegrade.store import runref
from tracegrade.judge.gates import calibration_problem
from tracegrade.compare import noise
from tracegrade.compare.comparison import compare_runs
from tracegrade.core.errors import ConfigError, TracegradeError
from tracegrade.compare.gate import decide, load_gate
from tracegrade.report import compare_console, compare_json, compare_markdown
from tracegrade.store.runstore import open_store

# WHY not 2 for errors (as other commands do): 2 means "warn" here, and a CI
# job must never read "could not compare" as "fine, with warnings".
EXIT_ERROR = 3


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare", help="compare two runs case by case and gate the candidate",
        description="Align two runs by case id, compare every metric with paired statistics, apply the gate "
        "file's thresholds. Exit 0 pass, 1 block, 2 warn only, 3 could not compare.",
    )
    p.add_argument("baseline", help="run id (or unique prefix), latest, previous, or a results.json file")
    p.add_argument("candidate", help="same forms as baseline")
    p.add_argument("--gate", type=Path, help="gate thresholds TOML (default: the shipped gate.toml)")
    p.add_argument("--allow-dataset-change", action="store_true",
                   help="compare runs on different dataset versions: only the shared unchanged cases")
    p.add_argument("--markdown", type=Path, metavar="FILE", help="also write the comparison as Markdown")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the JSON verdict")
    p.add_argument("--db", help="run store URL (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--require-calibrated", action="store_true",
                   help="refuse to gate on judge scores from a judge (model + rubric) without a passing "
                   "`tracegrade calibrate`; without it, a warning")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    try:
        return _compare(args)
    except TracegradeError as exc:
        print(f"tracegrade: error: {exc}", file=sys.stderr)
        # WHY write the files anyway: a CI job that posts compare.md or reads
        # verdict.json must find why there is no verdict, not a missing file.
        refs = (args.baseline, args.candidate)
        if args.markdown:
            compare_markdown.write_error(str(exc), refs, args.markdown)
        if args.json:
            compare_json.write_error(str(exc), refs, EXIT_ERROR, args.json)
        return EXIT_ERROR


def _check_calibration(runs: Any, args: argparse.Namespace) -> None:
    """Judge scores gate this comparison: say so unless each judge passed its calibration."""
    judges = sorted({(r.manifest.judge_model, r.manifest.rubric_hash or "") for r in runs if r.manifest.judge_model})
    if not judges:
        return
    with open_store(args.db) as store:
        problems = [p for model, rubric in judges if (p := calibration_problem(store, model, rubric))]
    if problems and args.require_calibrated:
        raise ConfigError(f"--require-calibrated: {problems[0]}")
    for problem in problems:
        print(f"tracegrade: WARNING: judge scores gate this comparison, but {problem}", file=sys.stderr)


def _same_setup_runs(store: Any, baseline: Any, limit: int = 20) -> list[Any]:
    """Finished runs of the baseline's exact setup (itself included), newest first."""
    infos = [i for i in runref.finished_runs(store, baseline.manifest.dataset)
             if noise.same_setup(i.manifest, baseline.manifest)][:limit]
    return [store.load_run(i.run_id) for i in infos] if len(infos) > 1 else []


def _compare(args: argparse.Namespace) -> int:
    config = load_gate(args.gate)
    refs = (args.baseline, args.candidate)
    store = None if all(runref.is_file_ref(r) for r in refs) else open_store(args.db)
    try:
        baseline, candidate = (runref.load(r, store) for r in refs)
        twins = _same_setup_runs(store, baseline) if store is not None else []
    finally:
        if store is not None:
            store.close()
    _check_calibration((baseline, candidate), args)
    stats = config.statistics
    comparison = compare_runs(baseline, candidate, args.allow_dataset_change, stats.alpha,
                              stats.bootstrap_resamples, stats.seed)
    note = noise.noise_note([*comparison.newly_failing, *comparison.newly_passing],
                            noise.unstable_cases(twins), len(twins))
    if note:
        comparison = dataclasses.replace(comparison, notes=(*comparison.notes, note))
    verdict = decide(comparison, config)
    print(compare_console.render(comparison, verdict, stats.alpha))
    if args.markdown:
        compare_markdown.write(comparison, verdict, stats.alpha, args.markdown)
    if args.json:
        compare_json.write(comparison, verdict, config, args.json)
    return verdict.exit_code
