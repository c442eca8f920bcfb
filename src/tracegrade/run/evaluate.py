"""The front door: run a dataset against a target, check, judge, store, report.

    >>> import tracegrade
    >>> run = tracegrade.evaluate("evals/golden-dataset.json", "shopnest", judge=None)  # doctest: +SKIP
    >>> run.pass_rate  # doctest: +SKIP

``evaluate`` is what ``tracegrade run`` calls: the manifest, the run store,
resume, repeats, flaky re-runs, the budget and the executor are all inside,
so a notebook gets the same stored, resumable run as the command line.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Iterable, Mapping, ParamSpec, Sequence, TypeAlias, TypeVar

from tracegrade.core import jsontext
from tracegrade.core.errors import ConfigError, TracegradeError
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.case.dataset import Dataset, load_dataset
from tracegrade.case.schema import GoldenCase
from tracegrade.case.files import load_yaml
from tracegrade.agent.plugins import Target
from tracegrade.checks.plugins import Check, installed_checks
from tracegrade.store.run_ids import git_commit, new_run_id, now_iso
from tracegrade.run.recording import Evaluation, record_run, spent_usd
from tracegrade.run.runner import Budget, Evaluate, RunSettings, evaluate_with_retries
from tracegrade.agent.user_model import as_user_model
from tracegrade.agent.targets import function_target, resolve_target
from tracegrade.store.runstore import RunStore, open_store

if TYPE_CHECKING:  # the metrics and the judge are imported when used, not with the API
    from tracegrade.agent.replay import UserReplays
    from tracegrade.judge.scoring import Judge
    from tracegrade.metrics.stratify import Threshold
    from tracegrade.models.base import ChatModel
    from tracegrade.outputs.files import OutputWriters
    from tracegrade.outputs.streamed import CaseWriter

DatasetLike = Dataset | str | Path | Sequence[GoldenCase]
P = ParamSpec("P")
R = TypeVar("R")
NAME_READ_BYTES = 16 * 2**20  # a dataset file read a second time for its declared name only up to this size
JudgeLike: TypeAlias = "Judge | str | None"


def named_target(spec: str, capture: Sequence[str], options: Mapping[str, str]) -> Target:
    """The target ``spec`` names; a module of the user's that fails while it loads is a
    ConfigError of one line: the module, the error and where it was raised."""
    try:
        return resolve_target(spec, capture, **options)
    except TracegradeError:
        raise
    except Exception as exc:  # the user's module ran its own code at import: any error can come
        module = spec.partition(":")[0]
        raise ConfigError(f"target {spec!r}: loading {module} raised {type(exc).__name__}: {exc} "
                          f"(at {raised_at(exc)}; `python -c 'import {module}'` shows the whole traceback)") from None


def raised_at(exc: BaseException) -> str:
    """file:line of the user's code where ``exc`` came from: the innermost frame in a file under
    this folder (their agent, not the library it called), else the innermost real file."""
    import traceback

    here = Path.cwd().resolve()
    frames = [(Path(f.filename), f.lineno) for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<")]
    ours = [(path.resolve().relative_to(here), line) for path, line in frames
            if path.resolve().is_relative_to(here) and "site-packages" not in path.parts]  # a venv in the project
    chosen = (ours or frames)[-1:]
    return f"{chosen[0][0]}:{chosen[0][1]}" if chosen else "an unknown place"


def blocking(run_async: Callable[P, Coroutine[Any, Any, R]], name: str) -> Callable[P, R]:
    """``run_async`` as a function that runs it to its end: the same signature, written once."""

    @functools.wraps(run_async)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return _run_to_end(run_async(*args, **kwargs))

    run.__name__ = run.__qualname__ = name
    return run


def _run_to_end(work: Coroutine[Any, Any, R]) -> R:
    """Run ``work`` on a new event loop. WHY a thread when a loop already runs
    here (a notebook, an async web handler): asyncio.run refuses to nest, and a
    user of the sync API should not have to know which kind of caller they are."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tracegrade-evaluate") as pool:
        return pool.submit(asyncio.run, work).result()


async def evaluate_async(
    dataset: DatasetLike,
    target: Target | Callable[..., Any] | str,
    *,
    judge: JudgeLike = "local",
    capture: Sequence[str] = (),
    store: RunStore | str | None = None,
    out: str | Path | None = None,
    settings: RunSettings = RunSettings(),
    checks: Iterable[Check] = (),
    user_model: ChatModel | str | None = None,
    target_options: Mapping[str, str | None] | None = None,
    resume: str | None = None,
    budget_usd: float | None = None,
    flag_thresholds: Sequence[str] = (),
    replay_users: str | Run | None = None,
    telemetry: bool = False,
    record: Mapping[str, Any] | None = None,
    on_start: Callable[[Manifest], None] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    on_finish: Callable[[Evaluation], None] | None = None,
    executor: Evaluate = evaluate_with_retries,
) -> Run:
    """Evaluate ``target`` on every case of ``dataset`` and return the stored Run. ``evaluate``
    takes the same arguments and blocks until the run ends; ``evaluate_async`` is awaited.

    - ``dataset``: a Dataset, a file path, or a list of cases.
    - ``target``: an async callable ``case -> Reply``, or a name (a registered target,
      ``module:function``, an ``http(s)://`` URL) built with ``target_options``.

    The keywords, in the order a user reaches for them:

    - ``judge``: a Judge, a model spec (``"local"``, ``"openai:MODEL"``, ...) or None for checks only.
    - ``capture``: record the agent's model calls per case and build its Reply from them:
      "openai", "anthropic" (the SDKs) and/or "otel" (its GenAI/OpenInference spans); the
      target may then take the question and return only the answer (docs/agents.md).
    - ``store``: a RunStore or URL (default ``$TRACEGRADE_DB``, else ``.tracegrade/runs.db``).
    - ``out``: a folder for ``results.json``, ``junit.xml`` and ``summary.md``.
    - ``settings``: concurrency, timeout, repeats, flaky re-runs, prices (RunSettings).
    - ``checks``: run beside the built-in and installed ones on the cases they apply to.
    - ``user_model``: the model that plays a case's simulated ``user`` (docs/trajectory.md): a
      ChatModel or a spec (default ``$TRACEGRADE_USER_MODEL``, else local), loaded at the first
      user turn; when None, ``settings.user_model`` if that is set.
    - ``target_options``: options a named target is built with
      (e.g. ``{"agent_model": "openai:gpt-4o-mini"}``).
    - ``resume``: a stored run id to finish.
    - ``budget_usd``: stop the run once it has spent this much.
    - ``flag_thresholds``: where the FLAGS section flags a group, over the defaults, as
      ``"passRate>=0.9"`` or ``"tools.duplicateSideEffects<=0"`` (flags never fail a run).
    - ``replay_users``: a stored run (id, ``latest``, a results.json, or a Run) whose simulated
      users' turns are sent again while the agent's replies match the stored ones; the first
      reply that differs is marked on the case and the live user model goes on from there.
    - ``telemetry``: record the run's spans (OTLP when configured; docs/observability.md).
    - ``record``: extra facts for the manifest's settings (the CLI's flags).
    - ``on_start`` sees the manifest before the first case (its run id is what ``resume``
      takes); ``on_result`` sees each case as it is stored; ``on_finish`` sees the Evaluation
      at the end (the run's tally, component metrics and files, from one read of the store).
    - ``executor``: how a case is run (local by default; ``run.executors`` for Ray).
    """
    cases = as_dataset(dataset)
    # WHY only when given: the metrics load after the first case (a checks-only run starts sooner)
    thresholds = parse_thresholds(flag_thresholds) if flag_thresholds else None
    if isinstance(dataset, (str, Path)):
        record = {**dataset_record(dataset), **(record or {})}
    if flag_thresholds:
        record = {**(record or {}), "flagThresholds": list(flag_thresholds)}
    options = {k: v for k, v in (target_options or {}).items() if v is not None}
    agent = named_target(target, capture, options) if isinstance(target, str) else function_target(target, capture)
    if probe := getattr(agent, "probe", None):
        await probe()  # before the run exists: a wrong target stores nothing
    the_judge = as_judge(judge)
    settings = replace(settings, checks=(*settings.checks, *checks, *installed_checks()),
                       checks_only=settings.checks_only or the_judge is None,
                       user_model=settings.user_model if user_model is None and settings.user_model
                       else as_user_model(user_model))
    the_store = store if isinstance(store, RunStore) else open_store(store)
    try:
        if replay_users is not None:
            replays = user_replays(replay_users, the_store)
            settings = replace(settings, replay=replays)
            record = {**(record or {}), "replayUsers": replays.run_id}
        evaluation = await _record(cases, agent, target, the_judge, settings, the_store, resume, budget_usd,
                                   executor, on_start, on_result, record or {}, telemetry,
                                   None if out is None else Path(out), thresholds)
    finally:
        if the_store is not store:  # ours to close
            the_store.close()
    if on_finish is not None:
        on_finish(evaluation)
    return evaluation.run


evaluate = blocking(evaluate_async, "evaluate")


async def _record(cases: Dataset, agent: Target, target: Target | Callable[..., Any] | str, judge: Judge | None, settings: RunSettings,
                  store: RunStore, resume: str | None, budget_usd: float | None, executor: Evaluate,
                  on_start: Callable[[Manifest], None] | None, on_result: Callable[[CaseResult], None] | None,
                  record: Mapping[str, Any], telemetry: bool, out: Path | None,
                  thresholds: Mapping[str, Threshold] | None) -> Evaluation:
    if resume:
        manifest = resumable(store, resume, cases, judge)
    else:
        manifest = new_manifest(cases, agent, target, judge, record)
    if on_start is not None:
        on_start(manifest)
    budget = None
    if budget_usd is not None:
        already = spent_usd(store.load_run(manifest.run_id).results) if resume else 0.0
        budget = Budget(budget_usd, already)
    writers: list[OutputWriters] = []

    def outputs() -> tuple[CaseWriter, ...]:  # made after the first case: the report code loads after it
        if out is None:
            return ()
        from tracegrade.outputs.files import output_writers

        writers[:] = [output_writers(manifest)]  # WHY in place: a read begun live and left to the end starts anew
        return writers[0].per_result()

    settings = replace(settings, run_id=manifest.run_id)
    with _run_spans(manifest, telemetry):
        evaluation = await record_run(cases.cases, agent, judge, settings, store, manifest, resume=bool(resume),
                                      budget=budget, on_result=on_result, evaluate=executor, readers=outputs,
                                      thresholds=thresholds)
    if out is None:
        return evaluation
    from tracegrade.outputs.files import finish_outputs

    return replace(evaluation, files=finish_outputs(writers[0], evaluation.run, evaluation.summary,
                                                    evaluation.metrics, out))


def user_replays(given: str | Run, store: RunStore) -> UserReplays:
    """The simulated users' turns of the run ``given`` names (store/runref.py), for replay."""
    from tracegrade.agent.replay import UserReplays
    from tracegrade.store.runref import load

    run = given if isinstance(given, Run) else load(given, store)
    return UserReplays.of(run.manifest.run_id, run.results)


def parse_thresholds(given: Sequence[str]) -> dict[str, Threshold]:
    """The flags' thresholds: the defaults, with each ``METRIC>=X`` / ``METRIC<=X`` of ``given``
    in place of the metric's own; ConfigError naming a wrong one.

        >>> str(parse_thresholds(["passRate>=0.9"])["passRate"])
        '>= 0.9'
    """
    import re

    from tracegrade.metrics.stratify import THRESHOLDS, Threshold

    chosen = dict(THRESHOLDS)
    for text in given:
        found = re.fullmatch(r"\s*([\w.@]+)\s*(>=|<=)\s*(\d+(?:\.\d+)?)\s*", text)
        if found is None or found[1] not in THRESHOLDS:
            raise ConfigError(f"flag threshold {text!r}: write METRIC>=X or METRIC<=X, METRIC one of "
                              f"{', '.join(THRESHOLDS)} (a judge metric's threshold is the rubric's)")
        value = float(found[3])
        chosen[found[1]] = Threshold(minimum=value) if found[2] == ">=" else Threshold(maximum=value)
    return chosen


def _run_spans(manifest: Manifest, on: bool) -> contextlib.AbstractContextManager[None]:
    from tracegrade.observe.destinations import eval_spans_wanted

    if not on or not eval_spans_wanted():  # WHY asked first: OpenTelemetry loads only when spans will go somewhere
        return contextlib.nullcontext()
    from tracegrade.observe.telemetry import eval_run_spans

    return eval_run_spans(manifest)


def as_dataset(dataset: DatasetLike) -> Dataset:
    if isinstance(dataset, Dataset):
        return dataset
    if isinstance(dataset, (str, Path)):
        return load_dataset(dataset)
    cases = tuple(c if isinstance(c, GoldenCase) else GoldenCase.model_validate(c) for c in dataset)
    return Dataset("inline", cases)


def as_judge(judge: JudgeLike) -> Judge | None:
    if not isinstance(judge, str):  # None (checks only) or a Judge already
        return judge
    from tracegrade.judge.scoring import Judge, load_rubric
    from tracegrade.models import load_model, model_spec

    return Judge(load_model(model_spec("judge", judge), role="judge"), load_rubric())


def dataset_record(path: str | Path) -> dict[str, str]:
    """The manifest settings that say where a run's dataset file is and what it calls itself:
    ``datasetPath`` (absolute, tried first), ``datasetFile`` (from the folder the run ran in) and
    ``datasetName`` (the file's declared ``name``, when it has one).

    WHY beside ``manifest.dataset`` (the file's base name), not in its place: history, compare
    and the view group runs by that name, and a run from another folder is the same dataset."""
    given = Path(path).resolve()
    record = {"datasetPath": str(given), "datasetFile": os.path.relpath(given, Path.cwd())}
    name = declared_name(given)
    return {**record, "datasetName": name} if name else record


def declared_name(path: Path) -> str:
    """The ``name`` a dataset file in object form declares; '' when it has none or is not read.

    WHY a second read, bounded: the loaded Dataset keeps the cases and the file's base name only."""
    try:
        if path.suffix == ".jsonl" or path.stat().st_size > NAME_READ_BYTES:
            return ""
        text = path.read_text(encoding="utf-8")
        data = load_yaml(path, text) if path.suffix in (".yaml", ".yml") else jsontext.load(text)
    except (OSError, ValueError, RecursionError, TracegradeError):
        return ""  # load_dataset read this file already: a failure here only loses the title
    name = data.get("name") if isinstance(data, dict) else None
    return name.strip() if isinstance(name, str) else ""


def target_name(target: Target | Callable[..., Any] | str) -> str:
    """How a run names its agent: the name given, a target's ``agent_name``, else ``module:function``.

    WHY the module: two agents' functions are often both called ``answer``."""
    if isinstance(target, str):
        return target
    named = getattr(target, "agent_name", "")
    if isinstance(named, str) and named:
        return named
    qualname = getattr(target, "__qualname__", type(target).__qualname__)
    module = getattr(target, "__module__", "") or ""
    return qualname if module in ("", "__main__") else f"{module}:{qualname}"


def new_manifest(cases: Dataset, agent: Target, target: Target | str, judge: Judge | None,
                 record: Mapping[str, Any]) -> Manifest:
    name = target_name(target)
    return Manifest(
        run_id=new_run_id(),
        dataset=cases.name,
        dataset_version=cases.version,
        case_count=len(cases.cases),
        target=name,
        agent_model=getattr(agent, "model_id", name),
        judge_model=judge.model.model_id if judge else None,
        rubric_hash=judge.rubric_hash if judge else None,
        metrics=judge.metric_names if judge else (),
        prompt_version=getattr(agent, "prompt_version", "") or record.get("promptVersion") or "",
        git_commit=git_commit(),
        started_at=now_iso(),
        settings=dict(record),
    )


def resumable(store: RunStore, run_id: str, cases: Dataset, judge: Judge | None) -> Manifest:
    """The stored manifest of the unfinished run ``run_id``, if this dataset and judge can finish it."""
    ids = store.run_ids(run_id)
    if len(ids) != 1:
        raise ConfigError(f"--resume {run_id}: {'no run' if not ids else 'several runs'} with that id in {store.url}")
    info = store.info(ids[0])
    if info.status == "finished":
        raise ConfigError(f"run {info.run_id} already finished; nothing to resume")
    manifest = info.manifest
    if cases.version != manifest.dataset_version:
        raise ConfigError(f"run {manifest.run_id} measured dataset version {manifest.dataset_version}, "
                          f"this file is version {cases.version}: resume refuses to mix the two")
    if judge is not None and judge.rubric_hash != manifest.rubric_hash:
        raise ConfigError(f"run {manifest.run_id} used rubric {manifest.rubric_hash}, this one is {judge.rubric_hash}")
    return manifest
