"""What one case's agent asked its model, recorded while the case runs.

A Recorder lives in a context variable set around one case: the SDK hooks add
to the Recorder of the context they run in, so concurrent cases never mix
their calls (asyncio tasks copy the context; so do ``asyncio.to_thread`` and
the thread pools of LangChain and the OpenAI Agents SDK). A call made outside
any case's context is not recorded at all.

Where the context cannot tell cases apart, the Recorder says so instead of
guessing (``Recorder.problem``): a task created inside one case that outlives
it (a batching client's or rate limiter's worker) carries that case's context
into every later call it makes, for whichever case asked. Its calls are then
either still that case's (while it runs) or late (after it ended): both are
counted, never silently graded as the case's own.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from dataclasses import dataclass, field
from collections import OrderedDict
from typing import Any, Literal

Provider = Literal["openai-chat", "openai-responses", "anthropic"]
MAX_EXCHANGES = 1000  # of one case: an agent stuck in a loop stops being recorded, the run goes on
MAX_CLAIMS = 65_536  # call ids remembered per run with the trial that asked for them (the newest kept)
_SNAPSHOT_DEPTH = 64  # containers deeper than this are kept as they are (a request is the agent's own data)

WORKER_TASK = ("its model calls were made from an asyncio task that a case created and that outlived it "
               "(a batching client's, rate limiter's or queue's worker task): the calls of several cases "
               "cannot be told apart. Create that task outside the cases (at import or in a setup), or "
               "create the client per case, or return a Reply with the case's own tool calls")
SHARED_MEMORY = ("its model requests carry tool calls that another trial's responses asked for ({call} of trial "
                 "{other}): the trials share the agent's memory (a checkpointer's thread, a session, a chat "
                 "history), so this trial started with what another one did. Key the memory by the trial: "
                 "case.trial (LangGraph: config={{'configurable': {{'thread_id': case.trial}}}}; the Agents SDK: "
                 "SQLiteSession(case.trial)), as docs/agents.md shows")


@dataclass(frozen=True)
class Exchange:
    """One model call: the request's keyword arguments as sent and the response as a dict."""

    provider: Provider
    request: dict[str, Any]
    response: dict[str, Any]
    start_s: float
    end_s: float


@dataclass
class Shared:
    """What the cases of one captured target learn together: whether a worker task was seen
    (a call arrived late, or came from a task that outlived its case), so a case that
    recorded nothing can say why."""

    worker_seen: bool = False
    warned_absent: bool = False
    warned_question_only: bool = False  # a question-only target was given a conversation turn
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Which trial's response asked for each call id: a call another trial asked for, sent again,
    # is memory the two trials share.
    claims: OrderedDict[str, str] = field(default_factory=OrderedDict)

    def claim(self, ids: list[str], trial: str) -> None:
        """The calls ``trial``'s response asked for."""
        with self.lock:
            for call_id in ids:
                self.claims.setdefault(call_id, trial)
            while len(self.claims) > MAX_CLAIMS:
                self.claims.popitem(last=False)

    def other_trial(self, ids: list[str], trial: str) -> tuple[str, str] | None:
        """A call of ``ids`` another trial asked for, and that trial; None when there is none."""
        with self.lock:
            for call_id in ids:
                other = self.claims.get(call_id, trial)
                if other != trial:
                    return call_id, other
        return None

    def late(self) -> None:
        """A call arrived for a case that had ended: a worker task a case created is at work."""
        with self.lock:
            self.worker_seen = True


@dataclass
class Recorder:
    """The model calls of one case, in the order they finished."""

    started_s: float = field(default_factory=time.perf_counter)
    exchanges: list[Exchange] = field(default_factory=list)
    spans: list[Any] = field(default_factory=list)
    dropped: int = 0
    shared: Shared = field(default_factory=Shared)
    # The task the case runs in: calls from any other task still alive at its end came from a worker.
    case_task: Any = None
    tasks: set[Any] = field(default_factory=set)
    closed: bool = False
    trial: str = ""  # the trial recorded (GoldenCase.trial); "" outside a run

    def add(self, exchange: Exchange) -> None:
        if self.closed:  # the case ended: a worker task it created is calling for another case
            self.shared.late()
            return
        if len(self.exchanges) >= MAX_EXCHANGES:
            # WHY the last slot replaced, not the newest dropped: the answer graded is the last call's
            self.dropped += 1
            self.exchanges[-1] = exchange
            return
        self.exchanges.append(exchange)

    def finished(self, provider: Provider, request: dict[str, Any], response: Any, start_s: float) -> None:
        """A call that ends now: its request (as snapshot when sent), and its response as a plain dict."""
        task = _running_task()
        if task is not None and task is not self.case_task:
            self.tasks.add(task)
        exchange = Exchange(provider, request, as_plain(response), start_s, time.perf_counter())
        if self.trial:
            self.shared.claim(asked_ids(exchange), self.trial)
        self.add(exchange)

    def close(self) -> str:
        """The case ended: later calls are late. Returns why its calls are not its own whole trace ("" when they are)."""
        self.closed = True
        if any(not task.done() for task in self.tasks):
            self.shared.worker_seen = True
            return WORKER_TASK
        shared_with = self._memory_shared() if self.trial and (self.exchanges or self.spans) else None
        if shared_with is not None:
            return SHARED_MEMORY.format(call=shared_with[0][:100], other=shared_with[1][:300])
        if self.dropped:
            return (f"the trace was cut: the case made {len(self.exchanges) + self.dropped} model calls, "
                    f"past the cap of {MAX_EXCHANGES}; {self.dropped} in between were not recorded "
                    "(the answer is the last call's)")
        return ""


    def _memory_shared(self) -> tuple[str, str] | None:
        """A call another trial asked for in what this trial sent first (its history), if any.
        WHY the first request only: the history from before the trial is in it; the later ones
        only add this trial's own rounds."""
        if self.exchanges:
            return self.shared.other_trial(sent_ids(self.exchanges[0]), self.trial)
        asked, sent_first = span_call_ids(self.spans)
        self.shared.claim(asked, self.trial)
        return self.shared.other_trial(sent_first, self.trial)


_current: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar("tracegrade_recorder", default=None)


def current() -> Recorder | None:
    """The Recorder of the case this code runs for, if any."""
    return _current.get()


class recording:  # noqa: N801 - a context manager used as ``with recording() as recorder``
    """A new Recorder for the code inside the block (one case), closed when it is left.

    WHY a class, not a generator's context manager: entered once a case, its generator and
    wrapper were a sizeable part of a fast agent's case."""

    __slots__ = ("_shared", "_recorder", "_token", "_trial")

    def __init__(self, shared: Shared | None = None, trial: str = "") -> None:
        self._shared = shared
        self._trial = trial

    def __enter__(self) -> Recorder:
        self._recorder = Recorder(shared=self._shared or Shared(), case_task=_running_task(), trial=self._trial)
        self._token = _current.set(self._recorder)
        return self._recorder

    def __exit__(self, *exc_info: object) -> None:
        _current.reset(self._token)
        self._recorder.closed = True


def record(provider: Provider, request: dict[str, Any], response: Any, start_s: float) -> None:
    """Add a finished call to the current case's Recorder (nothing outside a case)."""
    recorder = current()
    if recorder is not None:
        recorder.finished(provider, request, response, start_s)


def snapshot(request: dict[str, Any]) -> dict[str, Any]:
    """The request as it is sent: its lists and dicts copied, so an agent that appends to its
    own ``messages`` list after the call does not change what was recorded (a call seen twice)."""
    return _copied(request, _SNAPSHOT_DEPTH)  # type: ignore[no-any-return]


def _copied(value: Any, depth: int) -> Any:
    if depth <= 0:
        return value
    if isinstance(value, dict):
        return {key: _copied(item, depth - 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copied(item, depth - 1) for item in value]
    return value


def _running_task() -> Any:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no event loop in this thread: a sync agent's call
        return None


def as_plain(response: Any) -> dict[str, Any]:
    """An SDK response as a plain dict (a raw-response wrapper is parsed first)."""
    if isinstance(response, dict):
        return response
    if not hasattr(response, "model_dump") and hasattr(response, "parse"):
        response = response.parse()  # ``with_raw_response``: the SDK caches what it parsed
    dumped = response.model_dump() if hasattr(response, "model_dump") else {}
    return dumped if isinstance(dumped, dict) else {}


def asked_ids(exchange: Exchange) -> list[str]:
    """The ids of the tool calls this exchange's response asked for."""
    response = exchange.response
    if exchange.provider == "anthropic":
        blocks = [b for b in _listed(response.get("content")) if isinstance(b, dict) and b.get("type") == "tool_use"]
        return [str(b["id"]) for b in blocks if b.get("id")]
    if exchange.provider == "openai-responses":
        return _function_call_ids(response.get("output"))
    choices = _listed(response.get("choices")) or [{}]
    message = (choices[0] if isinstance(choices[0], dict) else {}).get("message") or {}
    return _chat_call_ids(message)


def sent_ids(exchange: Exchange) -> list[str]:
    """The ids of the tool calls this exchange's request sent back as history."""
    request = exchange.request
    if exchange.provider == "openai-responses":
        return _function_call_ids(request.get("input"))
    ids: list[str] = []
    for message in _listed(request.get("messages")):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        if exchange.provider == "anthropic":
            ids += [str(b["id"]) for b in _listed(message.get("content"))
                    if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id")]
        else:
            ids += _chat_call_ids(message)
    return ids


def _chat_call_ids(message: dict[str, Any]) -> list[str]:
    calls = [c for c in _listed(message.get("tool_calls")) if isinstance(c, dict)]
    return [str(c["id"]) for c in calls if c.get("id")]


def _function_call_ids(items: Any) -> list[str]:
    calls = [i for i in _listed(items) if isinstance(i, dict) and i.get("type") == "function_call"]
    return [str(i.get("call_id") or i.get("id")) for i in calls if i.get("call_id") or i.get("id")]


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def span_call_ids(spans: list[Any]) -> tuple[list[str], list[str]]:
    """The call ids the model spans asked for, and those the first model span sent back as history."""
    from tracegrade.core.from_otel import as_span, kind_of  # WHY here: only a run with spans reads them
    from tracegrade.core.span_messages import read_round

    models = sorted((span for span in map(as_span, spans) if kind_of(span.attributes) == "model"),
                    key=lambda span: span.start_ns)
    rounds = [read_round(span.attributes, span.events) for span in models]
    asked = [a.call_id for r in rounds for a in r.asked if a.call_id]
    return asked, list(rounds[0].results) if rounds else []
