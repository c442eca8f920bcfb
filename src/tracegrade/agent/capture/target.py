"""A user's agent function as a target, its model calls captured.

    def answer(question: str) -> str:        # or (case) -> str | Reply | dict | None
        ...the agent's own openai / anthropic tool loop...

    target = captured_target(answer, ("openai",))

The function takes the question (a first parameter annotated ``str`` or named
``question``, ``prompt``, ``query``, ``text``, ``message`` or ``input``) or
the case; it may be sync (run on a reused daemon thread, ``workers.py``, so it
never blocks other cases and the case timeout stops waiting for it) or async. It returns the
answer string, nothing (the last assistant message captured is the answer),
a Reply or its wire dict. A returned answer replaces the captured answer only.
A returned Reply keeps its answer, sources, context and state; its calls are
graded only when capture agrees with them (or capture recorded nothing), and
where they disagree the case is unscored naming both: one source of truth per
trace. Where the calls came from (``provenance``) is always set here, never
taken from what the agent returned.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import json
import warnings
from collections import Counter
from typing import Any, Callable, Iterable, Iterator, Sequence

from tracegrade.agent.capture.assemble import reply_of
from tracegrade.agent.capture.recorder import WORKER_TASK, Recorder, Shared, recording
from tracegrade.agent.capture.shape import reply_from_dict
from tracegrade.engine.workers import in_daemon_thread
from tracegrade.core.errors import AgentError, ConfigError
from tracegrade.core.trace import Provenance, Reply, ToolCall
from tracegrade.case.schema import GoldenCase
from tracegrade.agent.plugins import Target

SOURCES = ("openai", "anthropic", "otel")
# A target with this attribute set returns Replies whose provenance tracegrade itself set
# (read from recorded spans by `tracegrade grade`): it is kept, not dropped as an agent's claim.
PROVENANCE_SET = "_tracegrade_recorded"  # WHY underscored: tracegrade's own replay target sets it, no agent
_INLINE_RECORDS = 64  # recorded calls or spans put together on the event loop; more go to a thread
_QUESTION_NAMES = {"question", "prompt", "query", "text", "message", "input", "q"}


def check_sources(sources: Iterable[str]) -> tuple[str, ...]:
    """``sources`` checked and without repeats; ConfigError naming the unknown one."""
    chosen: list[str] = []
    for source in sources:
        if source not in SOURCES:
            raise ConfigError(f"unknown capture source {source!r}: use one of {', '.join(SOURCES)}")
        if source not in chosen:
            chosen.append(source)
    return tuple(chosen)


def captured_target(function: Callable[..., Any], sources: Sequence[str] = ()) -> Target:
    """``function`` as a target whose model calls (``sources``) are captured per case."""
    sources = check_sources(sources)
    _check_installed(sources)
    takes_question = wants_question(function)
    shared = Shared()  # WHY one per target: what its cases learn together (a worker task seen) is this run's
    is_async = _is_async(function)  # WHY once: asked per case, it was a sizeable part of a fast agent's case
    # WHY kept: recorded traces (`tracegrade grade`) carry the provenance tracegrade read from their spans
    sets_provenance = bool(getattr(function, PROVENANCE_SET, False))

    async def ask(case: GoldenCase) -> Reply:
        if takes_question and case.history:
            _warn_question_only(shared, function)
        with capturing(sources, case.id, shared, case.trial if sources else "") as recorder:
            returned = await call_agent(function, case.question if takes_question else case, is_async)
        problem = recorder.close()
        if sets_provenance and isinstance(returned, Reply):
            return returned
        if len(recorder.exchanges) + len(recorder.spans) > _INLINE_RECORDS:
            # WHY off the loop: putting a long trace together must not stall the other cases
            # (the case's deadline still bounds the wait; the thread is left behind after it)
            return await in_daemon_thread(merge, returned, recorder, sources, problem)  # type: ignore[no-any-return]
        return merge(returned, recorder, sources, problem)

    # WHY: what the harness reads off a target (model_id, model, agent_name,
    # prompt_version, probe, its name) stays readable through the wrapper.
    functools.update_wrapper(ask, function)
    ask.capture = sources  # type: ignore[attr-defined]
    return ask


def wants_question(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes the question string rather than the case."""
    try:
        # WHY not followed: a target this module already wrapped takes the case,
        # whatever the function inside it takes
        parameters = list(inspect.signature(function, follow_wrapped=False).parameters.values())
    except (TypeError, ValueError):
        return False
    if not parameters:
        raise ConfigError(f"target {getattr(function, '__name__', function)!r} takes no argument: "
                          "it must take the question (str) or the case")
    first = parameters[0]
    return first.annotation in (str, "str") or first.name in _QUESTION_NAMES


def _is_async(function: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None))


async def call_agent(function: Callable[..., Any], argument: Any, is_async: bool | None = None) -> Any:
    """Call ``function``: awaited if async (``is_async``, when the caller knows), else on a
    daemon thread that carries the case's context (its Recorder, its span)."""
    if _is_async(function) if is_async is None else is_async:
        return await function(argument)
    try:
        result = await in_daemon_thread(function, argument)
    except Exception as exc:
        if _LOOP_BOUND.search(str(exc)):
            exc.add_note(LOOP_HINT)
        raise
    return await result if inspect.isawaitable(result) else result


# The errors of a framework whose shared client is bound to one event loop, used from a sync
# agent that each case runs on a thread of its own (pydantic-ai's run_sync, httpx/anyio clients).
_LOOP_BOUND = re.compile(r"(?:bound|attached) to a different (?:event )?loop")
LOOP_HINT = ("hint: the agent is sync and each case runs it on a thread of its own, but its framework's "
             "client is bound to one event loop: make the target `async def` (await the framework's "
             "async API), or run with --concurrency 1")


def merge(returned: Any, recorder: Recorder, sources: Sequence[str], problem: str = "") -> Reply:
    """The Reply of a case: what the function returned, filled in from what was captured, saying
    where its calls came from (``problem``: why the captured ones are not the case's own, whole trace)."""
    if isinstance(returned, dict):
        returned = reply_from_dict(returned)
    captured = reply_of(recorder) if sources else None
    if captured is not None:
        captured = captured.model_copy(update={"provenance": _captured(recorder, problem, captured.provenance)})
    if isinstance(returned, Reply):
        # WHY the plain case first: a fast agent's every case returns its own Reply with nothing captured
        return returned if captured is None and returned.provenance is None else _one_source(returned, captured)
    if returned is None:
        if captured is None:
            raise AgentError("the target returned nothing and no model call was captured "
                             "(return the answer string, or run with --capture openai|anthropic|otel)")
        return captured
    if not isinstance(returned, str):
        raise AgentError(f"the target returned a {type(returned).__name__}; expected the answer (str), "
                         "a Reply, its JSON dict, or nothing (the captured answer)")
    if captured is not None:
        return captured.model_copy(update={"answer": returned})
    return Reply(answer=returned, provenance=_absent(recorder.shared, sources))


def _one_source(returned: Reply, captured: Reply | None) -> Reply:
    """A returned Reply with its provenance set here: its own calls when nothing was captured, the
    captured calls when it returned none, and unscored naming both when the two disagree."""
    if captured is None:
        return returned.model_copy(update={"provenance": None}) if returned.provenance is not None else returned
    if not returned.tool_calls:
        fill = {"tool_calls": captured.tool_calls, "provenance": captured.provenance,
                "steps": returned.steps or captured.steps, "model": returned.model or captured.model,
                "usage": captured.usage if returned.usage == type(returned.usage)() else returned.usage}
        return returned.model_copy(update=fill)
    differ = _disagreement(returned.tool_calls, captured.tool_calls)
    provenance = captured.provenance if not differ or captured.calls_unusable() else \
        (captured.provenance or Provenance(source="captured")).model_copy(update={"problem": differ})
    return returned.model_copy(update={"provenance": provenance})


def _disagreement(returned: Sequence[ToolCall], captured: Sequence[ToolCall]) -> str:
    """Why the calls the agent returned are not the calls capture recorded ("" when they are the same)."""
    mine, seen = Counter(_call_key(c) for c in returned), Counter(_call_key(c) for c in captured)
    if mine == seen:
        return ""
    missing, added = list((seen - mine).elements()), list((mine - seen).elements())
    return ("the agent returned a trace that disagrees with the calls captured from its model: "
            f"{_listed('captured but not returned', missing)}{_listed('returned but not captured', added)}"
            "one of the two is not what the agent did. Return only the answer (or a Reply without toolCalls) "
            "to be graded on the captured calls, or run without --capture to be graded on the returned ones")


def _call_key(call: ToolCall) -> str:
    """A call as compared and named: its tool and arguments, cut so that five fit the reason's 2,000 characters."""
    arguments = json.dumps(call.arguments, sort_keys=True, default=str)
    return f"{call.name[:60]}({arguments[:120]}{'...' if len(arguments) > 120 else ''})"


def _listed(label: str, keys: list[str]) -> str:
    if not keys:
        return ""
    more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
    return f"{label}: {', '.join(keys[:5])}{more}; "


class NothingRecordedWarning(UserWarning):
    """Capture recorded no model call for a case: its call checks are not judged."""


def _captured(recorder: Recorder, problem: str, read: Provenance | None) -> Provenance:
    """Where captured calls came from: the SDK recorded, or the spans read (as the reader said)."""
    if recorder.exchanges:
        return Provenance(source="captured", via=recorder.exchanges[-1].provider.split("-")[0], problem=problem)
    read = read or Provenance(source="spans", via="otel")
    return read.model_copy(update={"problem": problem}) if problem else read


def _absent(shared: Shared, sources: Sequence[str]) -> Provenance:
    """No call recorded: say why when a worker task was seen, and say it once per run when capture was on."""
    absent = Provenance(source="absent", via=",".join(sources), problem=WORKER_TASK if shared.worker_seen else "")
    if sources:
        _warn_once(shared, absent)
    return absent


def _warn_once(shared: Shared, absent: Provenance) -> None:
    """Say once per run (target) that capture found nothing: every call check is then unjudged."""
    with shared.lock:
        if shared.warned_absent:
            return
        shared.warned_absent = True
    warnings.warn(f"{absent.unusable()}. Cases without a recorded call are unscored on their call "
                  "checks; answer checks still run.", NothingRecordedWarning, stacklevel=2)


class QuestionOnlyWarning(UserWarning):
    """A target that takes the question string is in a conversation: it never sees the earlier turns."""


def _warn_question_only(shared: Shared, function: Callable[..., Any]) -> None:
    """Say once per run (target) that a question-only function cannot follow a conversation: it
    asks again for what the user already said, and a simulated user's trial runs out of turns."""
    with shared.lock:
        if shared.warned_question_only:
            return
        shared.warned_question_only = True
    name = getattr(function, "__qualname__", None) or repr(function)
    warnings.warn(f"the target {name!r} takes the question only, so in a conversation (a case's `user` or "
                  "`followUps`) it gets each user message without the turns before it: take the case "
                  "instead (case.question, case.history), as docs/api.md says", QuestionOnlyWarning, stacklevel=2)


def _check_installed(sources: Sequence[str]) -> None:
    """A missing SDK is the run's one error (exit 2), not an error in every case."""
    from tracegrade.agent.capture.hooks import check_installed

    for source in sources:
        if source != "otel":
            check_installed(source)


def capturing(sources: Sequence[str], label: str, shared: Shared | None = None,
              trial: str = "") -> contextlib.AbstractContextManager[Recorder]:
    """The model calls of the code inside the block recorded: a new Recorder (of ``trial``), the SDKs
    of ``sources`` hooked, and for "otel" a root span named by ``label`` whose spans it gathers."""
    if not sources:  # WHY apart: nothing to hook, and a run of a fast agent paid for the hooks' scopes
        return recording(shared, trial)
    return _capturing(sources, label, shared, trial)


@contextlib.contextmanager
def _capturing(sources: Sequence[str], label: str, shared: Shared | None, trial: str) -> Iterator[Recorder]:
    with recording(shared, trial) as recorder, _hooks(sources), _case_span(sources, label, recorder):
        yield recorder


@contextlib.contextmanager
def _hooks(sources: Sequence[str]) -> Any:
    from tracegrade.agent.capture.hooks import hooked

    with contextlib.ExitStack() as stack:
        for source in sources:
            if source != "otel":
                stack.enter_context(hooked(source))
        yield


def _case_span(sources: Sequence[str], case_id: str, recorder: Recorder) -> Any:
    if "otel" not in sources:
        return contextlib.nullcontext()
    from tracegrade.agent.capture.otel import case_span

    return case_span(case_id, recorder)
