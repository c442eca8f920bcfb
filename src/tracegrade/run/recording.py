"""A run that records itself: the manifest when it starts, each case the moment
it finishes, the totals when it ends. Resuming is the same call on a stored
run: the cases already in the store are not run again.

    >>> # evaluation = asyncio.run(record_run(cases, target, judge, settings, store, manifest))

The store is the truth: the Run returned is read back from it, so a resumed
run reports the cases of every session that worked on it. It is read once:
that read gives the totals stored with the run, its metrics and the rows of
every report given as a reader. A new run makes that read as its cases commit
(``run.reading``: each as the store holds it, in the store's order); the others
read the store at the end.
"""

from __future__ import annotations

import asyncio
import collections
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from tracegrade.stats.tally import RunTally
from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import StoreError
from tracegrade.store.run_ids import now_iso
from tracegrade.stats.pricing import unpriced
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.run.reading import LiveRead
from tracegrade.run.runner import Budget, Evaluate, RunSettings, evaluate_with_retries, run_cases
from tracegrade.store.runstore import RunStore, StoredForm, redaction_key, stored_form
from tracegrade.store.writer import StoreWriter, start_writer
from tracegrade.agent.targets import Target

if TYPE_CHECKING:
    from tracegrade.judge.scoring import Judge
    from tracegrade.metrics import Reader, RunMetrics
    from tracegrade.metrics.stratify import Threshold


@dataclass(frozen=True)
class Evaluation:
    """A run as stored (its status: finished, or stopped when the budget ran out
    first), with what reading it once gave: its tally, its metrics and the files written."""

    run: Run
    summary: RunTally
    metrics: RunMetrics
    files: tuple[Path, ...] = ()  # results.json, junit.xml, summary.md under ``out``/RUN_ID, when asked for


async def record_run(
    cases: Sequence[GoldenCase],
    target: Target,
    judge: Judge | None,
    settings: RunSettings,
    store: RunStore,
    manifest: Manifest,
    resume: bool = False,
    budget: Budget | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    evaluate: Evaluate = evaluate_with_retries,
    readers: Callable[[], Sequence[Reader]] = tuple,
    thresholds: Mapping[str, Threshold] | None = None,
) -> Evaluation:
    """Run (or finish) the run ``manifest`` names; returns it as stored (with its
    status), its tally and its metrics. The readers ``readers()`` makes once the cases are done (report
    writers, say: WHY made then, the report code loads after the first case)
    are fed every stored result in the same read. ``thresholds``: where the metrics flag a group
    (default: the metrics' own, ``metrics.stratify.THRESHOLDS``)."""
    # WHY a lock: two processes resuming one run would both pay for the same cases.
    with store.run_lock(manifest.run_id):
        if resume:
            await asyncio.to_thread(store.reopen_run, manifest.run_id)
        else:
            await asyncio.to_thread(store.start_run, manifest)
        try:
            return await _record(cases, target, judge, settings, store, manifest, budget, on_result, evaluate,
                                 readers, thresholds)
        except StoreError as exc:
            await asyncio.to_thread(_mark_failed, store, manifest, exc)
            raise


def _mark_failed(store: RunStore, manifest: Manifest, error: StoreError) -> None:
    """The run ended on a store error (its writer process died or stopped answering, a commit failed):
    say so in the store, with the reason, rather than leave it ``running`` as if it still were."""
    try:
        store.finish_run(replace(manifest, ended_at=now_iso(), totals={"error": str(error)}), "failed")
    except Exception:  # noqa: BLE001 - the store may be what failed; the first error is the story
        pass  # the run stays `running`, which --resume finishes as well


async def _record(
    cases: Sequence[GoldenCase], target: Target, judge: Judge | None, settings: RunSettings, store: RunStore,
    manifest: Manifest, budget: Budget | None, on_result: Callable[[CaseResult], None] | None,
    evaluate: Evaluate, readers: Callable[[], Sequence[Reader]], thresholds: Mapping[str, Threshold] | None,
) -> Evaluation:
    run_id = manifest.run_id
    done = await asyncio.to_thread(store.done_keys, run_id)

    # WHY only a new run of one repetition: its store order is the order its jobs start in (run.reading)
    live = LiveRead(cases, readers, thresholds) if not done and settings.repeat == 1 else None
    writer = await start_writer(store, run_id) if _writer_wanted(len(cases) * settings.repeat - len(done)) else None
    commits = (GroupCommit(store, run_id, on_stored=on_result, read=live) if writer is None
               else PipedCommit(store, run_id, writer, on_stored=on_result, read=live))
    try:
        await run_cases(cases, target, judge, settings, on_result=commits.save, done=done, budget=budget,
                        evaluate=live.noting(evaluate) if live else evaluate,
                        keep=False)  # the store keeps them; the Run below is read back from it
    except* StoreError as group:
        raise group.exceptions[0] from None  # one store failure is the story, not the group
    finally:
        try:
            await commits.drain()  # the finished cases still waiting for their commit: kept, even when stopping
        finally:
            if writer is not None:
                await writer.close()
    stored = await asyncio.to_thread(store.load_run, run_id)
    expected = len(cases) * settings.repeat
    # WHY a cut conversation stops the run even when it was the last job: that trial never ran whole
    status = "finished" if len(stored.results) >= expected and not (budget and budget.cut) else "stopped"
    if live is not None and live.usable:
        summary, metrics = live.finish()
    if live is None or not live.usable or live.fed != len(stored.results):
        summary, metrics = _read(stored.results, cases, readers(), thresholds)
    final = replace(manifest, ended_at=now_iso(), totals=_totals(summary, settings, manifest))
    await asyncio.to_thread(store.finish_run, final, status)
    return Evaluation(Run(final, stored.results, status), summary, metrics)


# Jobs from which a run writes its cases from a process of its own (store.writer): below it, the
# process's start (~0.3 s of CPU, its imports) costs more than it frees.
WRITER_MIN_JOBS = 2000
WRITER_ENV_VAR = "TRACEGRADE_STORE_WRITER"  # "process" or "thread" decide; unset: by the run's size


def _writer_wanted(jobs: int) -> bool:
    """Whether to write the run's cases from a writer process: asked, or a large run on more than one core."""
    asked = os.environ.get(WRITER_ENV_VAR, "")
    if asked in ("process", "thread"):
        return asked == "process"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return jobs >= WRITER_MIN_JOBS and cores > 1 and os.name == "posix"  # WHY posix: the lock's file is passed on


def _read(results: Sequence[CaseResult], cases: Sequence[GoldenCase], readers: Sequence[Reader],
          thresholds: Mapping[str, Threshold] | None) -> tuple[RunTally, RunMetrics]:
    """The run's one read: its tally and metrics, each reader fed on the way."""
    from tracegrade.metrics import run_metrics  # WHY here: a run's first case does not wait for the metrics' import
    from tracegrade.metrics.stratify import THRESHOLDS

    summary = RunTally()
    return summary, run_metrics(results, cases, thresholds or THRESHOLDS, readers=(summary, *readers))


_Waiting = tuple[CaseResult, int]  # a finished case and its position


class GroupCommit:
    """Finished cases into the store, a group per transaction (group commit).

    A case is reported (``on_stored``: progress, results) only once its
    transaction has committed, so a kill -9 can lose no case that was reported.
    WHY groups: at low latency many cases finish while one commit (one fsync)
    runs; they all share the next one instead of queueing for one each. WHY
    ``save`` does not wait for the commit (unless BACKLOG cases already do): a
    worker waiting out the fsync left the event loop idle a tenth of a large
    run. An idle run still commits each case at once. A failed commit fails the
    next ``save`` and ``drain``: the run stops with the store's error."""

    # Finished cases not yet committed; past it a worker waits until fewer are. WHY not for its own
    # case's commit: its case is in the newest group, which goes to the store only once the groups
    # before it are committed; waiting for it stopped every worker until the pipeline was empty,
    # and a large run's loop then sat idle a quarter of its time.
    BACKLOG = 1024

    def __init__(self, store: RunStore, run_id: str, on_stored: Callable[[CaseResult], None] | None = None,
                 read: LiveRead | None = None) -> None:
        self._store, self._run_id, self._on_stored = store, run_id, on_stored
        self._read = read
        self._waiting: list[_Waiting] = []
        self._uncommitted = 0
        self._room: list[asyncio.Future[None]] = []  # workers waiting for the backlog to fall below BACKLOG
        self._writer: asyncio.Task[None] | None = None
        self._failure: Exception | None = None
        self.transactions = 0

    async def save(self, result: CaseResult, position: int) -> None:
        """``result``, of the case at ``position`` in the dataset, committed soon; past BACKLOG
        uncommitted cases, returns once fewer are."""
        done = self._queue(result, position)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())
        if done is not None:
            await done

    def _queue(self, result: CaseResult, position: int) -> asyncio.Future[None] | None:
        """``result`` waiting for its commit; the future to wait on when BACKLOG cases already wait
        (None: go on). Raises the store's error if a commit failed."""
        if self._failure is not None:
            raise self._failure
        self._waiting.append((result, position))
        self._uncommitted += 1
        if self._uncommitted <= self.BACKLOG:
            return None
        room = asyncio.get_running_loop().create_future()
        self._room.append(room)
        return room

    async def drain(self) -> None:
        """Returns once every case saved so far is committed; raises the store's error if one failed."""
        if self._writer is not None:
            await asyncio.shield(self._writer)  # WHY shielded: a cancelled run still keeps its finished cases
        if self._failure is not None:
            raise self._failure

    async def _write(self) -> None:
        while self._waiting and self._failure is None:
            group, self._waiting = self._waiting, []
            try:
                forms = await asyncio.to_thread(self._save, group)
            except Exception as exc:  # the whole group is not stored: the run stops with this error
                self._fail(exc)
                return
            if not self._committed(group, forms):
                return

    def _committed(self, group: list[_Waiting], forms: list[StoredForm]) -> bool:
        """``group``'s transaction is done: its waiters go on, each case is reported and read.
        False when a callback failed (the run stops with its error)."""
        self.transactions += 1
        self._uncommitted -= len(group)
        if self._uncommitted <= self.BACKLOG:
            self._make_room()
        try:
            for (result, position), form in zip(group, forms):
                if self._on_stored is not None:
                    self._on_stored(result)
                if self._read is not None:
                    self._read.committed(result, form, position)
        except Exception as exc:  # the caller's callback: its error stops the run, as it would in a worker
            self._fail(exc)
            return False
        return True

    def _fail(self, error: Exception) -> None:
        """A commit (or a callback) failed: the run stops with ``error``, and the workers waiting for
        room see it."""
        self._failure = error
        self._make_room(error)

    def _make_room(self, error: Exception | None = None) -> None:
        waiting, self._room = self._room, []
        for room in waiting:
            if room.done():  # its worker was cancelled (a budget stop)
                continue
            if error is not None:
                room.set_exception(error)
            else:
                room.set_result(None)

    def _save(self, finished: list[tuple[CaseResult, int]]) -> list[StoredForm]:
        """Results with their positions in one transaction; what the store wrote of each. WHY the
        forms made here, not in ``save_cases``: the run's read (``LiveRead``) takes each case as written."""
        raw = self._store.raw
        key = redaction_key(raw)
        forms = [result.stored if result.stored is not None and result.stored.key == key
                 else stored_form(result, raw, key) for result, _ in finished]
        for (result, _), form in zip(finished, forms):
            object.__setattr__(result, "stored", form)  # as with_stored_form: a cache of its own encoding
        self._store.save_cases(self._run_id, finished)
        return forms


class PipedCommit(GroupCommit):
    """GroupCommit through a writer process (``store.writer``). Finished cases are handed over when
    the writer has nothing to do (at the end of this turn of the event loop), else once its answer
    comes (group commit, as in the thread), and GROUP at a time without waiting for the groups
    before them (the writer commits together the groups waiting for it). Answers come in order.

    WHY GROUP at a time: a case that never waits (an agent that answers at once) keeps its
    worker running case after case within one turn of the loop; handed over only at its end,
    BACKLOG cases piled up, and the writer then worked while the run waited (a third of its
    time). WHY not at the end of every turn: a sync agent's cases finish one a turn, and a
    group of one or two a frame cost each side more than the case's own writing."""

    def __init__(self, store: RunStore, run_id: str, writer: StoreWriter,
                 on_stored: Callable[[CaseResult], None] | None = None, read: LiveRead | None = None) -> None:
        super().__init__(store, run_id, on_stored, read)
        self._pipe = writer
        self._sent: collections.deque[list[_Waiting]] = collections.deque()  # handed over, not yet answered
        self._handing = False  # a hand-over is due at the end of this turn of the loop

    GROUP = 128  # finished cases handed over at once, at most

    async def save(self, result: CaseResult, position: int) -> None:
        done = self._queue(result, position)
        if len(self._waiting) >= self.GROUP:
            # WHY now, and a turn of the loop: a case that never waits (an agent that answers at once)
            # keeps its worker running case after case within one turn, so the hand-over at its end
            # came only once BACKLOG cases had piled up, and the writer then worked while the run waited
            self._hand_over()
            await asyncio.sleep(0)
        elif not self._sent and not self._handing:  # else the answer in flight hands it over
            self._handing = True
            asyncio.get_running_loop().call_soon(self._hand_over)
        if done is not None:
            await done

    async def drain(self) -> None:
        self._hand_over()
        if self._writer is not None:
            await asyncio.shield(self._writer)  # WHY shielded: a cancelled run still keeps its finished cases
        if self._failure is not None:
            raise self._failure

    def _hand_over(self) -> None:
        self._handing = False
        if not self._waiting or self._failure is not None:
            return
        group, self._waiting = self._waiting, []
        try:
            self._pipe.send(group)
        except Exception as exc:  # not handed over (a result that cannot be pickled, the writer gone): the run stops
            self._fail(exc)
            return
        self._sent.append(group)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._answers())

    async def _answers(self) -> None:
        while self._sent and self._failure is None:
            try:
                forms = await self._pipe.committed()
            except Exception as exc:  # that group and those after it are not stored: the run stops
                self._fail(exc)
                return
            if not self._committed(self._sent.popleft(), forms):
                return
            if not self._sent:
                self._hand_over()  # what finished while the writer worked: the next group


def _totals(summary: RunTally, settings: RunSettings, manifest: Manifest) -> dict[str, Any]:
    totals = summary.totals()
    if settings.prices is not None:
        totals["unpricedModels"] = unpriced(settings.prices, summary.billed_agent_models, summary.judge_billed,
                                            manifest.agent_model, manifest.judge_model,
                                            _user_model_id(settings) if summary.user_billed else None)
    return totals


def _user_model_id(settings: RunSettings) -> str | None:
    return settings.user_model.model_id if settings.user_model is not None else None


def spent_usd(results: Sequence[CaseResult]) -> float:
    """What the stored cases already cost: a resumed run's budget starts there."""
    return sum(r.agent_cost_usd + r.judge_cost_usd + r.user_cost_usd for r in results)
