"""Every run-level number of a run, from one read of each of its results.

    >>> from tracegrade.core.results import CaseResult
    >>> t = tally([CaseResult("a", "pass", seconds=1.0), CaseResult("b", "fail", seconds=3.0)])
    >>> t.passed, t.pass_rate, t.latency()["p50"]
    (1, 0.5, 1.0)

WHY one accumulator: a stored run's results are held compressed and decoded
on every read (``store.compact``), and a pass per metric, per report and per
total read each one about 87 times (`git show 1b5ab6e:bench/README.md`). A RunTally reads each result once (``add``) and
keeps only counts, ids and per-case numbers (a few MB at 100,000 cases, not
the decoded results); the report functions over a list in ``stats.summary``
and ``stats.aggregate`` are this tally's views.

WHY the per-case numbers in arrays and one int per case: they are held from a
case's commit to the end of the run, so they are what a run's memory grows with;
a float object and its pointer in a list took 32 bytes, in an array 8, and a
case's [passes, trials] list with its dict entry ~150 bytes, an int ~80. WHY no
more than the latencies for a run of one repetition without prices: its costs are
zeros (``Summed`` counts them) and it never shows pass^k (``RunTally(repeated=False)``
keeps no counts for it).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from dataclasses import dataclass, field
from statistics import mean
from typing import Any, Iterable, Sequence

from tracegrade.core.results import CaseResult
from tracegrade.stats.pricing import billed_agent_model
from tracegrade.stats.passk import case_pass_hat, pass_hat


@dataclass
class RunTally:
    """Running sums over a run's results; mutable on purpose, like a Budget: fed one result at a time."""

    statuses: Counter[str] = field(default_factory=Counter)
    failed_by_checks: int = 0  # of the "fail" statuses: those a check failed (the rest the judge failed)
    failed: list[str] = field(default_factory=list)  # ids of failed and errored cases, in run order
    unscored: list[tuple[str, str]] = field(default_factory=list)  # (id, why)
    flaky: list[tuple[str, tuple[str, ...], str]] = field(default_factory=list)  # (id, attempts, final status)
    seconds: array[float] = field(default_factory=lambda: array("d"))
    service_seconds: array[float] = field(default_factory=lambda: array("d"))
    agent_usd: Summed = field(default_factory=lambda: Summed())
    judge_usd: Summed = field(default_factory=lambda: Summed())
    user_usd: Summed = field(default_factory=lambda: Summed())  # a simulated user's model (agent/simulated.py)
    user_tokens: list[int] = field(default_factory=lambda: [0, 0])
    tokens_in_out: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # agent in, out, judge in, out
    retries: list[int] = field(default_factory=lambda: [0, 0])  # agent, judge
    checks: list[int] = field(default_factory=lambda: [0, 0])  # passed, run
    scores: dict[str, list[float]] = field(default_factory=dict)  # judge metric -> values, first-seen order
    not_scored: dict[str, int] = field(default_factory=dict)
    repeats: set[int] = field(default_factory=set)
    # False: the results are one repetition's (a second one is an error), so no pass^k counts are kept
    repeated: bool = True
    # case id -> passes << 40 | unscored << 20 | trials, for pass^k (stats/passk.py): an unscored trial is
    # a trial that did not pass, and the reports say how many there were
    trials: dict[str, int] = field(default_factory=dict)
    # For the price check (pricing.unpriced): what billed_agent_model says of each
    # result, and whether the judge used any tokens.
    billed_agent_models: set[str | None] = field(default_factory=set)
    judge_billed: bool = False
    user_billed: bool = False

    def add(self, r: CaseResult) -> None:
        status, checks = r.status, r.checks
        self.statuses[status] += 1
        if status in ("fail", "error"):
            self.failed.append(r.case_id)
            self.failed_by_checks += status == "fail" and not all(c.passed for c in checks)
        elif status == "unscored":
            self.unscored.append((r.case_id, r.error))
        if r.attempts and r.flaky:  # WHY attempts first: most results were never re-run
            self.flaky.append((r.case_id, r.attempts, status))
        self._add_usage(r)
        if checks:
            self.checks[0] += sum([c.passed for c in checks])
            self.checks[1] += len(checks)
        self._add_scores(r)
        self.repeats.add(r.repeat)
        if not self.repeated:
            if len(self.repeats) > 1:
                raise ValueError(f"a tally of one repetition was given repetition {r.repeat} too")
        else:
            self.trials[r.case_id] = self.trials.get(r.case_id, 0) + (int(r.passed) << 40) + 1 + (
                (status == "unscored") << 20)

    def _add_usage(self, r: CaseResult) -> None:
        self.seconds.append(r.seconds)
        reply = r.reply
        if reply is not None and reply.steps:
            self.service_seconds.append(sum([s.duration_ms for s in reply.steps]) / 1000)
        self.agent_usd.append(r.agent_cost_usd)
        self.judge_usd.append(r.judge_cost_usd)
        if r.user_tokens != (0, 0) or r.user_cost_usd:
            self.user_usd.append(r.user_cost_usd)
            self.user_tokens[0] += r.user_tokens[0]
            self.user_tokens[1] += r.user_tokens[1]
            self.user_billed = True
        (agent_in, agent_out), (judge_in, judge_out) = r.agent_tokens, r.judge_tokens
        tokens = self.tokens_in_out
        tokens[0] += agent_in
        tokens[1] += agent_out
        tokens[2] += judge_in
        tokens[3] += judge_out
        self.retries[0] += r.agent_retries
        self.retries[1] += r.judge_retries
        self.billed_agent_models.add(billed_agent_model(r))
        self.judge_billed = self.judge_billed or any(r.judge_tokens)

    def _add_scores(self, r: CaseResult) -> None:
        add_scores(self.scores, r)
        for m in r.metrics:
            if not m.scored:
                self.not_scored[m.name] = self.not_scored.get(m.name, 0) + 1

    @property
    def cases(self) -> int:
        return len(self.seconds)

    @property
    def passed(self) -> int:
        return self.statuses["pass"]

    @property
    def pass_rate(self) -> float:
        return self.passed / self.cases if self.cases else 0.0

    @property
    def metric_names(self) -> list[str]:
        return list(self.scores)

    def score_averages(self) -> dict[str, float]:
        """Mean of each metric over the cases that scored it: an unscored case would skew it."""
        return {name: mean(values) for name, values in self.scores.items() if values}

    def check_pass_rate(self) -> float | None:
        return self.checks[0] / self.checks[1] if self.checks[1] else None

    def quality(self) -> dict[str, float]:
        """taskSuccess (the pass rate), checkPassRate and each judge metric's mean, when there is data for it."""
        metrics: dict[str, float] = {"taskSuccess": self.pass_rate} if self.cases else {}
        checks = self.check_pass_rate()
        if checks is not None:
            metrics["checkPassRate"] = checks
        return {**metrics, **self.score_averages()}

    def latency(self) -> dict[str, float]:
        return _percentiles(self.seconds)

    def service_latency(self) -> dict[str, float] | None:
        return _percentiles(self.service_seconds) if self.service_seconds else None

    def cost(self) -> dict[str, Any]:
        agent, judge, user = self.agent_usd.total(), self.judge_usd.total(), self.user_usd.total()
        total = agent + judge + user
        # WHY userUsd only with a simulated user: the other runs' totals keep their shape
        return {
            "agentUsd": agent,
            "judgeUsd": judge,
            **({"userUsd": user} if self.user_billed else {}),
            "totalUsd": total,
            "perCaseUsd": total / self.cases if self.cases else 0.0,
            "perSuccessUsd": total / self.passed if self.passed else None,
        }

    def tokens(self) -> dict[str, list[int]]:
        used = {"agent": self.tokens_in_out[:2], "judge": self.tokens_in_out[2:]}
        return {**used, "user": list(self.user_tokens)} if self.user_billed else used

    def pass_hat(self) -> dict[int, float]:
        """The run's pass^1..pass^k (stats/passk.py), k the fewest scored trials of a case."""
        return pass_hat({case_id: _counts(code) for case_id, code in self._trials().items()})

    def case_pass_hat(self) -> dict[str, dict[int, float]]:
        """Each case's pass^1..pass^n over its n trials."""
        return {case_id: case_pass_hat(*_counts(code)) for case_id, code in self._trials().items()}

    def unscored_trials(self) -> dict[str, int]:
        """How many of each case's trials were unscored (cases with none left out)."""
        return {case_id: code >> 20 & _FIELD for case_id, code in self._trials().items() if code >> 20 & _FIELD}

    def _trials(self) -> dict[str, int]:
        if not self.repeated:
            raise ValueError("a tally of one repetition keeps no pass^k counts")
        return self.trials

    def totals(self) -> dict[str, Any]:
        """What the manifest records at the end of a run; ``passHatK`` only for a run of repeats."""
        totals = {
            "cases": self.cases,
            "passed": self.passed,
            "flaky": sorted({case_id for case_id, _, _ in self.flaky}),
            "tokens": self.tokens(),
            "costUsd": self.cost(),
            "latencyS": self.latency(),
        }
        if len(self.repeats) > 1:
            totals["passHatK"] = {"run": {str(k): v for k, v in self.pass_hat().items()},
                                  "cases": {case_id: list(by_k.values()) for case_id, by_k in self.case_pass_hat().items()},
                                  "unscored": self.unscored_trials()}
        return totals


class Summed:
    """Values summed at the end, in the order given, as ``sum()`` over them would be; while
    every value is zero, only how many were given is held.

        >>> zeros, costs = Summed(), Summed()
        >>> for value in (0.0, 0.0):
        ...     zeros.append(value)
        >>> for value in (0.0, 0.1, 0.2):
        ...     costs.append(value)
        >>> zeros.total(), costs.total() == sum([0.0, 0.1, 0.2]), Summed().total()
        (0.0, True, 0)

    WHY: a run without prices costs 0.0 a case, and those zeros were 8 bytes a case held
    to the end of the run; ``sum()`` of zeros from its start of 0 is 0.0, on every Python
    (3.12's compensated sum too), and zeros before the first other value add nothing to it.
    """

    __slots__ = ("_zeros", "_values")

    def __init__(self) -> None:
        self._zeros = 0
        self._values: array[float] | None = None

    def append(self, value: float) -> None:
        if self._values is None:
            if value == 0.0:
                self._zeros += 1
                return
            self._values = array("d", bytes(8 * self._zeros))  # the zeros so far, as 0.0 each
        self._values.append(value)

    def __len__(self) -> int:
        return self._zeros if self._values is None else len(self._values)

    def total(self) -> float:
        """``sum()`` of the values (the int 0 for none, as ``sum([])``)."""
        if self._values is None:
            return 0.0 if self._zeros else 0
        return sum(self._values)


_FIELD = 0xF_FFFF  # one count of a ``RunTally.trials`` entry: 20 bits


def _counts(code: int) -> tuple[int, int]:
    """(passes, trials) of a case, from its ``RunTally.trials`` entry."""
    return code >> 40, code & _FIELD


def tally(results: Iterable[CaseResult]) -> RunTally:
    """A RunTally of ``results``, each read once."""
    summary = RunTally()
    for result in results:
        summary.add(result)
    return summary


def add_scores(scores: dict[str, list[float]], r: CaseResult) -> None:
    """``r``'s judge scores appended to ``scores`` (metric -> values).

    WHY names from the metrics first, then the scores: the judge's order, with
    a metric no case could score included (an empty list)."""
    for m in r.metrics:
        scores.setdefault(m.name, [])
    for name, value in (r.scores or {}).items():
        scores.setdefault(name, []).append(value)


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    return {f"p{q}": percentile(values, q) for q in (50, 95, 99)}


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): the smallest value with at least q%
    of the values at or below it, numpy's ``method="inverted_cdf"``. The one
    definition every report, the dashboard and the gates use; 0.0 for no values.

        >>> percentile([1, 2, 3, 4, 5, 6], 50), percentile(range(1, 21), 95)
        (3, 19)
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    # WHY ceil and a tolerance, not round(): round() is half-to-even, which put p50
    # of six values on the 4th; 1e-9 keeps 0.95 * 20 = 19.000000000000004 at 19.
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered) - 1e-9)))
    return ordered[rank - 1]
