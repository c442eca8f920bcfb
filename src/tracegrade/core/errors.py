"""Every error tracegrade raises on purpose, drawn once.

    TracegradeError                 base; its message names what to fix
    ├── ConfigError                 a bad flag, model spec, URL or environment value
    ├── ModelError                  a model call failed for good (after its retries)
    │   └── WeightsError            local weights missing, truncated or corrupt
    ├── DatasetError                a dataset file is unreadable or invalid (file, case, field)
    ├── JudgeReplyError             a judge reply is unusable (shape or range)
    ├── AgentError                  the agent under test could not answer
    │   └── StepLimitError          the agent used up its model rounds
    └── StoreError                  the run store refused a read or write

Exceptions become data at exactly two boundaries: the case (runner) and the
check/judge call. Everywhere else they propagate.
"""


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


class StoreError(TracegradeError):
    pass
