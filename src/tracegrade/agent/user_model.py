"""The simulated user's model, named by a spec and loaded at the first user turn.

    >>> model = UserModel("openai:gpt-4o-mini")
    >>> model.model_id
    'openai:gpt-4o-mini'

WHY loaded late: most runs have no simulated user, and a checks-only run must
reach its first case without the model layer (tests/test_architecture.py);
the local model is one process-wide server, started on its first call anyway.
A spec that cannot load fails the user's turn, so each such case is unscored
with the reason (agent/simulated.py), never a verdict on the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from tracegrade.models.base import ChatModel, ChatOptions, ChatResponse, Message


@dataclass
class UserModel:
    """A ChatModel by spec (``local``, ``openai:MODEL``, ...); None: ``TRACEGRADE_USER_MODEL``, else local.

    Mutable on purpose: the model it loads is kept for the run's later turns."""

    spec: str | None = None
    # the spec as given until the model loads, then the model's own id (what prices.toml names)
    model_id: str = field(init=False)
    _model: ChatModel | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.model_id = self.spec or "local"

    async def complete(self, messages: Sequence[Message], options: ChatOptions | None = None) -> ChatResponse:
        if self._model is None:
            from tracegrade.models import load_model, model_spec

            self._model = load_model(model_spec("user", self.spec), role="user")
            self.model_id = self._model.model_id
        # WHY None for the default: ChatOptions lives in the model layer, loaded only here
        return await (self._model.complete(messages) if options is None else self._model.complete(messages, options))


def as_user_model(given: ChatModel | str | None) -> ChatModel:
    """A ChatModel as given, else one the spec names (loaded at its first turn)."""
    return given if given is not None and not isinstance(given, str) else UserModel(given)
