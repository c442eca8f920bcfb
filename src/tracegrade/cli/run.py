"""`tracegrade run DATASET`: the eval run, recorded in the run store as it goes."""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
from pathlib import Path

from pydantic.alias_generators import to_camel

from tracegrade.judge.calibrate import calibration_problem
from tracegrade.eval.dataset import Dataset, load_dataset
from tracegrade.core.errors import ConfigError
from tracegrade.eval.executors import EXECUTORS, build_parts, local_executor, ray_executor
from tracegrade.eval.flaky import parse_policy
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.eval.provenance import git_commit, new_run_id, now_iso
from tracegrade.metrics import RunMetrics, run_metrics
from tracegrade.models import load_model, model_spec
from tracegrade.eval.pricing import load_prices
from tracegrade.eval.progress import progress_bar
from tracegrade.eval.recording import record_run, spent_usd
from tracegrade.report import console, costs, json_report, junit, markdown, repeats, stratified
from tracegrade.core.results import Manifest, Run
from tracegrade.eval.runner import Budget, RunSettings
from tracegrade.store.runstore import RunStore, open_store
from tracegrade.eval.targets import resolve_target
from tracegrade.observe.telemetry import eval_run_spans

# The flags that define what a run measures: stored in its manifest, and
# restored from there by --resume so the finished run is one consistent run.
RUN_FLAGS = ("target", "agent_model", "judge_model", "prompt_version", "rubric", "pass_score", "concurrency",
             "timeout", "only", "split", "category", "smoke", "checks_only", "repeat", "flaky", "prices", "budget")
EXIT_STOPPED = 3


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="run a golden dataset against an agent, check traces, judge answers",
        description="Run every case against the agent, check each trace with code, score each answer "
        "with the LLM judge, and pass a case only when both layers pass. Every finished case is stored "
        "at once (TRACEGRADE_DB). Exits 0 only when every case passed, 1 otherwise, "
        f"{EXIT_STOPPED} when --budget stopped the run.",
    )
    p.add_argument("dataset", type=Path, help="dataset file (.json, .jsonl, .yaml)")
    p.add_argument("--target", default="shopnest",
                   help="shopnest (in-process, default), module:function, or http://HOST:PORT/chat")
    p.add_argument("--agent-model", help="agent model for --target shopnest: local (default), local:/path.gguf, "
                   "openai:MODEL, anthropic:MODEL (env TRACEGRADE_AGENT_MODEL)")
    p.add_argument("--judge-model", help="judge model, same forms (env TRACEGRADE_JUDGE_MODEL; default local)")
    p.add_argument("--prompt-version", help="ShopNest system prompt version: v1 (default) or terse")
    p.add_argument("--rubric", type=Path, help="judge rubric file (default: the shipped judge-rubric.md)")
    p.add_argument("--pass-score", type=int, default=4, choices=range(1, 6), metavar="1..5",
                   help="every judge score must reach this (default 4)")
    p.add_argument("--concurrency", type=int, default=4, help="cases in flight at once (default 4)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per case for the agent (default 600)")
    p.add_argument("--only", action="append", default=[], metavar="ID", help="run only this case id (repeatable)")
    p.add_argument("--split", help="run only cases of this split")
    p.add_argument("--category", help="run only cases of this category")
    p.add_argument("--smoke", action="store_true", help="run only cases tagged 'smoke'")
    p.add_argument("--checks-only", action="store_true", help="skip the judge: a free, deterministic smoke run")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run each case N times: per-case mean and variance, run-level mean ± sd (default 1)")
    p.add_argument("--flaky", nargs="?", const="2/3", metavar="K/N",
                   help="re-run a failed case; it counts as failed only when it fails K of N attempts "
                   "(bare --flaky: 2/3; default: no re-runs)")
    p.add_argument("--budget", type=float, metavar="USD",
                   help="warn at 80%% of this spend, stop cleanly at 100%% (finished cases kept)")
    p.add_argument("--prices", type=Path, help="price table TOML, USD per million tokens per model id "
                   "(default: the shipped prices.toml)")
    p.add_argument("--resume", metavar="RUN_ID",
                   help="finish an interrupted or stopped run: only its missing cases run, with its own settings")
    p.add_argument("--db", help="run store URL (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--out", type=Path, default=Path(".tracegrade/runs"),
                   help="folder for results JSON, JUnit XML and Markdown (default .tracegrade/runs)")
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="where cases run: local (this process, default) or ray (a Ray cluster: RAY_ADDRESS, "
                   "else a local Ray instance; needs tracegrade[ray])")
    p.add_argument("--quiet", action="store_true", help="print only the final report")
    p.add_argument("--require-calibrated", action="store_true",
                   help="refuse to run when the judge (model + rubric) has no passing `tracegrade calibrate` "
                   "in the store; without it, a warning")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    with open_store(args.db) as store:
        manifest = _resumed(store, args) if args.resume else None
        # WHY the whole file's version: a run of a selection measured the same dataset version.
        full = load_dataset(args.dataset)
        dataset = full.select(args.only, args.split, args.category, "smoke" if args.smoke else None)
        target = resolve_target(args.target, args.agent_model, args.prompt_version)
        judge = None if args.checks_only else Judge(load_model(model_spec("judge", args.judge_model), role="judge"),
                                                    load_rubric(args.rubric))
        settings = _settings(args)
        manifest = (_check_resumable(manifest, full.version, judge) if manifest
                    else _manifest(args, dataset, full.version, target, judge))
        _check_calibration(store, judge, args.require_calibrated)
        run, status = _execute(args, store, dataset, target, judge, settings, manifest)
    print(console.render(run) if not args.quiet else console.final_report(run))
    print(costs.render(run))
    if repeats.wanted(run):
        print(repeats.render(run))
    metrics = run_metrics(run.results, dataset.cases)
    print(stratified.render(metrics))
    _write_outputs(run, args.out, metrics)
    if status == "stopped":
        print(f"tracegrade: run {run.manifest.run_id} stopped before every case ran; "
              f"finish it with: tracegrade run {args.dataset} --resume {run.manifest.run_id} --budget MORE",
              file=sys.stderr)
        return EXIT_STOPPED
    return 0 if all(r.passed for r in run.results) else 1


def _check_calibration(store: RunStore, judge: Judge | None, required: bool) -> None:
    """Judge scores gate this run: say so loudly unless the judge passed its calibration."""
    problem = calibration_problem(store, judge.model.model_id, judge.rubric_hash) if judge else None
    if problem and required:
        raise ConfigError(f"--require-calibrated: {problem}")
    if problem:
        print(f"tracegrade: WARNING: judge scores gate this run, but {problem}. "
              "Pass/fail below rests on an unvalidated judge; see docs/calibration.md", file=sys.stderr)


def _execute(args, store: RunStore, dataset: Dataset, target, judge, settings: RunSettings, manifest: Manifest):
    resume = bool(args.resume)
    budget = None
    if args.budget is not None:
        already = spent_usd(store.load_run(manifest.run_id).results) if resume else 0.0
        budget = Budget(args.budget, already)
    todo = len(dataset.cases) * settings.repeat - (len(store.done_keys(manifest.run_id)) if resume else 0)
    verb = "resuming" if resume else "run"
    print(f"tracegrade: {len(dataset.cases)} cases x {settings.repeat} from {dataset.name} "
          f"(version {manifest.dataset_version}), {verb} {manifest.run_id}, {todo} to go, store {store.url}",
          file=sys.stderr)
    try:
        with eval_run_spans(manifest), _executor(args, judge) as evaluate, progress_bar(todo, "cases") as advance:
            return asyncio.run(record_run(dataset.cases, target, judge, settings, store, manifest, resume=resume,
                                          budget=budget, on_result=lambda r: advance(), evaluate=evaluate))
    except KeyboardInterrupt:
        print(f"tracegrade: interrupted; finished cases are stored. Resume with: "
              f"tracegrade run {args.dataset} --resume {manifest.run_id}", file=sys.stderr)
        raise


def _executor(args: argparse.Namespace, judge: Judge | None):
    """Where the jobs run. Ray workers rebuild the target and judge from the same flags."""
    if args.executor == "local":
        return local_executor()
    recipe = functools.partial(build_parts, args.target, model_spec("agent", args.agent_model), args.prompt_version,
                               model_spec("judge", args.judge_model) if judge else None,
                               judge.rubric if judge else None)
    return ray_executor(recipe, concurrency=args.concurrency)


def _settings(args: argparse.Namespace) -> RunSettings:
    if args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    if args.budget is not None and args.budget <= 0:
        raise ConfigError("--budget must be more than 0 USD")
    return RunSettings(args.pass_score, args.concurrency, args.timeout, args.checks_only, args.repeat,
                       parse_policy(args.flaky) if args.flaky else None, load_prices(args.prices))


def _manifest(args, dataset: Dataset, version: str, target, judge: Judge | None) -> Manifest:
    return Manifest(
        run_id=new_run_id(),
        dataset=dataset.name,
        dataset_version=version,
        case_count=len(dataset.cases),
        target=args.target,
        agent_model=getattr(target, "model_id", args.target),
        judge_model=judge.model.model_id if judge else None,
        rubric_hash=judge.rubric_hash if judge else None,
        prompt_version=getattr(target, "prompt_version", "") or args.prompt_version or "",
        git_commit=git_commit(),
        started_at=now_iso(),
        settings={to_camel(flag): _plain(getattr(args, flag)) for flag in RUN_FLAGS},
    )


def _resumed(store: RunStore, args: argparse.Namespace) -> Manifest:
    """The stored run's manifest; its flags replace the ones given now (a new --budget excepted)."""
    ids = store.run_ids(args.resume)
    if len(ids) != 1:
        raise ConfigError(f"--resume {args.resume}: {'no run' if not ids else 'several runs'} with that id in {store.url}")
    info = store.info(ids[0])
    if info.status == "finished":
        raise ConfigError(f"run {info.run_id} already finished; nothing to resume")
    stored = info.manifest.settings
    for flag in RUN_FLAGS:
        if flag == "budget" and args.budget is not None:
            continue
        value = stored.get(to_camel(flag), getattr(args, flag))
        setattr(args, flag, Path(value) if flag in ("rubric", "prices") and value else value)
    return info.manifest


def _check_resumable(manifest: Manifest, version: str, judge: Judge | None) -> Manifest:
    if version != manifest.dataset_version:
        raise ConfigError(f"run {manifest.run_id} measured dataset version {manifest.dataset_version}, "
                          f"this file is version {version}: resume refuses to mix the two")
    if judge is not None and judge.rubric_hash != manifest.rubric_hash:
        raise ConfigError(f"run {manifest.run_id} used rubric {manifest.rubric_hash}, this one is {judge.rubric_hash}")
    return manifest


def _plain(value):
    return str(value) if isinstance(value, Path) else value


def _write_outputs(run: Run, folder: Path, metrics: RunMetrics) -> None:
    base = folder / run.manifest.run_id
    paths = [json_report.write(run, base / "results.json", metrics.to_json()), junit.write(run, base / "junit.xml"),
             markdown.write(run, base / "summary.md")]
    print("wrote " + "  ".join(str(p) for p in paths), file=sys.stderr)
