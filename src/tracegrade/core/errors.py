"""Every error tracegrade raises on purpose, drawn once.

    TracegradeError                 base; its message names what to fix
    ├── ConfigError                 a bad flag, model spec, URL or environment value
    ├── ModelError                  a model call failed for good (after its retries)
    │   └── WeightsError            local weights missing, truncated or corrupt
    ├── DatasetError                a dataset file is unreadable or invalid (file, case, field)
    ├── JudgeReplyError             a judge reply is unusable (shape or range)
    ├── AgentError                  the agent under test could not answer
    │   └── StepLimitError          the agent used up its model rounds
    ├── SimulatedUserError          the simulated user failed or left its role: no verdict on the agent
    ├── UngradableTrace             the recorded trace cannot be told to be the case's (two runs, fragments)
    └── StoreError                  the run store refused a read or write

Exceptions become data at exactly two boundaries: the case (runner) and the
check/judge call. Everywhere else they propagate.
"""

from typing import Any


class TracegradeError(Exception):
    """Base of every deliberate tracegrade error."""


class ConfigError(TracegradeError):
    pass


class ModelError(TracegradeError):
    pass


class WeightsError(ModelError):
    pass


class DatasetError(TracegradeError):
    pass


class JudgeReplyError(TracegradeError):
    pass


class AgentError(TracegradeError):
    pass


class StepLimitError(AgentError):
    def __init__(self, rounds: int) -> None:
        super().__init__(f"the agent used all {rounds} model rounds without a final answer")
        self.rounds = rounds


class SimulatedUserError(TracegradeError):
    """The user model failed, timed out, left its scenario or never said done.

    ``reply``: the conversation so far (a ``Reply``, or None before the agent's
    first answer), kept so the trial can be read. WHY typed Any: core.errors
    stays at the very bottom, importing no other tracegrade module."""

    def __init__(self, reason: str, reply: Any = None) -> None:
        super().__init__(reason)
        self.reply = reply


class StoreError(TracegradeError):
    pass


class UngradableTrace(TracegradeError):
    """What was recorded for a case cannot be graded at all, not even its answer (traces of two runs,
    fragments with nothing to join them): the case is unscored with the reason, never graded on a part."""
