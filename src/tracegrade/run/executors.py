"""Where a run's jobs execute: in this process (the default), or on a Ray cluster.

    >>> with local_executor() as evaluate:
    ...     evaluate.__name__
    'evaluate_with_retries'

A run is many independent cases bound by model latency, so one process with
async concurrency covers thousands. Past one machine, ``--executor ray`` sends
the jobs to Ray actors, in batches (one Ray call per job cost the driver more
than the job); the driver keeps the concurrency gate, the budget, the order of
results, the store and the reports, so a Ray run is stored where a local run is
and reads the same. A worker also makes each result's stored form (JSON,
redacted), so the driver only inserts it. Ray is an existing engine; nothing
here distributes work by itself.

Each actor builds its own target and judge once, from a *recipe*: a picklable
function of no arguments returning ``(target, judge)``, because a loaded model
does not travel between processes. What the recipe imports must be importable
by the workers: on a local Ray instance started here the driver's ``sys.path``
is passed on; on a cluster (``RAY_ADDRESS``) install your code there.

A budget stop cancels the driver's wait for the jobs in flight; the actors are
killed when the run ends, so a job that was still running is dropped there.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterator

from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import ConfigError
from tracegrade.core.results import CaseResult
from tracegrade.run.runner import Evaluate, RunSettings, evaluate_with_retries
from tracegrade.agent.targets import Target, resolve_target

if TYPE_CHECKING:  # WHY: a local run's first case does not wait for the judge's import
    from tracegrade.judge.scoring import Judge

Parts = tuple[Target, "Judge | None"]
Recipe = Callable[[], Parts]
Finished = tuple[int, CaseResult]  # a job's position in its batch, and its result
# A Ray handle to a CaseWorker actor. WHY Any: Ray types a method's ``.remote``
# only for methods decorated with ``@ray.method``; on others it reports an error.
WorkerHandle = Any
# How long a job waits for others to share its Ray call, and a finished job for
# others to share the return: at most 10 ms more a job (5% at a model latency of
# 200 ms); at 0 ms, 10,000 cases on 2 cores took 1,439 calls and 103 returns
# besides, where a call per loop turn took 3,422 and 1,543.
BATCH_WAIT_S = 0.005
EXECUTORS = ("local", "ray")


def build_parts(target: str, agent_model: str | None, prompt_version: str | None,
                judge_model: str | None, rubric: str | None, thresholds: dict[str, float] | None = None,
                not_gating: frozenset[str] = frozenset(), capture: tuple[str, ...] = ()) -> Parts:
    """The target and judge that the run command's flags name: the recipe the CLI ships
    (with ``functools.partial``). ``judge_model`` None means checks only; ``rubric`` is
    the rubric's text, ``thresholds`` and ``not_gating`` what its calibration decided;
    ``capture`` the SDKs whose calls the target's Reply is built from (hooked in the worker)."""
    from tracegrade.judge.scoring import Judge, load_rubric, parse_rubric
    from tracegrade.models import load_model

    judge = None
    if judge_model is not None:
        judge = Judge(load_model(judge_model, role="judge"), parse_rubric(rubric) if rubric else load_rubric(),
                      thresholds=thresholds or {}, not_gating=not_gating)
    return resolve_target(target, capture, agent_model=agent_model, prompt_version=prompt_version), judge


class CaseWorker:
    """A Ray actor's state: one target and one judge, evaluating batches of jobs.

    ``start`` begins a batch and ``more`` follows it; each returns the jobs that
    have finished by then (at least one, and those done ``BATCH_WAIT_S`` after it),
    as ``(position in the batch, result)``. WHY not the whole batch at once: a job
    would wait for its slowest batch-mate, and with model latencies that vary, the
    run would go at the slowest one's pace. Each result carries its stored form,
    made here instead of in the driver."""

    def __init__(self, recipe: Recipe) -> None:
        from tracegrade.store.runstore import raw_from_env

        self._target, self._judge = recipe()
        self._raw = raw_from_env()  # the store's default; a store that differs encodes itself
        self._batches: dict[int, set[asyncio.Task[Finished]]] = {}

    def ready(self) -> bool:
        return True

    async def start(self, batch: int, jobs: list[tuple[GoldenCase, int]], settings: RunSettings) -> list[Finished]:
        self._batches[batch] = {asyncio.create_task(self._job(position, case, settings, repeat))
                                for position, (case, repeat) in enumerate(jobs)}
        return await self.more(batch)

    async def more(self, batch: int) -> list[Finished]:
        done, running = await asyncio.wait(self._batches.pop(batch), return_when=asyncio.FIRST_COMPLETED)
        if running:  # WHY wait a little more: jobs finishing moments apart share one return
            more, running = await asyncio.wait(running, timeout=BATCH_WAIT_S)
            done |= more
        if running:
            self._batches[batch] = running
        return [task.result() for task in done]

    async def _job(self, position: int, case: GoldenCase, settings: RunSettings, repeat: int) -> Finished:
        from tracegrade.store.runstore import with_stored_form

        try:
            result = await evaluate_with_retries(case, self._target, self._judge, settings, repeat)
        except Exception as exc:  # the case boundary: evaluate never raises, but a batch must not die of one job
            return position, _lost(case, repeat, f"{type(exc).__name__}: {exc}")
        return position, with_stored_form(result, self._raw)


@contextlib.contextmanager
def local_executor() -> Iterator[Evaluate]:
    yield evaluate_with_retries


def init_ray(num_cpus: int | None = None) -> None:
    """Connect to ``RAY_ADDRESS`` if set, else start a local Ray instance that can
    import what this process imports."""
    if not os.environ.get("RAY_ADDRESS"):
        # WHY: a local instance otherwise registers and reaches its own nodes over
        # the machine's network address; this makes Ray use loopback (read by Ray
        # at import, and inherited by the processes it starts).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray  # optional dependency: pip install 'tracegrade[ray]'

    _stopped()
    if ray.is_initialized():
        return
    if os.environ.get("RAY_ADDRESS"):
        ray.init(log_to_driver=False)
        return
    # WHY the path through the environment Ray's processes inherit, not a runtime_env:
    # a runtime_env makes every actor wait for a worker set up for it (about 1 s on
    # 2 cores) instead of taking one of the workers Ray starts ahead (measured with
    # bench/run/ray_startup.py). Without the interpreter's own folders: every process of
    # it has them already, in their place after the standard library.
    own = tuple(os.path.join(prefix, "") for prefix in {sys.prefix, sys.base_prefix})
    paths = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p) and not os.path.join(p, "").startswith(own))
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = paths
    try:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


@contextlib.contextmanager
def ray_executor(recipe: Recipe, workers: int | None = None, concurrency: int = 32,
                 batch: int | None = None) -> Iterator[Evaluate]:
    """Jobs evaluated by ``workers`` Ray actors (default: one per CPU of the cluster),
    sent in batches of up to ``batch`` jobs (default: enough for two batches per
    actor within ``concurrency``), each batch to the actor with the fewest jobs."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs the ray package: pip install 'tracegrade[ray]'") from None
    _stopped()
    started_here = not ray.is_initialized()
    init_ray()
    # WHY the ignore: Ray leaves cluster_resources untyped.
    count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
    actor = ray.remote(num_cpus=1)(CaseWorker)
    actors: list[WorkerHandle] = [actor.options(max_concurrency=max(1, concurrency)).remote(recipe) for _ in range(count)]
    try:
        _wait_ready(ray, actors)
        # WHY two batches per actor: while the driver stores one batch's results,
        # the actor works on the other.
        yield Batches(ray, actors, batch or max(1, concurrency // (2 * count))).evaluate
    finally:
        for handle in actors:
            ray.kill(handle)
        if started_here:
            _shut_down(ray)


# The Ray instance this process started and is still stopping, if any.
_stopping: threading.Thread | None = None


def _shut_down(ray: ModuleType) -> None:
    """Stop the local Ray instance in a thread. WHY: ``ray.shutdown`` waits about
    1.4 s for Ray's processes to go, while the driver has the run's totals and
    reports to write; not a daemon thread, so the interpreter still waits for it."""
    global _stopping
    _stopping = threading.Thread(target=ray.shutdown, name="tracegrade-ray-shutdown")
    _stopping.start()


def _stopped() -> None:
    """Wait until the instance this process was stopping has stopped: one still
    stopping is not one to reuse."""
    if _stopping is not None:
        _stopping.join()


def _wait_ready(ray: ModuleType, actors: list[WorkerHandle]) -> None:
    try:
        ray.get([handle.ready.remote() for handle in actors])
    except ray.exceptions.RayError as exc:
        raise ConfigError(f"a Ray worker could not build the target or judge: {exc}") from None


def _lost(case: GoldenCase, repeat: int, why: str) -> CaseResult:
    return CaseResult(case_id=case.id, status="error", question=case.question, split=case.split,
                      category=case.category, risk=case.risk, repeat=repeat, case_hash=case.content_hash()[:12],
                      error=f"ray worker failed: {why[:300]}")


@dataclass
class _Job:
    case: GoldenCase
    repeat: int
    done: asyncio.Future[CaseResult]


class Batches:
    """The driver's side of the Ray executor: ``evaluate`` is awaited per job, as the
    runner wants, while the jobs travel in batches.

    WHY batches: one Ray call costs the driver about 0.5 ms of CPU, more than a
    case's own work at low latency; a batch of 8 costs about 0.06 ms a job. A batch
    goes when it has ``size`` jobs or its first job has waited ``wait_s`` (Ray
    Serve's ``max_batch_size`` and ``batch_wait_timeout_s``). WHY a wait and not
    one turn of the event loop: finished jobs come back a few at a time (each
    group commit releases its own), so a turn's batch held 3 jobs on average.
    Mutable on purpose: the jobs waiting and each actor's load are the executor's
    running state."""

    def __init__(self, ray: ModuleType, actors: list[WorkerHandle], size: int, wait_s: float = BATCH_WAIT_S) -> None:
        self._ray, self._actors, self._size, self._wait_s = ray, actors, size, wait_s
        self._load = dict.fromkeys(range(len(actors)), 0)  # jobs in flight per live actor
        self._waiting: list[_Job] = []
        self._settings: RunSettings | None = None
        self._soon: asyncio.TimerHandle | None = None
        self._following: set[asyncio.Task[None]] = set()
        self._ids = itertools.count()

    async def evaluate(self, case: GoldenCase, target: Target, judge: Judge | None, settings: RunSettings,
                       repeat: int = 0) -> CaseResult:
        loop = asyncio.get_running_loop()
        if self._waiting and settings is not self._settings:
            self._send()  # a batch shares one settings
        self._settings = settings
        job = _Job(case, repeat, loop.create_future())
        self._waiting.append(job)
        if len(self._waiting) >= self._size:
            self._send()
        elif self._soon is None:
            self._soon = loop.call_later(self._wait_s, self._send)
        return await job.done

    def _send(self) -> None:
        if self._soon is not None:
            self._soon.cancel()
            self._soon = None
        jobs = [job for job in self._waiting if not job.done.done()]  # a budget stop cancelled the others
        self._waiting = []
        if not jobs:
            return
        if not self._load:
            for job in jobs:
                _give(job, _lost(job.case, job.repeat, "no Ray worker is left"))
            return
        index = min(self._load, key=self._load.__getitem__)
        self._load[index] += len(jobs)
        task = asyncio.get_running_loop().create_task(self._follow(index, jobs, self._settings))
        self._following.add(task)  # WHY kept: the loop holds only weak references to tasks
        task.add_done_callback(self._following.discard)

    async def _follow(self, index: int, jobs: list[_Job], settings: RunSettings | None) -> None:
        """The batch's results into its jobs as the actor finishes them; a lost actor
        fails the jobs it had not returned (the case boundary) and takes no more."""
        actor, batch, open_jobs = self._actors[index], next(self._ids), dict(enumerate(jobs))
        call = actor.start.remote(batch, [(job.case, job.repeat) for job in jobs], settings)
        try:
            while open_jobs:
                for position, result in await call:
                    _give(open_jobs.pop(position), result)
                    self._unload(index, 1)
                if all(job.done.done() for job in open_jobs.values()):
                    break  # nobody waits for the rest (a budget stop); the actor is killed at the end
                call = actor.more.remote(batch)
        except self._ray.exceptions.RayError as exc:
            if isinstance(exc, self._ray.exceptions.RayActorError):
                self._load.pop(index, None)
            for job in open_jobs.values():
                _give(job, _lost(job.case, job.repeat, f"{type(exc).__name__}: {exc}"))
        finally:
            self._unload(index, len(open_jobs))

    def _unload(self, index: int, jobs: int) -> None:
        if index in self._load:  # not a lost actor
            self._load[index] -= jobs


def _give(job: _Job, result: CaseResult) -> None:
    if not job.done.done():  # its waiter was cancelled (a budget stop): nobody to tell
        job.done.set_result(result)
