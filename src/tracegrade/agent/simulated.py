"""A conversation played by a simulated user: a model holds the case's ``user`` scenario.

    >>> import asyncio
    >>> from tracegrade.models.scripted import ScriptedModel
    >>> async def desk(case):
    ...     return Reply(answer="Which booking?" if not case.history else "Cancelled BK-1.")
    >>> case = GoldenCase(id="c", user={"goal": "cancel BK-1", "knows": {"ref": "BK-1"}})
    >>> user = ScriptedModel(["I want to cancel.", "It is BK-1.", "Thanks.\\n[DONE]"])
    >>> reply = asyncio.run(converse(desk, case, user))
    >>> [m.role for m in reply.turns], reply.answer
    (['user', 'assistant', 'user', 'assistant', 'user'], 'Cancelled BK-1.')

The user model writes each user turn from the scenario and the conversation so
far (temperature 0, a seed from the case); the agent answers it through its
target exactly as a scripted follow-up (``turns.answer_turn``). The
conversation ends when the user writes ``[DONE]`` (their last message is kept
in ``turns``, not sent to the agent), the agent hands over to a person
(``scenario.handed_over``: a call of the case's ``handoverTool`` when it names
one, else an answer that states it), or ``maxTurns`` user messages were
answered: then the checks decide on what the agent did, tau-bench's way.

Who is blamed (docs/trajectory.md, "Who is blamed for what"): a trial whose
user cannot be trusted raises SimulatedUserError with the conversation so far,
so the runner leaves it unscored with the reason, never a verdict on the
agent: the user model failed, timed out, wrote nothing, or left its scenario
(``scenario.role_breaks``) when no answer of the agent's had asked it to. An
agent answer that steers the user model (``scenario.steers``) takes that
excuse away: a role break after it ends the conversation, which is graded,
and ``conversationEnd`` fails it (``steered_user``). A run's ``--budget`` is
checked after every turn (OverBudget: the trial is unscored, the run stops).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable, Sequence

from tracegrade.core.errors import SimulatedUserError
from tracegrade.core.results import CheckResult
from tracegrade.core.storable import error_text
from tracegrade.core.trace import Message as Turn
from tracegrade.core.trace import Reply
from tracegrade.agent.turns import answer_turn, join
from tracegrade.case.schema import GoldenCase, HistoryTurn
from tracegrade.agent.replay import Replayer, UserReplays
from tracegrade.case.scenario import (
    DONE_MARKER, Ending, UserScenario, bounded, ending, handed_over, role_breaks, said_done, steers,
)

if TYPE_CHECKING:  # WHY: the model layer loads only when a user turn is written (a checks-only run never)
    from tracegrade.models.base import ChatModel, ChatOptions, ChatResponse, Message

USER_TIMEOUT_S = 120.0  # one user turn; the case's own --timeout still bounds the whole conversation
USER_MAX_TOKENS = 256  # a customer's message is short; a longer one is a model rambling

Target = Callable[[GoldenCase], Awaitable[Reply]]
# A trial's spend so far (the conversation's Reply, the user model's tokens in and out) against
# the run's --budget: why the conversation must stop now, "" while it may go on (run/runner.py).
SpendCheck = Callable[[Reply, tuple[int, int]], str]


class OverBudget(SimulatedUserError):
    """The run's budget ran out during the conversation: the trial is unscored and the run stops."""


@dataclass
class CaseUser:
    """One trial's simulated user: the run's model, what it spent on this trial, and the stored
    turns it replays first (``--replay-users``, agent/replay.py). A ChatModel itself, so the
    conversation asks it as any user model.

    Mutable on purpose: made per trial by the runner, which reads its tokens and replay mark
    into the CaseResult whatever the trial's outcome (the judge's spend is counted the same way)."""

    model: ChatModel | None
    replay: Replayer | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    spend: SpendCheck | None = None  # the run's --budget, checked after every turn
    model_id: str = field(init=False, default="")
    # True while the user model is asked: a case deadline (--timeout) that cancels the trial then
    # leaves it set, so the runner blames the user model, not the agent
    asking: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.model_id = self.model.model_id if self.model is not None else ""

    async def complete(self, messages: Sequence[Message], options: ChatOptions | None = None) -> ChatResponse:
        if self.model is None:
            raise SimulatedUserError("no user model to play the case's `user` (evaluate(user_model=...))")
        self.asking = True
        try:
            response = await (self.model.complete(messages) if options is None else self.model.complete(messages, options))
        except Exception:  # WHY not BaseException: a cancellation (the case's deadline) keeps `asking` set
            self.asking = False
            raise
        self.asking = False
        self.input_tokens += response.input_tokens
        self.output_tokens += response.output_tokens
        return response


def case_user(case: GoldenCase, repeat: int, model: ChatModel | None, replays: UserReplays | None,
              spend: SpendCheck | None = None) -> CaseUser | None:
    """The simulated user of one trial of ``case`` (None when the case has no ``user``)."""
    if case.user is None:
        return None
    return CaseUser(model, replays.for_case(case, repeat) if replays is not None else None, spend=spend)


async def converse(target: Target, case: GoldenCase, model: ChatModel | None) -> Reply:
    """The whole conversation as one Reply; SimulatedUserError when the user is to blame."""
    user = case.user
    if user is None or model is None or (isinstance(model, CaseUser) and model.model is None):
        raise SimulatedUserError("no user model to play the case's `user` (evaluate(user_model=...))")
    replay = model.replay if isinstance(model, CaseUser) else None
    history: list[HistoryTurn] = list(case.history)
    messages: list[str] = []
    replies: list[Reply] = []
    steered = False  # an answer of the agent's steered the user model: a role break after it is the agent's doing
    message = case.question or _stored(replay, 1) or await next_turn(model, case, messages, replies)
    while True:
        if not _in_role(user, message, messages, replies, steered) or said_done(message):
            return _with_last_word(join(messages, replies), message)
        _within_budget(model, messages, replies, len(messages) + 1, message)
        replies.append(await answer_turn(target, case, message, history))
        messages.append(message)
        if replay is not None:
            replay.answered(len(messages), replies[-1])
        steered = steered or bool(steers(replies[-1].answer))
        last = replies[-1]
        if ending(messages, handed_over(last.answer, last.tool_calls, case.handover_tool), user.max_turns):
            return join(messages, replies)  # WHY no error at maxTurns: the checks decide on what the agent did
        _within_budget(model, messages, replies, len(messages))
        try:
            message = _stored(replay, len(messages) + 1) or await next_turn(model, case, messages, replies)
        except SimulatedUserError as exc:  # WHY: the agent's turns so far (calls, tokens) belong to the trial
            raise SimulatedUserError(str(exc), exc.reply or join(messages, replies)) from None


def _stored(replay: Replayer | None, number: int) -> str | None:
    """User message ``number`` of the replayed conversation, while the agent's replies match it."""
    return replay.message(number) if replay is not None else None


def _in_role(user: UserScenario, message: str, messages: list[str], replies: list[Reply], steered: bool) -> bool:
    """Whether ``message`` keeps the scenario. A message that leaves it (or is empty, or ends before
    the agent spoke) raises SimulatedUserError, unless the agent steered the user model: then it
    ends the conversation (False), and the checks grade the agent for it."""
    broken = role_breaks(user, message, replies[-1].answer if replies else "")
    if not message.strip():
        broken.append("is empty")
    if not (broken or (said_done(message) and not replies)):
        return True
    if steered:
        return False
    if broken:
        raise SimulatedUserError(f"user turn {len(messages) + 1} {'; '.join(broken)}",
                                 _with_last_word(join(messages, replies), message) if replies else None)
    raise SimulatedUserError(f"user turn {len(messages) + 1} is empty or says done before the agent answered")


def _within_budget(model: ChatModel, messages: list[str], replies: list[Reply], turn: int, unsent: str = "") -> None:
    """OverBudget, with the conversation so far (and the ``unsent`` user turn, paid for), once the
    trial's spend reaches the run's --budget (checked at user turn ``turn``: before the agent answers
    it, and once it has)."""
    if not isinstance(model, CaseUser) or model.spend is None or not replies:
        return
    so_far = join(messages, replies)
    why = model.spend(so_far, (model.input_tokens, model.output_tokens))
    if why:
        raise OverBudget(f"{why}, at user turn {turn}", _with_last_word(so_far, unsent) if unsent else so_far)


def _with_last_word(reply: Reply, message: str) -> Reply:
    """The conversation with the user's last message (their goodbye, or the turn that broke the role)."""
    return reply.model_copy(update={"turns": (*reply.turns, Turn(role="user", content=message))})


async def next_turn(model: ChatModel, case: GoldenCase, messages: Sequence[str], replies: Sequence[Reply]) -> str:
    """The user's next message, cut to the bound; SimulatedUserError when the model fails or times out."""
    from tracegrade.models.base import ChatOptions

    options = ChatOptions(temperature=0.0, max_tokens=USER_MAX_TOKENS, seed=int(case.content_hash()[:8], 16))
    try:
        async with asyncio.timeout(USER_TIMEOUT_S):
            response = await model.complete(user_prompt(case, messages, replies), options)
    except TimeoutError:
        raise SimulatedUserError(f"the user model timed out after {USER_TIMEOUT_S:g} s") from None
    except Exception as exc:  # a provider's own error types: all mean the user could not speak
        raise SimulatedUserError(f"the user model failed: {error_text(exc)}") from None
    return bounded(response.text).strip()


def user_prompt(case: GoldenCase, messages: Sequence[str], replies: Sequence[Reply]) -> list[Message]:
    """The scenario as a system message, then the conversation seen from the user's side:
    the agent's answers are the ``user`` role, the user's own messages the ``assistant``."""
    from tracegrade.models.base import Message

    assert case.user is not None
    talk = [Message("user", "(The conversation starts. Write your first message to the support agent.)")]
    for mine, reply in zip(messages, replies):
        # WHY bounded: the agent's answers are untrusted text too, and the user model's context is small
        talk += [Message("assistant", mine), Message("user", bounded(reply.answer))]
    return [Message("system", scenario_text(case.user)), *talk]


def scenario_text(user: UserScenario) -> str:
    """The instructions the user model plays by."""
    knows = "\n".join(f"- {name}: {value}" for name, value in user.knows.items()) or "- nothing more"
    never = "\n".join(f"- {item}" for item in user.must_not_say) or "- (nothing listed)"
    return (
        "You play a CUSTOMER writing to a support agent. Write only the customer's next message: "
        "short, plain text, no 'Customer:' or 'Agent:' labels. Never write the agent's part, and never "
        "claim to have done what only the agent can do.\n"
        + (f"Who you are: {user.persona}\n" if user.persona else "")
        + f"Your goal: {user.goal}\n"
        f"What you know (give it only when the agent asks for it):\n{knows}\n"
        f"Never say any of these:\n{never}\n"
        f"You are done when: {user.done_when or 'your goal is met, or the agent says it cannot be met'}\n"
        f"When you are done, write a short goodbye and then, on its own line, {DONE_MARKER}"
    )


@dataclass(frozen=True)
class ConversationEnd:
    """How a simulated user's conversation ended, recorded on the case, and whether the agent
    steered the user model on the way.

    Passes with ``done`` (the user's last message says ``[DONE]``), ``handover`` (the agent's last
    turn handed the user to a person: ``scenario.handed_over``) or ``turns_out`` (``maxTurns`` user
    messages answered: the other checks decide on the agent's work, so a case that states none
    fails ``no_end``). Fails ``steered_user`` when an answer of the agent's steers the user model
    (``scenario.steers``: it can never earn a better verdict that way), and ``no_end`` when a
    conversation (a recorded one) stops with none of those."""

    name: str = "conversationEnd"

    def applies(self, case: GoldenCase) -> bool:
        return case.user is not None

    def __call__(self, case: GoldenCase, reply: Reply) -> CheckResult:
        assert case.user is not None  # applies() says so
        said = [m.content for m in reply.turns if m.role == "user"]
        answers = [m.content for m in reply.turns if m.role == "assistant"]
        steering = next(((n, quote) for n, answer in enumerate(answers, start=1) if (quote := steers(answer))), None)
        if steering is not None:
            return CheckResult(self.name, False, "steered_user",
                               f"agent turn {steering[0]} steers the user model ({steering[1]}); "
                               f"the conversation is the agent's to answer for")
        last = [c for c in reply.tool_calls if c.turn == len(answers)]
        how = ending(said, handed_over(reply.answer, last, case.handover_tool), case.user.max_turns)
        if how is None or (how == "turns_out" and not states_work(case)):
            return CheckResult(self.name, False, "no_end", _no_end(how, case.handover_tool))
        return CheckResult(self.name, True, how, f"{_ENDS[how]} after {len(said)} user turns")


_ENDS: dict[Ending, str] = {"done": "the user said done", "handover": "the agent handed over",
                            "turns_out": "the turns ran out (maxTurns): the checks decide"}


def _no_end(how: Ending | None, handover_tool: str | None) -> str:
    if how == "turns_out":
        return ("the turns ran out (maxTurns) without the user saying done, and the case states nothing "
                "(calls, state, answer, tools) to grade the agent's work on")
    handover = f"call {handover_tool}" if handover_tool else "hand over"
    return f"the user never wrote {DONE_MARKER} and the agent did not {handover}"


def states_work(case: GoldenCase) -> bool:
    """Whether the case says what the agent must do or answer, so checks can grade a conversation
    that ran out of turns on what the agent did."""
    return bool(case.calls is not None or case.state is not None or case.answer is not None
                or case.expected_tool or case.required_tools or case.forbidden_tools or case.tool_order
                or case.answer_must_include or case.answer_must_not_include or case.golden_answer)
