"""Capture the agent's model calls in a test that calls the agent itself.

    from tracegrade import assert_checks_pass, capture_reply

    def test_my_agent(tracegrade_case):
        with capture_reply(sources=("openai",)) as captured:
            answer = my_agent(tracegrade_case.question)   # your agent, as it is
        assert_checks_pass(tracegrade_case, captured.reply(answer))

The block records what the agent asked its model (the openai / anthropic SDKs'
create calls, or its OpenTelemetry spans) and ``reply()`` puts it together into
the Reply the checks read: the tool calls, their arguments and results, the
answer. The same recording, hooks and assembly ``--capture`` uses per case.
"""

from __future__ import annotations

import contextlib
import importlib.util
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from tracegrade.agent.capture.recorder import Recorder
from tracegrade.agent.capture.target import capturing, check_sources, merge
from tracegrade.core.errors import AgentError
from tracegrade.core.trace import Reply

SDK_SOURCES = ("openai", "anthropic")


@dataclass(frozen=True)
class Captured:
    """The model calls a ``capture_reply`` block recorded (so far: the block may still run)."""

    recorder: Recorder
    sources: tuple[str, ...]

    def reply(self, answer: Any = None) -> Reply:
        """The Reply of the calls recorded. ``answer``: what the agent returned, when it
        returned something: its answer string replaces the captured answer; a Reply or its
        JSON dict is taken as it is. AgentError when nothing was recorded."""
        if answer is None and not (self.recorder.exchanges or self.recorder.spans):
            raise AgentError(f"no model call was captured inside capture_reply(sources={self.sources}): "
                             "did the agent call its model inside the block, through one of those sources?")
        return merge(answer, self.recorder, self.sources)

    @property
    def calls(self) -> int:
        """How many model calls (or spans) were recorded."""
        return len(self.recorder.exchanges) + len(self.recorder.spans)


@contextlib.contextmanager
def capture_reply(sources: Sequence[str] | None = None, label: str = "capture") -> Iterator[Captured]:
    """Record the model calls made inside the block; the Captured it yields builds their Reply.

    ``sources``: "openai", "anthropic" (the SDKs, hooked only inside the block) and/or
    "otel" (the spans the agent emits; ``label`` names the root span); None: the SDKs that
    are installed. Calls from other threads are recorded when the thread was started
    with the block's context (``asyncio.to_thread``, ``contextvars.copy_context().run``), as
    for ``--capture``."""
    chosen = check_sources(installed_sdks() if sources is None else sources)
    with capturing(chosen, label) as recorder:
        yield Captured(recorder, chosen)


def installed_sdks() -> tuple[str, ...]:
    """The SDK sources whose package is installed. WHY not both always: hooking an SDK
    imports it, and a missing one is a ConfigError that says to install it."""
    return tuple(s for s in SDK_SOURCES if importlib.util.find_spec(s) is not None)
