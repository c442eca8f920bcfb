"""Where a run's jobs execute: in this process (the default), or on a Ray cluster.

    >>> with local_executor() as evaluate:
    ...     evaluate.__name__
    'evaluate_with_retries'

A run is many independent cases bound by model latency, so one process with
async concurrency covers thousands. Past one machine, ``--executor ray`` sends
each job to a Ray actor; the driver keeps everything else (the concurrency gate,
the budget, the store, the reports), so a Ray run is stored where a local run
is and reads the same. Ray is an existing engine; nothing here distributes work
by itself.

Each actor builds its own target and judge once, from a *recipe*: a picklable
function of no arguments returning ``(target, judge)``, because a loaded model
does not travel between processes. What the recipe imports must be importable
by the workers: on a local Ray instance started here the driver's ``sys.path``
is passed on; on a cluster (``RAY_ADDRESS``) install your code there.

A budget stop cancels the driver's wait for the jobs in flight; the actors are
killed when the run ends, so a job that was still running is dropped there.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Callable, Iterator

from tracegrade.eval.dataset import GoldenCase
from tracegrade.core.errors import ConfigError
from tracegrade.core.results import CaseResult
from tracegrade.run.runner import Evaluate, RunSettings, evaluate_with_retries
from tracegrade.eval.targets import Target, resolve_target

if TYPE_CHECKING:  # WHY: a local run's first case does not wait for the judge's import
    from tracegrade.judge.scoring import Judge

Parts = tuple[Target, "Judge | None"]
Recipe = Callable[[], Parts]
EXECUTORS = ("local", "ray")


def build_parts(target: str, agent_model: str | None, prompt_version: str | None,
                judge_model: str | None, rubric: str | None, thresholds: dict[str, float] | None = None,
                not_gating: frozenset[str] = frozenset()) -> Parts:
    """The target and judge that the run command's flags name: the recipe the CLI ships
    (with ``functools.partial``). ``judge_model`` None means checks only; ``rubric`` is
    the rubric's text, ``thresholds`` and ``not_gating`` what its calibration decided."""
    from tracegrade.judge.scoring import Judge, load_rubric, parse_rubric
    from tracegrade.models import load_model

    judge = None
    if judge_model is not None:
        judge = Judge(load_model(judge_model, role="judge"), parse_rubric(rubric) if rubric else load_rubric(),
                      thresholds=thresholds or {}, not_gating=not_gating)
    return resolve_target(target, agent_model=agent_model, prompt_version=prompt_version), judge


class CaseWorker:
    """A Ray actor's state: one target and one judge, evaluating many jobs concurrently."""

    def __init__(self, recipe: Recipe) -> None:
        self._target, self._judge = recipe()

    def ready(self) -> bool:
        return True

    async def evaluate(self, case: GoldenCase, settings: RunSettings, repeat: int) -> CaseResult:
        return await evaluate_with_retries(case, self._target, self._judge, settings, repeat)


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

    if ray.is_initialized():
        return
    if os.environ.get("RAY_ADDRESS"):
        ray.init(log_to_driver=False)
        return
    paths = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": paths}})


@contextlib.contextmanager
def ray_executor(recipe: Recipe, workers: int | None = None, concurrency: int = 32) -> Iterator[Evaluate]:
    """Jobs evaluated by ``workers`` Ray actors (default: one per CPU of the cluster),
    each taking the next job while it has the fewest in flight."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs the ray package: pip install 'tracegrade[ray]'") from None
    started_here = not ray.is_initialized()
    init_ray()
    count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    actor = ray.remote(num_cpus=1)(CaseWorker)
    actors = [actor.options(max_concurrency=max(1, concurrency)).remote(recipe) for _ in range(count)]
    try:
        _wait_ready(ray, actors)
        yield _least_loaded(ray, actors)
    finally:
        for handle in actors:
            ray.kill(handle)
        if started_here:
            ray.shutdown()


def _wait_ready(ray, actors: list) -> None:
    try:
        ray.get([handle.ready.remote() for handle in actors])
    except ray.exceptions.RayError as exc:
        raise ConfigError(f"a Ray worker could not build the target or judge: {exc}") from None


def _least_loaded(ray, actors: list) -> Evaluate:
    in_flight = [0] * len(actors)

    async def evaluate(case: GoldenCase, target: Target, judge: Judge | None, settings: RunSettings,
                       repeat: int = 0) -> CaseResult:
        index = in_flight.index(min(in_flight))
        in_flight[index] += 1
        try:
            return await actors[index].evaluate.remote(case, settings, repeat)
        except ray.exceptions.RayError as exc:  # the case boundary: a lost worker fails this case
            return CaseResult(case_id=case.id, status="error", question=case.question, split=case.split,
                              category=case.category, risk=case.risk, repeat=repeat,
                              case_hash=case.content_hash()[:12],
                              error=f"ray worker failed: {type(exc).__name__}: {str(exc)[:300]}")
        finally:
            in_flight[index] -= 1

    return evaluate
