"""`tracegrade run DATASET`: the eval run."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tracegrade.dataset import Dataset, load_dataset
from tracegrade.judge import Judge, load_rubric
from tracegrade.manifest import git_commit, new_run_id, now_iso
from tracegrade.models import load_model, model_spec
from tracegrade.progress import progress_bar
from tracegrade.report import console, json_report, junit, markdown
from tracegrade.results import Manifest, Run
from tracegrade.runner import RunSettings, run_cases
from tracegrade.targets import resolve_target


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="run a golden dataset against an agent, check traces, judge answers",
        description="Run every case against the agent, check each trace with code, score each answer "
        "with the LLM judge, and pass a case only when both layers pass. Exits 0 only when every case passed.",
    )
    p.add_argument("dataset", type=Path, help="dataset file (.json, .jsonl, .yaml)")
    p.add_argument("--target", default="shopnest",
                   help="shopnest (in-process, default), module:function, or http://HOST:PORT/chat")
    p.add_argument("--agent-model", help="agent model for --target shopnest: local (default), local:/path.gguf, "
                   "openai:MODEL, anthropic:MODEL (env TRACEGRADE_AGENT_MODEL)")
    p.add_argument("--judge-model", help="judge model, same forms (env TRACEGRADE_JUDGE_MODEL; default local)")
    p.add_argument("--prompt-version", help="ShopNest system prompt version: v1 (default) or terse")
    p.add_argument("--rubric", type=Path, help="judge rubric file (default evals/judge-rubric.md)")
    p.add_argument("--pass-score", type=int, default=4, choices=range(1, 6), metavar="1..5",
                   help="every judge score must reach this (default 4)")
    p.add_argument("--concurrency", type=int, default=4, help="cases in flight at once (default 4)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per case for the agent (default 600)")
    p.add_argument("--only", action="append", default=[], metavar="ID", help="run only this case id (repeatable)")
    p.add_argument("--split", help="run only cases of this split")
    p.add_argument("--category", help="run only cases of this category")
    p.add_argument("--smoke", action="store_true", help="run only cases tagged 'smoke'")
    p.add_argument("--checks-only", action="store_true", help="skip the judge: a free, deterministic smoke run")
    p.add_argument("--out", type=Path, default=Path(".tracegrade/runs"),
                   help="folder for results JSON, JUnit XML and Markdown (default .tracegrade/runs)")
    p.add_argument("--quiet", action="store_true", help="print only the final report")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    dataset = load_dataset(args.dataset).select(args.only, args.split, args.category, "smoke" if args.smoke else None)
    target = resolve_target(args.target, args.agent_model, args.prompt_version)
    judge = None
    if not args.checks_only:
        rubric = load_rubric(args.rubric)
        judge = Judge(load_model(model_spec("judge", args.judge_model), role="judge"), rubric)
    settings = RunSettings(args.pass_score, args.concurrency, args.timeout, args.checks_only)
    manifest = _manifest(args, dataset, target, judge, settings)
    print(f"tracegrade: {len(dataset.cases)} cases from {dataset.name} (version {dataset.version}), run {manifest.run_id}",
          file=sys.stderr)
    with progress_bar(len(dataset.cases), "cases") as advance:
        results = asyncio.run(run_cases(dataset.cases, target, judge, settings, on_result=lambda r: advance()))
    run = Run(_finish(manifest), tuple(results))
    print(console.render(run) if not args.quiet else console.final_report(run))
    _write_outputs(run, args.out)
    return 0 if all(r.passed for r in results) else 1


def _manifest(args, dataset: Dataset, target, judge: Judge | None, settings: RunSettings) -> Manifest:
    return Manifest(
        run_id=new_run_id(),
        dataset=dataset.name,
        dataset_version=dataset.version,
        case_count=len(dataset.cases),
        target=args.target,
        agent_model=getattr(target, "model_id", args.target),
        judge_model=judge.model.model_id if judge else None,
        rubric_hash=judge.rubric_hash if judge else None,
        prompt_version=getattr(target, "prompt_version", ""),
        git_commit=git_commit(),
        started_at=now_iso(),
        settings={"passScore": settings.pass_score, "concurrency": settings.concurrency,
                  "timeoutS": settings.timeout_s, "checksOnly": settings.checks_only,
                  "only": args.only, "split": args.split, "category": args.category, "smoke": args.smoke},
    )


def _finish(manifest: Manifest) -> Manifest:
    from dataclasses import replace

    return replace(manifest, ended_at=now_iso())


def _write_outputs(run: Run, folder: Path) -> None:
    base = folder / run.manifest.run_id
    paths = [json_report.write(run, base / "results.json"), junit.write(run, base / "junit.xml"),
             markdown.write(run, base / "summary.md")]
    print("wrote " + "  ".join(str(p) for p in paths), file=sys.stderr)
