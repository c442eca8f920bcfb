"""`tracegrade run DATASET`: the eval run, recorded in the run store as it goes.

WHY the imports inside the functions: ``tracegrade run --help`` must not pay
for the models, telemetry and reports that only a real run needs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracegrade.core.errors import ConfigError

if TYPE_CHECKING:
    from tracegrade.core.results import Manifest
    from tracegrade.core.trace import Reply
    from tracegrade.case.schema import GoldenCase
    from tracegrade.run.recording import Evaluation
    from tracegrade.case.dataset import Dataset
    from tracegrade.run.runner import RunSettings
    from tracegrade.agent.plugins import Target
    from tracegrade.judge.scoring import Judge
    from tracegrade.store.runstore import RunStore

# The flags that define what a run measures: stored in its manifest, and
# restored from there by --resume so the finished run is one consistent run.
RUN_FLAGS = ("target", "agent_model", "judge_model", "user_model", "prompt_version", "rubric", "pass_score", "concurrency",
             "timeout", "only", "split", "category", "smoke", "checks_only", "repeat", "flaky", "prices", "budget", "capture",
             "flag_thresholds", "replay_users")
EXIT_STOPPED = 3


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run", help="run a golden dataset against an agent, check traces, judge answers",
        description="Run every case against the agent, check each trace with code, score each answer "
        "with the LLM judge, and pass a case only when both layers pass. Every finished case is stored "
        "at once (TRACEGRADE_DB). Exit codes: 0 every case passed; 1 some case failed or the agent "
        "crashed (the agent's verdict); 2 a broken run (bad input, an unreachable target) or no case "
        "failed but some were left unscored (the judge could not score them, or their calls were not "
        f"recorded); {EXIT_STOPPED} --budget stopped the run.",
    )
    p.add_argument("dataset", type=Path, help="dataset file (.json, .jsonl, .yaml)")
    p.add_argument("--target",
                   help="the agent: module:function (sync or async; takes the case or the question), a registered "
                   "target name, or http://HOST:PORT/chat (default: shopnest, when it is installed)")
    p.add_argument("--capture", action="append", default=[], choices=("openai", "anthropic", "otel"),
                   help="record the agent's model calls per case and build its trace from them (repeatable): "
                   "the openai or anthropic SDK's calls, or the OpenTelemetry spans it emits (GenAI or "
                   "OpenInference conventions); the target (module:function) may then take the question "
                   "and return just the answer. See docs/agents.md")
    p.add_argument("--agent-model", help="agent model for --target shopnest: local (default), local:/path.gguf, "
                   "openai:MODEL, anthropic:MODEL (env TRACEGRADE_AGENT_MODEL)")
    p.add_argument("--judge-model", help="judge model, same forms (env TRACEGRADE_JUDGE_MODEL; default local)")
    p.add_argument("--user-model", help="the model that plays a case's simulated `user`, same forms "
                   "(env TRACEGRADE_USER_MODEL; default local; loaded only when a case has a user)")
    p.add_argument("--replay-users", metavar="RUN",
                   help="send each simulated user the turns it wrote in RUN (a run id, latest, previous or a "
                   "results.json) while the agent's replies match the stored ones (same calls, same answer "
                   "text); the first reply that differs is marked on the case, and --user-model goes on "
                   "from there (docs/trajectory.md)")
    p.add_argument("--prompt-version", help="ShopNest system prompt version: v1 (default) or terse")
    p.add_argument("--rubric", type=Path, help="judge rubric file (default: the shipped judge-rubric.md)")
    p.add_argument("--pass-score", type=int, choices=range(1, 6), metavar="1..5",
                   help="the pass score of every 1..5 scale metric (default: each metric's threshold in the rubric)")
    p.add_argument("--concurrency", type=int, default=4, help="cases in flight at once (default 4)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per case for the agent (default 600)")
    p.add_argument("--only", action="append", default=[], metavar="ID", help="run only this case id (repeatable)")
    p.add_argument("--split", help="run only cases of this split")
    p.add_argument("--category", help="run only cases of this category")
    p.add_argument("--smoke", action="store_true", help="run only cases tagged 'smoke'")
    p.add_argument("--checks-only", action="store_true", help="skip the judge: a free, deterministic smoke run")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run each case N times: per-case mean and variance, run-level mean ± sd, and pass^1..N "
                   "(the chance that all k trials of a case pass; docs/trajectory.md) (default 1)")
    p.add_argument("--flaky", nargs="?", const="2/3", metavar="K/N",
                   help="re-run a failed case; it counts as failed only when it fails K of N attempts "
                   "(bare --flaky: 2/3; default: no re-runs)")
    p.add_argument("--budget", type=float, metavar="USD",
                   help="warn at 80%% of this spend, stop cleanly at 100%% (finished cases kept)")
    p.add_argument("--prices", type=Path, help="price table TOML, USD per million tokens per model id "
                   "(default: the shipped prices.toml)")
    p.add_argument("--flag-threshold", dest="flag_thresholds", action="append", default=[], metavar="METRIC>=X",
                   help="where the FLAGS section flags a group, in place of the default (repeatable): e.g. "
                   "'passRate>=0.9', 'tools.argExact>=0.95', 'safety.violations<=0'; a judge metric's is the "
                   "rubric's. Flags warn; they never change the exit code")
    p.add_argument("--resume", metavar="RUN_ID",
                   help="finish an interrupted or stopped run: only its missing cases run, with its own settings")
    p.add_argument("--db", help="run store URL (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--out", type=Path, default=Path(".tracegrade/runs"),
                   help="folder for results JSON, JUnit XML and Markdown (default .tracegrade/runs)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where cases run: local (this process, default) or ray (a Ray cluster: RAY_ADDRESS, "
                   "else a local Ray instance; needs tracegrade[ray]). Ray pays when each case has CPU work to "
                   "spread (an in-process agent, judging) over more cores; a local instance takes ~4 s to start")
    p.add_argument("--quiet", action="store_true", help="print only the final report")
    p.add_argument("--require-calibrated", action="store_true",
                   help="refuse to run when the judge (model + rubric) has no passing `tracegrade calibrate` "
                   "in the store; without it, a warning")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from tracegrade.case.dataset import load_dataset
    from tracegrade.store.runstore import open_store

    with open_store(args.db) as store:
        if args.resume:
            _restore_flags(store, args)
        args.target = args.target or default_target()
        # WHY the whole file's version: a run of a selection measured the same dataset version.
        dataset = load_dataset(args.dataset).select(args.only, args.split, args.category,
                                                    "smoke" if args.smoke else None)
        judge = None if args.checks_only else _judge(args)
        settings = _settings(args)
        judge = _check_calibration(store, judge, args.require_calibrated)
        _tune_gc()
        evaluation = _execute(args, store, dataset, judge, settings)
    return _report(args, evaluation)


def default_target() -> str:
    """ShopNest when it is installed (the demo); else a ConfigError that says how to name an agent."""
    from tracegrade.agent.plugins import installed_targets

    if "shopnest" in installed_targets():
        return "shopnest"
    raise ConfigError("no --target: name the agent to run, e.g. --target mypkg.agent:answer (a function that "
                      "takes the question or the case), or http://HOST:PORT/chat; `tracegrade init` writes a "
                      "stand-in evals/agent.py to start from")


def _tune_gc() -> None:
    """Fewer, cheaper garbage collections for the rest of this process (ours: the
    library's ``evaluate`` leaves the caller's settings alone).

    WHY: a run allocates a few objects per case and frees them, and the default
    threshold (700) ran a collection every few cases, each walking the
    hundreds of thousands of objects the imports left: 7% of a 10,000-case
    checks-only run's CPU. Frozen, the imports' objects are never walked again;
    at 10,000 allocations a young collection is still frequent enough for memory.
    """
    import gc

    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def _judge(args: argparse.Namespace) -> Judge:
    from tracegrade.judge.scoring import Judge, load_rubric
    from tracegrade.models import load_model, model_spec

    return Judge(load_model(model_spec("judge", args.judge_model), role="judge"), load_rubric(args.rubric))


def _report(args: argparse.Namespace, evaluation: Evaluation) -> int:
    """The reports of a finished (or stopped) run, whose files are written; its exit code.
    WHY imported here: a run's first case should not wait for the report code.
    WHY from the Evaluation: its tally and metrics came from the one read of the
    stored results that also wrote the files."""
    from tracegrade.report import closing, console, costs, repeats, replay, stratified

    run, summary = evaluation.run, evaluation.summary
    print(console.final_report(run, summary))  # the case blocks were printed as each case finished
    print(costs.render(run, summary))
    if repeats.wanted(run, summary):
        print(repeats.render(run, summary))
    if replay.wanted(run):
        print(replay.render(run))
    print(stratified.render(evaluation.metrics))
    print("wrote " + "  ".join(str(p) for p in evaluation.files), file=sys.stderr)
    if run.status == "stopped":
        print(f"tracegrade: run {run.manifest.run_id} stopped before every case ran; "
              f"finish it with: tracegrade run {args.dataset} --resume {run.manifest.run_id} --budget MORE",
              file=sys.stderr)
        return EXIT_STOPPED
    line, code = closing.closing(run.manifest.run_id, summary)
    print(f"tracegrade: {line}", file=sys.stderr)
    return code


def _check_calibration(store: RunStore, judge: Judge | None, required: bool) -> Judge | None:
    """Judge scores gate this run: say so loudly unless the judge passed its calibration.
    A metric its calibration does not allow to gate is scored and shown, but does not gate."""
    from dataclasses import replace

    from tracegrade.judge.gates import calibration_gates, calibration_problem

    if judge is None:
        return None
    problem = calibration_problem(store, judge.model.model_id, judge.rubric_hash)
    if problem and required:
        raise ConfigError(f"--require-calibrated: {problem}")
    if problem:
        print(f"tracegrade: WARNING: judge scores gate this run, but {problem}. "
              "Pass/fail below rests on an unvalidated judge; see docs/calibration.md", file=sys.stderr)
    ungated = frozenset(m.name for m in judge.rubric.metrics if not m.gate)
    gates = calibration_gates(store, judge.model.model_id, judge.rubric_hash, ungated)
    for note in gates.notes:
        print(f"tracegrade: {note}", file=sys.stderr)
    return replace(judge, thresholds=gates.thresholds, not_gating=gates.not_gating) if gates.notes else judge


def _execute(args: argparse.Namespace, store: RunStore, dataset: Dataset, judge: Judge | None, settings: RunSettings,
             target: Target | None = None) -> Evaluation:
    """Run and store; ``target`` replaces the one ``--target`` names (``tracegrade grade``'s recorded traces)."""
    from pydantic.alias_generators import to_camel

    from tracegrade.core.redact import redact, redact_secrets
    from tracegrade.cli.progress import CaseProgress
    from tracegrade.report.console import case_block
    from tracegrade.run.evaluate import dataset_record, evaluate

    todo = len(dataset.cases) * settings.repeat - (len(store.done_keys(args.resume)) if args.resume else 0)
    started: list[str] = []

    def say_start(manifest: Manifest) -> None:
        started.append(manifest.run_id)
        verb = "resuming" if args.resume else "run"
        print(f"tracegrade: {len(dataset.cases)} cases x {settings.repeat} from {dataset.name} "
              f"(version {manifest.dataset_version}), {verb} {manifest.run_id}, {todo} to go, store {store.url}",
              file=sys.stderr)

    record = {**dataset_record(args.dataset), **{to_camel(flag): _plain(getattr(args, flag)) for flag in RUN_FLAGS}}
    options = {"agent_model": args.agent_model, "prompt_version": args.prompt_version}
    finished: list[Evaluation] = []
    try:
        # WHY redacted here: the live block is made from the case in memory, before the store redacts it.
        hide = redact_secrets if store.raw else redact
        progress = CaseProgress(todo, render=lambda r: "" if args.quiet else hide(case_block(r)))
        with _executor(args, judge) as executor:
            evaluate(dataset, _named(target, args.target) if target else args.target, target_options=options, judge=judge, settings=settings,
                     store=store, resume=args.resume, out=args.out, budget_usd=args.budget, executor=executor,
                     on_start=say_start, on_result=None if args.quiet else progress, on_finish=finished.append,
                     record=record, telemetry=True, capture=tuple(args.capture or ()),
                     flag_thresholds=tuple(args.flag_thresholds or ()), user_model=args.user_model,
                     replay_users=args.replay_users)
        return finished[0]
    except KeyboardInterrupt:
        if started:
            print(f"tracegrade: interrupted; finished cases are stored. Resume with: "
                  f"tracegrade run {args.dataset} --resume {started[0]}", file=sys.stderr)
        raise


def _named(target: Target, name: str) -> Target:
    """``target`` under the name the run shows (``recorded:FILE`` for `tracegrade grade`), not its function's."""
    async def named(case: GoldenCase) -> Reply:
        return await target(case)

    from tracegrade.agent.capture.target import PROVENANCE_SET
    from tracegrade.agent.conversation import WHOLE_CONVERSATIONS

    named.agent_name = name  # type: ignore[attr-defined]
    setattr(named, WHOLE_CONVERSATIONS, getattr(target, WHOLE_CONVERSATIONS, False))
    setattr(named, PROVENANCE_SET, getattr(target, PROVENANCE_SET, False))
    return named


def _executor(args: argparse.Namespace, judge: Judge | None) -> Any:
    """Where the jobs run. Ray workers rebuild the target and judge from the same flags."""
    import functools

    from tracegrade.run.executors import build_parts, local_executor, ray_executor

    if args.executor == "local":
        return local_executor()
    from tracegrade.models import model_spec

    recipe = functools.partial(build_parts, args.target, model_spec("agent", args.agent_model), args.prompt_version,
                               model_spec("judge", args.judge_model) if judge else None,
                               judge.rubric.text if judge else None,
                               dict(judge.thresholds) if judge else None, judge.not_gating if judge else frozenset(),
                               tuple(args.capture or ()))
    return ray_executor(recipe, concurrency=args.concurrency)


def _settings(args: argparse.Namespace) -> RunSettings:
    from tracegrade.run.flaky import parse_policy
    from tracegrade.stats.pricing import load_prices
    from tracegrade.run.runner import RunSettings

    if args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    if args.budget is not None and args.budget <= 0:
        raise ConfigError("--budget must be more than 0 USD")
    return RunSettings(args.pass_score, args.concurrency, args.timeout, args.checks_only, args.repeat,
                       parse_policy(args.flaky) if args.flaky else None, load_prices(args.prices))


def _plain(value: object) -> object:
    return str(value) if isinstance(value, Path) else value


def _restore_flags(store: RunStore, args: argparse.Namespace) -> None:
    """A resumed run keeps its own flags (a new --budget excepted): one consistent run."""
    from pydantic.alias_generators import to_camel

    ids = store.run_ids(args.resume)
    if len(ids) != 1:
        raise ConfigError(f"--resume {args.resume}: {'no run' if not ids else 'several runs'} with that id in {store.url}")
    args.resume = ids[0]
    # WHY now: a second resume of this run must hear so before it loads models or data.
    store.claim_run(ids[0])
    stored = store.info(ids[0]).manifest.settings
    for flag in RUN_FLAGS:
        if flag == "budget" and args.budget is not None:
            continue
        value = stored.get(to_camel(flag), getattr(args, flag))
        setattr(args, flag, Path(value) if flag in ("rubric", "prices") and value else value)
