"""The run's one read made while it runs: every result, as the store holds it, fed to the
run's tally, metrics and report writers the moment its commit is done, in the store's order.

WHY: reading every result back from the store after the run (a JSON decode and the case
looked up and validated again, for each) was a fifth of a large checks-only run. What is
fed is what the store holds: the result itself when the store wrote it as it is (its
``StoredForm.same``: redaction changed nothing, and its free-form values read back as they
are), else its stored text read back. WHY the store's order (dataset
order): the reports list cases in it, groups are named in the order first seen, and the
metrics add up their sums in chunks of it; fed in that order, every number and file comes
out as the read after the run made them.

A result that finishes before an earlier one waits for it. A run whose order cannot be
followed as it goes (resumed: earlier sessions' cases are in the store; repeats: the store
orders a case's repetitions together), or whose waiting results pass ``WAITING``, is read
from the store at the end (``usable`` says which).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from tracegrade.core import jsontext
from tracegrade.core.results import CaseResult
from tracegrade.case.schema import GoldenCase
from tracegrade.engine.in_order import InOrder
from tracegrade.stats.tally import RunTally

if TYPE_CHECKING:
    from tracegrade.judge.scoring import Judge
    from tracegrade.metrics import MetricsReader, Reader, RunMetrics
    from tracegrade.metrics.stratify import Threshold
    from tracegrade.agent.plugins import Target
    from tracegrade.run.runner import Evaluate, RunSettings
    from tracegrade.store.runstore import StoredForm


class LiveRead:
    """Committed results into the run's tally, metrics and ``readers()``, in dataset order."""

    # Results held for an earlier case still running (a slow one): past this many, the read
    # is left to the end of the run, so memory stays bounded whatever the agent does.
    WAITING = 4096

    def __init__(self, cases: Sequence[GoldenCase], readers: Callable[[], Sequence[Reader]],
                 thresholds: Mapping[str, Threshold] | None) -> None:
        self._readers, self._thresholds = readers, thresholds
        self._cases = cases
        self._running: dict[str, GoldenCase] = {}  # each job's case, from its start to its commit
        self._line: InOrder[tuple[CaseResult, GoldenCase | None]] = InOrder(self._feed, self.WAITING)
        self._summary = RunTally(repeated=False)  # WHY: a run read as it goes is one of one repetition
        self._metrics: MetricsReader | None = None  # made at the first result: the metrics load after it
        self.fed = 0

    def noting(self, evaluate: Evaluate) -> Evaluate:
        """``evaluate`` that notes which case each job ran, so its result is read with it."""
        running = self._running

        async def evaluated(case: GoldenCase, target: Target, judge: Judge | None, settings: RunSettings,
                            repeat: int) -> CaseResult:
            running[case.id] = case
            return await evaluate(case, target, judge, settings, repeat)

        return evaluated

    def committed(self, result: CaseResult, form: StoredForm, position: int) -> None:
        """``result`` (at ``position`` in the dataset) is in the store as ``form``: read it now,
        or once every case before it is."""
        case = self._running.pop(result.case_id, None)
        if self.usable:
            self._line.put(position, (as_stored(result, form), case))

    @property
    def usable(self) -> bool:
        """Whether the read made as the run went holds every result (else the store is read at the end)."""
        return not self._line.overflowed

    def finish(self) -> tuple[RunTally, RunMetrics]:
        """The tally and metrics of every result committed (those after a case that never
        finished, a budget stop, read now in their order)."""
        for waiting in self._line.rest():
            self._feed(waiting)
        return self._summary, self._reader().finish()

    def _feed(self, item: tuple[CaseResult, GoldenCase | None]) -> None:
        self._reader().add(*item)
        self.fed += 1

    def _reader(self) -> MetricsReader:
        if self._metrics is None:
            from tracegrade.metrics import MetricsReader  # WHY here: a run's first case does not wait for it
            from tracegrade.metrics.stratify import THRESHOLDS

            self._metrics = MetricsReader(self._cases, self._thresholds or THRESHOLDS,
                                          readers=(self._summary, *self._readers()))
        return self._metrics


def as_stored(result: CaseResult, form: StoredForm) -> CaseResult:
    """``result`` as reading ``form`` back from the store gives it: itself when the store
    wrote it as it was, else its stored text read back."""
    return result if form.same else CaseResult.from_json(jsontext.load(form.text))
