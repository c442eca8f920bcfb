"""What a run produces: one CaseResult per case and the run's manifest.

Plain frozen data with a JSON form, so a results file, the run store and every
report read the same thing.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, TypeVar

from tracegrade.core.trace import Reply


T = TypeVar("T")
CaseStatus = Literal["pass", "fail", "unscored", "error"]


def _flat(data: Any) -> dict[str, Any]:
    """A dataclass of plain values as a dict, field by field: ``dataclasses.asdict``
    without its deep copy, which was most of what storing a case's checks cost."""
    return {name: getattr(data, name) for name in _field_names(type(data))}


def _field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's fields given at construction (``init``), looked up once
    (``dataclasses.fields`` walks every attribute)."""
    if (names := _FIELD_NAMES.get(cls)) is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.init)
    return names


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _rebuilt(cls: type[T], values: Mapping[str, Any]) -> T:
    """A frozen dataclass from the values it was stored with, as ``cls(**values)`` makes it.

    WHY not its ``__init__`` when the values fit: a frozen dataclass's sets each
    field through ``object.__setattr__``, a sixth of reading a stored case back
    (a result and its checks). Values that do not fit (a field missing, one not
    known) go through ``__init__``, which says what is wrong."""
    defaults, required, known = _defaults(cls)
    if not (required <= values.keys() <= known):
        return cls(**values)
    made = object.__new__(cls)
    made.__dict__.update(defaults)
    made.__dict__.update(values)
    return made


Defaults = tuple[dict[str, Any], frozenset[str], frozenset[str]]
_DEFAULTS: dict[type, Defaults] = {}


def _defaults(cls: type) -> Defaults:
    """Every field of dataclass ``cls`` in order with its default value (none may have a factory;
    MISSING for a field with none), those without one, and those given at construction; looked
    up once. WHY every field, in order: the made object's ``__dict__`` then holds them as
    ``__init__`` sets them, in order (``CaseResult.to_json`` reads it), the values given
    replacing each MISSING."""
    if (found := _DEFAULTS.get(cls)) is None:
        fields = dataclasses.fields(cls)
        assert all(f.default_factory is dataclasses.MISSING for f in fields), f"{cls.__name__}: a default factory"
        found = _DEFAULTS[cls] = ({f.name: f.default for f in fields},
                                  frozenset(f.name for f in fields if f.default is dataclasses.MISSING),
                                  frozenset(f.name for f in fields if f.init))  # a value for another is refused
    return found


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    code: str = "ok"  # machine-readable failure reason
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        # WHY written out, not _flat: a result's checks are most of what storing it costs
        return {"name": self.name, "passed": self.passed, "code": self.code, "detail": self.detail}


def passed_check(name: str) -> CheckResult:
    """The passed result of the check ``name``: one instance a name (a CheckResult is immutable).

    WHY one: a passed check is most of a run's check results; made anew for each, and each
    looked over as a check's result is, they were ~8% of a fast case's instructions (callgrind)."""
    result = _PASSED.get(name)
    if result is None:
        result = CheckResult(name, True)
        if name.isascii():  # WHY only then: ``is_passed_check`` vouches for its name's text
            _PASSED[name] = result
    return result


def is_passed_check(result: object) -> bool:
    """Whether ``result`` is one ``passed_check`` made: a CheckResult well formed as it is."""
    return type(result) is CheckResult and _PASSED.get(result.name) is result


_PASSED: dict[str, CheckResult] = {}


# Where a metric's value came from: the model's token probabilities, its
# strict-JSON reply, or code (the grounding check).
SOURCES = ("probability", "json", "code")
# What a gating metric that was not scored means for the case (the pass rule):
# "skip" = it neither passes nor fails the case, it is listed; "fail"; "unscored".
NOT_SCORED_RULES = ("skip", "fail", "unscored")


@dataclass(frozen=True)
class MetricScore:
    """One metric of one answer: its value and how it was reached, or, with
    ``value`` None, why it could not be scored (never a made-up score).

    ``low``..``high`` is the metric's range (0..1 for a probability or a share,
    1..5 for a scale); it passes when ``value >= threshold``. A metric with
    ``gates`` False is reported but does not decide pass or fail.

        >>> MetricScore("correctness", 0.91, 0.5, "probability").passed
        True
        >>> MetricScore("correctness", None, 0.5, "probability", "no reference answer").passed is None
        True
    """

    name: str
    value: float | None
    threshold: float
    source: str  # one of SOURCES
    detail: str = ""  # the ungrounded claim, the judge's reason, or why it was not scored
    low: float = 0.0
    high: float = 1.0
    gates: bool = True
    if_not_scored: str = "skip"  # one of NOT_SCORED_RULES
    # The parts a combined metric was made of (("model", 0.8), ("code", 1.0), ...): a
    # report names the one that failed, calibration measures each alone.
    parts: tuple[tuple[str, float], ...] = ()

    @property
    def scored(self) -> bool:
        return self.value is not None

    @property
    def passed(self) -> bool | None:
        """None when not scored."""
        return None if self.value is None else self.value >= self.threshold

    def to_json(self) -> dict[str, Any]:
        flat = _flat(self)
        if not self.parts:
            del flat["parts"]  # WHY: most metrics have none; stored results stay as they were
        return flat

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MetricScore:
        parts = tuple((str(name), float(value)) for name, value in data.get("parts", ()))
        return cls(**{**data, "parts": parts})


@dataclass(frozen=True)
class Scores:
    """The judge's verdict on one answer, metric by metric (some may be not scored)."""

    metrics: tuple[MetricScore, ...]
    reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 1
    retries: int = 0  # transport retries of the judge calls (429, 5xx, timeouts)
    cached_tokens: int = 0  # prompt tokens the provider took from its cache

    @property
    def values(self) -> dict[str, float]:
        """The scored metrics' values by name."""
        return {m.name: m.value for m in self.metrics if m.value is not None}

    def not_scored(self) -> list[MetricScore]:
        return [m for m in self.metrics if m.value is None]


@dataclass(frozen=True)
class Unscored:
    """The judge could not score any metric; the case never passes and stays out of averages."""

    reason: str
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 1
    retries: int = 0
    cached_tokens: int = 0


JudgeOutcome = Scores | Unscored


@dataclass(frozen=True)
class Replayed:
    """A simulated user's conversation replayed from a stored run (``--replay-users``,
    agent/replay.py): the user messages sent as stored, the agent turn that first
    differed from the stored one (None: none did) and what differed, or why the
    user was live without a divergence (``note``)."""

    run_id: str
    user_turns: int = 0
    diverged_at: int | None = None
    differs: str = ""
    note: str = ""

    def describe(self) -> str:
        """One line for the console and the view.

            >>> Replayed("r1", 2, 2, "calls: stored a(), now none").describe()
            'diverged at agent turn 2: calls: stored a(), now none (user turns 1-2 as stored in r1, then the live user)'
        """
        turns = "user turn 1" if self.user_turns == 1 else f"user turns 1-{self.user_turns}"
        stored = f"{turns} as stored in {self.run_id}" if self.user_turns else ""
        if self.diverged_at is not None:
            return f"diverged at agent turn {self.diverged_at}: {self.differs} ({stored}, then the live user)"
        if self.note:
            return self.note + (f" ({stored})" if stored else "")
        return f"the same to the end: {stored}"


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    status: str  # pass | fail | unscored | error
    question: str = ""
    reply: Reply | None = None
    checks: tuple[CheckResult, ...] = ()
    scores: Mapping[str, float] | None = None  # the scored metrics' values; None: not judged
    judge_reason: str = ""
    error: str = ""  # why the agent or judge could not do its part
    seconds: float = 0.0
    agent_tokens: tuple[int, int] = (0, 0)
    judge_tokens: tuple[int, int] = (0, 0)
    judge_attempts: int = 0
    # Transport retries (429, 5xx, timeouts, drops) the agent's and the judge's
    # model calls needed; a call that gave up says how often it tried in ``error``.
    agent_retries: int = 0
    judge_retries: int = 0
    split: str = ""
    category: str = ""
    risk: str = ""
    repeat: int = 0  # which repetition of the case (0 for the first)
    case_hash: str = ""  # the case's content hash: tells an edited case from an unchanged one
    attempts: tuple[str, ...] = ()  # statuses of every attempt when failed cases are re-run
    agent_cost_usd: float = 0.0
    judge_cost_usd: float = 0.0
    # The simulated user's model calls (agent/simulated.py): counted and priced like the judge's.
    user_tokens: tuple[int, int] = (0, 0)
    user_cost_usd: float = 0.0
    replay: Replayed | None = None  # set when the run replayed a stored run's user turns
    # Every judge metric with its source, threshold and detail, the not-scored ones too.
    metrics: tuple[MetricScore, ...] = ()
    # The stored form a Ray worker made already (tracegrade.store.runstore.StoredForm),
    # so the driver only inserts it. Not part of the result: never compared or written
    # out, and init=False so ``replace`` drops it (a changed copy is encoded afresh).
    stored: Any = field(default=None, init=False, compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def flaky(self) -> bool:
        """Re-run attempts disagreed: at least one passed and one did not."""
        return "pass" in self.attempts and any(s != "pass" for s in self.attempts)

    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    @classmethod
    def made(cls, **values: Any) -> CaseResult:
        """``CaseResult(**values)``, made as a result read back is (``_rebuilt``): the same object.

        WHY: a frozen dataclass's ``__init__`` sets each of its 30 fields through
        ``object.__setattr__``, 4.2 us against 1.6, and every case of a run makes one."""
        return _rebuilt(cls, values)

    def to_json(self) -> dict[str, Any]:
        # WHY not dataclasses.asdict: it deep-copies the pydantic Reply only for
        # to_wire to replace it; at 10,000 cases that copy was most of the cost.
        # The fields given at construction, in their order: not ``stored``, a cache of this very
        # encoding. WHY from __dict__: a frozen dataclass's fields are its __dict__, in order, and
        # a copy of it is a tenth of reading them one by one
        data = self.__dict__.copy()
        data.pop("stored", None)  # set on the result once the store made its form
        data["checks"] = tuple([c.to_json() for c in self.checks])
        data["reply"] = self.reply.to_wire() if self.reply else None
        data["scores"] = dict(self.scores) if self.scores is not None else None
        data["metrics"] = [m.to_json() for m in self.metrics]
        if self.replay is not None:
            data["replay"] = _flat(self.replay)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseResult:
        values = dict(data)
        values["reply"] = Reply.from_wire(values["reply"]) if values.get("reply") else None
        values["checks"] = tuple(_rebuilt(CheckResult, c) for c in values.get("checks", ()))
        values["agent_tokens"] = tuple(values.get("agent_tokens", (0, 0)))
        values["judge_tokens"] = tuple(values.get("judge_tokens", (0, 0)))
        values["user_tokens"] = tuple(values.get("user_tokens", (0, 0)))
        values["replay"] = _rebuilt(Replayed, values["replay"]) if values.get("replay") else None
        values["attempts"] = tuple(values.get("attempts", ()))
        values["metrics"] = tuple(MetricScore.from_json(m) for m in values.get("metrics", ()))
        return _rebuilt(cls, values)


@dataclass(frozen=True)
class Manifest:
    """Everything needed to say what a run measured and to compare it fairly."""

    run_id: str
    dataset: str
    dataset_version: str
    case_count: int
    target: str
    agent_model: str
    judge_model: str | None
    rubric_hash: str | None
    prompt_version: str = ""
    git_commit: str = ""
    started_at: str = ""
    ended_at: str = ""
    settings: Mapping[str, Any] = field(default_factory=dict)
    totals: Mapping[str, Any] = field(default_factory=dict)  # tokens, cost, latency; filled at the end
    metrics: tuple[str, ...] = ()  # the judge metrics this run scores, in rubric order

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", tuple(self.metrics))  # a JSON list reads back as the same manifest

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "settings": dict(self.settings), "totals": dict(self.totals),
                "metrics": list(self.metrics)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Manifest:
        return cls(**data)


@dataclass(frozen=True)
class Run:
    """A run's manifest and its case results.

        >>> Run(Manifest("r1", "d.json", "v1", 2, "t", "m", None, None),
        ...     (CaseResult("a", "pass"), CaseResult("b", "fail"))).pass_rate
        0.5
    """

    manifest: Manifest
    results: tuple[CaseResult, ...]
    status: str = "finished"  # or "stopped" (the budget ran out) / "running" (not finished yet)

    @property
    def passed(self) -> bool:
        """Every case passed (what ``tracegrade run`` exits 0 on)."""
        return all(r.passed for r in self.results)

    @property
    def pass_rate(self) -> float:
        return sum(r.passed for r in self.results) / len(self.results) if self.results else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"manifest": self.manifest.to_json(), "results": [r.to_json() for r in self.results]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Run:
        return cls(Manifest.from_json(data["manifest"]), tuple(CaseResult.from_json(r) for r in data["results"]))

    @classmethod
    def read(cls, path: str | Path) -> Run:
        """The run in a ``results.json`` file."""
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
