"""Runs cases concurrently and contains each case's failure.

One idiom: ``concurrency`` workers in a task group, pulling jobs. A case is the boundary where an
exception becomes data: an agent error, a timeout or a judge failure fails (or
unscores) that case with the reason, and the run goes on.

A job is one (case, repetition). Jobs already done (a resumed run) are skipped;
a failed job is re-run under the flaky policy; a budget stops new jobs and
cancels the ones in flight, so only finished cases ever reach ``on_result``.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Collection, Iterable, Sequence, TypedDict

from tracegrade.checks.builtin import CALL_CHECKS, UNSTATED_CALL_CHECKS, checks_for, run_checks
from tracegrade.checks.plugins import Check
from tracegrade.agent.conversation import play
from tracegrade.agent.simulated import CaseUser, OverBudget, case_user
from tracegrade.case.schema import CURRENT_TRIAL, GoldenCase
from tracegrade.core.errors import AgentError, SimulatedUserError, UngradableTrace
from tracegrade.core.tracebacks import raised_at
from tracegrade.core.redact import redact_secrets
from tracegrade.run.flaky import RETRIED, FlakyPolicy
from tracegrade.core.results import CheckResult, Scores, Unscored
from tracegrade.core.storable import error_text, storable_reply
from tracegrade.stats.pricing import PriceTable, price_case
from tracegrade.core.results import CaseResult
from tracegrade.agent.plugins import Target
from tracegrade.observe.clock import CaseTimes
from tracegrade.observe.destinations import tracer_possible
from tracegrade.engine.deadline import deadline
from tracegrade.engine.offload import in_thread
from tracegrade.core.trace import Reply
from tracegrade.core.verdict import case_status

if TYPE_CHECKING:  # WHY: the judge (and the model layer under it) is not needed to run checks
    from tracegrade.judge.scoring import Judge
    from tracegrade.agent.replay import UserReplays
    from tracegrade.models.base import ChatModel

# A finished job's result, with its case's position in the cases run (where the store keeps it).
OnResult = Callable[[CaseResult, int], "Awaitable[None] | None"]


class _CaseFields(TypedDict):
    """The fields every CaseResult of a case takes from it, whatever happened."""

    case_id: str
    question: str
    split: str
    category: str
    risk: str
    repeat: int
    case_hash: str


@dataclass(frozen=True)
class RunSettings:
    pass_score: float | None = None  # replaces every 1..5 scale metric's threshold (--pass-score)
    concurrency: int = 4
    timeout_s: float = 600.0
    checks_only: bool = False
    repeat: int = 1
    flaky: FlakyPolicy | None = None  # None: a failed case is not re-run
    prices: PriceTable | None = None  # None: costs stay 0
    # Checks beside the built-in ones (the user's, installed plugins'); each runs
    # on the cases it applies to.
    checks: tuple[Check, ...] = ()
    user_model: ChatModel | None = None  # plays a case's simulated `user` (agent/simulated.py)
    replay: UserReplays | None = None  # a stored run's user turns, sent first (agent/replay.py)
    run_id: str = ""  # names each trial the agent gets (GoldenCase.trial); evaluate() sets it
    budget: Budget | None = None  # run_cases sets it: a conversation checks it after every turn


def _say(message: str) -> None:
    print(f"tracegrade: {message}", file=sys.stderr)


@dataclass
class Budget:
    """Spend against a limit in USD: says so at 80%, and is exhausted at 100%. A simulated user's
    conversation also counts what it has spent so far (``running_usd``, after every turn): the
    one whose turn reaches the limit ends there and stops the run (``stop``).

    Mutable on purpose: it is the one running total the jobs of a run share.
    """

    limit_usd: float
    spent_usd: float = 0.0
    say: Callable[[str], None] = field(default=_say, repr=False)
    _warned: bool = field(default=False, repr=False)
    # What conversations still going have spent so far, turn by turn (_ConversationSpend)
    running_usd: float = field(default=0.0, repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def exhausted(self) -> bool:
        return self._stopped or self.spent_usd >= self.limit_usd

    @property
    def cut(self) -> bool:
        """A conversation was cut short by the budget (``stop``): the run stopped before it was whole."""
        return self._stopped

    def stop(self) -> None:
        """A conversation was cut by the budget: no job starts, those in flight are cancelled."""
        if not self.exhausted:
            self.say(f"budget reached during a conversation: ${self.spent_usd:.4f} of ${self.limit_usd:.4f}; "
                     "stopping (finished cases kept)")
        self._stopped = True

    def add(self, usd: float) -> None:
        was_exhausted = self.exhausted
        self.spent_usd += usd
        if self.exhausted and not was_exhausted:
            self.say(f"budget reached: ${self.spent_usd:.4f} of ${self.limit_usd:.4f}; stopping (finished cases kept)")
        elif self.spent_usd >= 0.8 * self.limit_usd and not self._warned:
            self._warned = True
            self.say(f"budget warning: ${self.spent_usd:.4f} spent, 80% of ${self.limit_usd:.4f}")


async def evaluate_case(
    case: GoldenCase, target: Target, judge: Judge | None, settings: RunSettings, repeat: int = 0, attempt: int = 0
) -> CaseResult:
    """Agent, checks, judge, verdict for one case; never raises. Its spans are built
    after it, in one batch, and only when a span exporter or store is on."""
    times = CaseTimes()
    # WHY a user per trial: its tokens and replay mark are this trial's, whatever its outcome
    spend = None if case.user is None else _conversation_spend(case, target, judge, settings)
    user = case_user(case, repeat, settings.user_model, settings.replay, spend)
    played = settings if user is None else replace(settings, user_model=user)
    # WHY set, never reset: each worker task runs its cases one after another in a context of its own,
    # and the next case sets its own; a reset's try/finally cost every checks-only case more than this
    CURRENT_TRIAL.set((settings.run_id, case.id, repeat, attempt))
    if spend is None:
        result = await _evaluate_case(case, target, judge, played, repeat, times)
    else:
        try:
            result = await _evaluate_case(case, target, judge, played, repeat, times)
        finally:
            spend.release()
    if user is not None:
        result = replace(result, user_tokens=(user.input_tokens, user.output_tokens),
                         replay=user.replay.mark() if user.replay is not None else None)
    if tracer_possible():
        from tracegrade.observe.telemetry import record_case  # WHY here: OpenTelemetry loads only when spans can go somewhere

        record_case(result, times, target, judge.model if judge else None)
    return result


async def _evaluate_case(
    case: GoldenCase, target: Target, judge: Judge | None, settings: RunSettings, repeat: int, times: CaseTimes
) -> CaseResult:
    started = time.perf_counter()
    base = _CaseFields(case_id=case.id, question=case.question, split=case.split, category=case.category,
                       risk=case.risk, repeat=repeat, case_hash=case.content_hash()[:12])
    try:
        # WHY a deadline scope, not wait_for: wait_for wraps every case's agent in a task of its own.
        with deadline(settings.timeout_s):
            reply = await play(target, case, settings.user_model)
        times.mark("agent")
        if not isinstance(reply, Reply):  # a raw target function that skipped Reply.from_wire
            raise AgentError(f"the target returned {type(reply).__name__}, not a Reply")
        if not base["question"] and reply.turns:  # a simulated user wrote the opening message
            base["question"] = reply.turns[0].content
    except asyncio.TimeoutError:
        times.mark("agent")
        if isinstance(settings.user_model, CaseUser) and settings.user_model.asking:  # WHY: no verdict on the agent
            return CaseResult(status="unscored", seconds=time.perf_counter() - started, **base,
                              error=f"simulated user: the user model had not answered when the case's "
                                    f"{settings.timeout_s:g} s (--timeout) ran out")
        return CaseResult(status="error", error=f"agent timed out after {settings.timeout_s:g} s",
                          seconds=time.perf_counter() - started, **base)
    except SimulatedUserError as exc:  # WHY unscored: the user, not the agent, could not go on
        times.mark("agent")
        kept = storable_reply(exc.reply)[0] if exc.reply else None
        if kept is not None and not base["question"] and kept.turns:  # the user's opening, as on a scored trial
            base["question"] = kept.turns[0].content
        # WHY the agent's tokens: it answered the turns so far, and its spend counts (cost, --budget)
        why = f"{OVER_BUDGET}{exc}" if isinstance(exc, OverBudget) else f"simulated user: {exc}"
        return CaseResult(status="unscored", error=redact_secrets(why), reply=kept,
                          agent_tokens=(kept.usage.input_tokens, kept.usage.output_tokens) if kept else (0, 0),
                          agent_retries=sum(step.retries for step in kept.steps) if kept else 0,
                          seconds=time.perf_counter() - started, **base)
    except UngradableTrace as exc:  # WHY unscored: the recording, not the agent, is in question
        times.mark("agent")
        return CaseResult(status="unscored", error=redact_secrets(f"not graded: {exc}"),
                          seconds=time.perf_counter() - started, **base)
    except Exception as exc:  # the case boundary; an error text may quote a secret (a 401 echoing the request)
        times.mark("agent")
        return CaseResult(status="error", error=redact_secrets(f"agent failed: {error_text(exc)}{raised_at(exc)}"),
                          seconds=time.perf_counter() - started, **base)
    try:
        reply, checks, unjudged = await _graded(case, reply, settings, started)
    except TimeoutError:
        times.mark("checks")
        return CaseResult(status="error", error=f"checks timed out: the case's {settings.timeout_s:g} s ran out",
                          seconds=time.perf_counter() - started, **base)
    except Exception as exc:  # the case boundary: a reply that not even its storable form can hold
        times.mark("checks")
        return CaseResult(status="error", error=redact_secrets(f"unusable reply: {error_text(exc)}"),
                          seconds=time.perf_counter() - started, **base)
    times.mark("checks")
    outcome = None
    if not settings.checks_only and judge is not None:
        outcome = await _judged(judge, case, reply)
        times.mark("judge")
    status = case_status(checks, outcome, settings.pass_score)
    # WHY never a pass: the call checks were left out, so nothing says the agent did what it should
    status = "unscored" if unjudged and status == "pass" else status
    scored = outcome if isinstance(outcome, Scores) else None
    return CaseResult.made(
        status=status,
        reply=reply,
        checks=checks,
        scores=dict(scored.values) if scored is not None else None,
        metrics=scored.metrics if scored is not None else (),
        judge_reason=scored.reason if scored is not None else "",
        error="; ".join(filter(None, (unjudged if status == "unscored" else "", _unscored_reason(outcome, status)))),
        seconds=time.perf_counter() - started,
        agent_tokens=(reply.usage.input_tokens, reply.usage.output_tokens),
        judge_tokens=(outcome.input_tokens, outcome.output_tokens) if outcome else (0, 0),
        judge_attempts=outcome.attempts if outcome else 0,
        agent_retries=sum(step.retries for step in reply.steps),
        judge_retries=outcome.retries if outcome else 0,
        **base,
    )


OVER_BUDGET = "budget: "  # how the error of a trial the budget cut short begins


@dataclass
class _ConversationSpend:
    """One conversation's spend, priced after every turn as its result will be, and counted with
    every other conversation under way against the run's budget: the reason to stop ("" to go on).

    Mutable on purpose: it follows one trial, and ``release`` hands its share back when the trial
    ends (its whole cost is then added to the budget as any case's)."""

    budget: Budget
    price: Callable[[Reply, tuple[int, int]], float]
    charged: float = 0.0

    def __call__(self, so_far: Reply, user_tokens: tuple[int, int]) -> str:
        cost = self.price(so_far, user_tokens)
        self.budget.running_usd += cost - self.charged
        self.charged = cost
        total = self.budget.spent_usd + self.budget.running_usd
        if total < self.budget.limit_usd:
            return ""
        return (f"the run's --budget of ${self.budget.limit_usd:.4f} was reached during the conversation "
                f"(${total:.4f} spent, ${cost:.4f} of it by this trial)")

    def release(self) -> None:
        self.budget.running_usd -= self.charged
        self.charged = 0.0


def _conversation_spend(case: GoldenCase, target: Target, judge: Judge | None,
                        settings: RunSettings) -> _ConversationSpend | None:
    """A simulated user's conversation, checked turn by turn against the budget (when the run has one and prices)."""
    if case.user is None or settings.budget is None or settings.prices is None:
        return None

    def price(so_far: Reply, user_tokens: tuple[int, int]) -> float:
        usage = so_far.usage
        partial = CaseResult(case.id, "unscored", reply=so_far, user_tokens=user_tokens,
                             agent_tokens=(usage.input_tokens, usage.output_tokens))
        priced = _priced(partial, target, judge, settings)
        return priced.agent_cost_usd + priced.user_cost_usd

    return _ConversationSpend(settings.budget, price)


def over_budget(result: CaseResult) -> bool:
    """The trial was cut short by the budget (its conversation stopped at a turn)."""
    return result.status == "unscored" and result.error.startswith(OVER_BUDGET)


CheckFunction = Callable[[GoldenCase, Reply], CheckResult]

# Replies up to this many characters are checked on the event loop when only the
# built-in checks run: their work is linear (RE2, bounded patterns), and a thread
# hop per case cost a large checks-only run about a sixth of its CPU time. Measured
# at this size (bench/checks/inline_checks.py): 11 ms at most, for a case with $regex,
# $money, $date and $number expectations over 16,000 characters of digits.
INLINE_CHARS = 16_000


async def _graded(case: GoldenCase, reply: Reply, settings: RunSettings,
                  started: float) -> tuple[Reply, tuple[CheckResult, ...], str]:
    """The reply as it will be stored, its checks, run on that form (what is graded is what
    is kept), and why call checks were left out ("" when none were). A reply that had to be
    converted fails ``storableReply`` with the reasons. Checks of a large reply, and any check
    not built in (the user's, a plugin's: their work is not ours to bound), run on a worker
    thread under what is left of the case's deadline."""
    reply, reasons, chars = storable_reply(reply)
    extra = _applicable(settings.checks, case)
    asked: list[CheckFunction] = [*checks_for(case), *extra]
    checks, unjudged = _judgeable(asked, reply)
    if extra or chars > INLINE_CHARS:
        left = max(0.0, settings.timeout_s - (time.perf_counter() - started))
        results = await in_thread(run_checks, case, reply, checks, timeout_s=left)
    else:
        results = run_checks(case, reply, checks)
    if reasons:
        results += (CheckResult("storableReply", False, "not_json", "; ".join(reasons)),)
    return reply, results, unjudged


async def _judged(judge: Judge, case: GoldenCase, reply: Reply) -> Scores | Unscored:
    """The judge's outcome; a judge that raises (a bug, a plugin's model) leaves this case
    unscored with the error, never the whole run stopped."""
    from tracegrade.models.base import unobserved  # WHY here: a checks-only run loads no model code

    try:
        with unobserved():  # the judge's own model calls are not the agent's spans
            return await judge.score(case, reply)
    except Exception as exc:  # noqa: BLE001 - any judge error is this case's, reported
        return Unscored(reason=redact_secrets(f"judge failed: {error_text(exc)}{raised_at(exc)}"))


def _judgeable(checks: list[CheckFunction], reply: Reply) -> tuple[list[CheckFunction], str]:
    """The checks that may be judged on ``reply``, and why its call checks may not ("" when
    they may): calls that are absent, cut or another case's are no evidence either way."""
    unusable = reply.calls_unusable()
    if not unusable:
        return checks, ""
    names = [getattr(check, "name", None) for check in checks]
    kept = [check for check, name in zip(checks, names) if name not in CALL_CHECKS]
    stated = [str(name) for name in names if name in CALL_CHECKS and name not in UNSTATED_CALL_CHECKS]
    return kept, f"{', '.join(stated)} not judged: {unusable}" if stated else ""


def _applicable(checks: Sequence[Check], case: GoldenCase) -> list[Check]:
    """The extra checks that apply to ``case``; one whose ``applies`` raises is run,
    so its call fails (or its error shows) inside the check boundary."""
    chosen = []
    for check in checks:
        try:
            wanted = check.applies(case)
        except Exception:  # a broken plugin shows as a failed check, not a crashed run
            wanted = True
        if wanted:
            chosen.append(check)
    return chosen


def _unscored_reason(outcome: Scores | Unscored | None, status: str) -> str:
    """The case's error when the judge left it unscored, else ""."""
    if isinstance(outcome, Unscored):
        return outcome.reason
    # WHY no None case: without a judge's outcome a case is never unscored (core.verdict.case_status).
    return _not_scored(outcome) if isinstance(outcome, Scores) and status == "unscored" else ""


def _not_scored(outcome: Scores) -> str:
    """Why a case whose judge scored some metrics is still unscored: the metrics and why."""
    by_reason: dict[str, list[str]] = {}
    for m in outcome.metrics:
        if not m.scored:
            by_reason.setdefault(m.detail.removeprefix("not scored: "), []).append(m.name)
    return "; ".join(f"{', '.join(names)} not scored: {reason}" for reason, names in by_reason.items())


async def evaluate_with_retries(
    case: GoldenCase, target: Target, judge: Judge | None, settings: RunSettings, repeat: int = 0
) -> CaseResult:
    """One job: the case, then more attempts while the flaky policy is undecided.

    The result kept is the last attempt that agrees with the decision, carrying
    every attempt's status and the tokens, cost and time of all of them.
    """
    attempts = [_priced(await evaluate_case(case, target, judge, settings, repeat), target, judge, settings)]
    policy = settings.flaky
    if policy is None or attempts[0].status not in RETRIED:
        return attempts[0]
    while (decision := policy.decide([a.status for a in attempts])) is None:
        attempt = len(attempts)
        attempts.append(_priced(await evaluate_case(case, target, judge, settings, repeat, attempt), target, judge,
                                settings))
    agreeing = [a for a in attempts if (a.status in RETRIED) == (decision == "fail")]
    return replace(
        agreeing[-1],
        attempts=tuple(a.status for a in attempts),
        seconds=sum(a.seconds for a in attempts),
        agent_tokens=_sum_pairs(a.agent_tokens for a in attempts),
        judge_tokens=_sum_pairs(a.judge_tokens for a in attempts),
        agent_cost_usd=sum(a.agent_cost_usd for a in attempts),
        judge_cost_usd=sum(a.judge_cost_usd for a in attempts),
        user_tokens=_sum_pairs(a.user_tokens for a in attempts),
        user_cost_usd=sum(a.user_cost_usd for a in attempts),
    )


def _priced(result: CaseResult, target: Target, judge: Judge | None, settings: RunSettings) -> CaseResult:
    """``result`` with its costs, when the run has prices."""
    if settings.prices is None:
        return result
    agent_model = getattr(target, "model_id", "")
    user_model = settings.user_model.model_id if settings.user_model is not None else None
    return price_case(result, settings.prices, agent_model, judge.model.model_id if judge else None, user_model)


def _sum_pairs(pairs: Iterable[tuple[int, int]]) -> tuple[int, int]:
    pairs = list(pairs)
    return (sum(p[0] for p in pairs), sum(p[1] for p in pairs))


# Runs one job. The default runs it here; tracegrade.run.executors sends it to a Ray worker.
Evaluate = Callable[[GoldenCase, Target, "Judge | None", RunSettings, int], Awaitable[CaseResult]]


async def run_cases(
    cases: Sequence[GoldenCase],
    target: Target,
    judge: Judge | None,
    settings: RunSettings = RunSettings(),
    on_result: OnResult | None = None,
    done: Collection[tuple[str, int]] = (),
    budget: Budget | None = None,
    evaluate: Evaluate = evaluate_with_retries,
    keep: bool = True,
) -> list[CaseResult]:
    """The results of every job not in ``done`` (case id, repetition), repetition-major
    in dataset order; ``on_result`` sees (and may await on) each as it finishes, with
    its case's position in ``cases``.

    With a ``budget``, no job starts once it is exhausted and jobs in flight are
    cancelled: their results are not returned and not passed to ``on_result``.
    ``evaluate`` runs one job: where it runs is its business, the gate, the
    budget and the order of results stay here. ``keep=False`` returns nothing:
    for a caller whose ``on_result`` keeps each result elsewhere (the run store).

    WHY ``concurrency`` workers pulling jobs, not a task per job: 100,000 tasks
    waiting on one semaphore held memory in proportion to the dataset.
    WHY the position handed on: the store keeps each case at it, and a map of every case
    id to its place, held to the end of the run, made memory grow with the dataset.
    """
    skip = set(done)
    if budget is not None and settings.budget is None:  # WHY in the settings: a conversation checks it every turn
        settings = replace(settings, budget=budget)
    jobs = enumerate((position, case, r) for r in range(settings.repeat) for position, case in enumerate(cases)
                     if (case.id, r) not in skip)
    results: dict[int, CaseResult] = {}
    evaluating: set[asyncio.Task[Any]] = set()

    async def worker() -> None:
        me = asyncio.current_task()
        assert me is not None  # a worker runs as a task of the group below
        for index, (position, case, repeat) in jobs:  # shared: each job goes to exactly one worker
            if budget is not None and budget.exhausted:
                return
            evaluating.add(me)
            try:
                result = await evaluate(case, target, judge, settings, repeat)
            finally:
                evaluating.discard(me)
            if budget is not None:
                # WHY no await between the check and the add: a case finishing
                # during another's store write must see the spend so far.
                cut = over_budget(result)
                if budget.exhausted and not cut:
                    return  # finished after the stop: its spend was not allowed
                budget.add(result.agent_cost_usd + result.judge_cost_usd + result.user_cost_usd)
                if cut:
                    budget.stop()  # WHY: other conversations' spend under way cut it, and need not exhaust it alone
                if budget.exhausted:
                    for task in list(evaluating):
                        task.cancel()
            if keep:
                results[index] = result
            if on_result is not None:
                outcome = on_result(result, position)
                if outcome is not None and inspect.isawaitable(outcome):
                    await outcome

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, settings.concurrency)):
            group.create_task(worker())
    return [results[i] for i in sorted(results)]
