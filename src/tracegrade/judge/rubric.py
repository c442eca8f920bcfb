"""A rubric file: the judge's metrics as data, and the words it is shown.

A rubric is Markdown with a YAML front matter. The front matter defines the
evidence headings (in the order the judge reads them) and each metric: what it
measures, how it is asked, what it needs, when it passes. The Markdown body is
the judge's instructions. A user adds a metric by adding an entry, no code.

    >>> rubric = parse_rubric('''---
    ... metrics:
    ...   - name: tone
    ...     measures: is the answer polite?
    ...     yesNo: Is the answer polite?
    ... ---
    ... You judge an assistant's answer.''')
    >>> [m.name for m in rubric.metrics], rubric.metrics[0].kind, rubric.metrics[0].threshold
    (['tone'], 'yesNo', 0.5)

A metric is asked in exactly one way:

- ``yesNo: QUESTION``: a yes/no question; scored P(yes) from token probabilities
  (or 1/0 from a strict-JSON reply); 0..1, passes at ``pass`` (default 0.5);
- ``scale: QUESTION``: a 1-5 question; the expected value of the digit's
  probabilities (or the JSON integer); passes at ``pass`` (default 4);
- ``checklist: [QUESTION, ...]`` with ``rule: mean | all | any``: yes/no items
  combined by the rule (mean of P(yes), the lowest, the highest); 0..1;
- ``code: grounding``: no model; every specific claim in the answer (numbers,
  amounts, dates, ids, e-mail addresses, names) must appear in the evidence;
- ``code: coverage``: no model; the share of the reference answer's specific
  facts (the same kinds, names excepted unless ``claims`` lists them; facts the
  question itself states excepted) that appear in the answer.

Top-level ``known``: names any answer may use without evidence (the
assistant's own, its organisation's); grounding accepts them, and the names
the case's reference answer uses. Other metric fields: ``needsReference`` (not scored when the case has no reference
answer), ``evidence`` (which sections the judge sees for this metric, default
all), ``gate`` (false: reported, never decides pass/fail), ``ifNotScored``
(skip | fail | unscored, for a metric that does not apply to a case; see
``core.verdict``), ``requires`` (other metrics: when one fails, this one fails
too, with value 0 and the reason; e.g. an answer that invents a fact is not
correct), ``weights`` (with ``yesNo`` and ``code: grounding``: the parts combined by a
fitted monotone logistic model, ``judge.combine``; ``with_weights`` writes them into a
rubric's text). A typo is an error naming the file, the metric and the field.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Mapping, Sequence, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from tracegrade import defaults
from tracegrade.core.errors import ConfigError

DEFAULT_RUBRIC = defaults.path("judge-rubric.md")
# The parts of a case and its reply the judge can be shown. The names are code;
# the headings the judge reads come from the rubric.
# WHY a Literal first: a checker needs the names spelled out; the tuple is derived from it.
Section = Literal["question", "history", "context", "tools", "reference", "expected", "answer"]
SECTIONS: tuple[Section, ...] = get_args(Section)
DEFAULT_HEADINGS = {"question": "QUESTION", "history": "EARLIER CONVERSATION", "context": "CONTEXT",
                    "tools": "TOOL CALLS AND RESULTS", "reference": "REFERENCE ANSWER",
                    "expected": "EXPECTED BEHAVIOUR", "answer": "ANSWER TO JUDGE"}
ClaimKind = Literal["money", "percent", "date", "time", "quantity", "number", "id", "email", "url", "name"]
CLAIM_KINDS: tuple[ClaimKind, ...] = get_args(ClaimKind)
KINDS = ("yesNo", "scale", "checklist", "code")
DEFAULT_PASS = {"yesNo": 0.5, "checklist": 0.5, "scale": 4.0, "code": 1.0}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class MetricSpec(_Strict):
    """One metric, as the rubric defines it."""

    name: str
    measures: str = Field(min_length=1)
    yes_no: str | None = None
    scale: str | None = None
    checklist: tuple[str, ...] | None = None
    rule: Literal["mean", "all", "any"] = "mean"
    code: Literal["grounding", "coverage"] | None = None
    claims: tuple[ClaimKind, ...] = CLAIM_KINDS  # what a code metric checks
    needs_reference: bool = False
    # Not applicable (n/a, never a pass or a fail) when the assistant saw no evidence: no
    # context and no tool call. WHY: "5" to "What is 2+3?" is grounded in nothing shown and
    # still right; a grounding metric has nothing to judge it against.
    needs_evidence: bool = False
    # Asked instead of the yes/no question when the case has no reference answer (the
    # question, the evidence and the answer only); the result says "reference-free".
    reference_free: str | None = None
    overlap: bool = False  # with code: grounding and yesNo: a word-overlap part joins the model part
    # With code: grounding and yesNo: the parts combined by a fitted logistic model instead of
    # the veto (judge/combine.py; written by `tracegrade calibrate --write-weights`): bias and a
    # weight >= 0 per part. WHY >= 0: a higher part must never lower the value (monotone).
    weights: dict[str, float] | None = None
    # With weights: the model asked only where code and overlap leave the verdict open
    # (judge/cascade.py): {model: P, low: L, high: H}; the value with P(yes) at P outside
    # L..H is kept without a model call. WHY: on most answers the cheap parts decide alone.
    cascade: dict[str, float] | None = None
    # With weights: claim kinds whose absence from the evidence fails the metric whatever the
    # other parts say (the value scaled under the threshold, its order kept). WHY: a wrong
    # number is never faithful, and on real replies a missing number is nearly always a bad one.
    veto: tuple[ClaimKind, ...] = ()
    evidence: tuple[Section, ...] = SECTIONS
    pass_: float | None = Field(default=None, alias="pass")
    gate: bool = True
    if_not_scored: Literal["skip", "fail", "unscored"] = "skip"
    requires: tuple[str, ...] = ()  # metrics whose failure fails this one (value 0)

    @field_validator("name")
    @classmethod
    def _identifier(cls, name: str) -> str:
        if not _NAME.match(name) or name == "reason":
            raise ValueError(f"must be a name of letters, digits and _ (not 'reason'), got {name!r}")
        return name

    @model_validator(mode="after")
    def _one_way(self) -> MetricSpec:
        given = [k for k in KINDS if getattr(self, _field(k)) is not None]
        # WHY one pair allowed: a grounding metric read by the model and by code (docs/judge.md).
        if given == ["yesNo", "code"] and self.code == "grounding":
            given = ["yesNo"]
        if len(given) != 1:
            raise ValueError(f"give exactly one of yesNo, scale, checklist, code; got {', '.join(given) or 'none'}")
        if self.checklist is not None and (not self.checklist or not all(q.strip() for q in self.checklist)):
            raise ValueError("checklist needs at least one non-empty question")
        if "answer" not in self.evidence and (self.code is None or self.yes_no is not None):
            raise ValueError("evidence must include answer")
        if self.overlap and not (self.code == "grounding" and self.yes_no is not None):
            raise ValueError("overlap is a part of a metric with both yesNo and code: grounding")
        if self.weights is not None:
            _check_weights(self.weights, self.model_and_code)
        if self.cascade is not None:
            _check_cascade(self.cascade, self.weights is not None)
        if self.veto and self.weights is None:
            raise ValueError("veto needs weights: without them any missing claim already fails the metric")
        if self.reference_free is not None and not (self.needs_reference and self.yes_no is not None):
            raise ValueError("referenceFree is the question a yesNo metric that needsReference asks without one")
        if self.code == "coverage" and "claims" not in self.model_fields_set:
            # WHY names left out: a reference's names ("the Orders page") are wording, not facts to repeat.
            object.__setattr__(self, "claims", tuple(k for k in CLAIM_KINDS if k != "name"))
        if self.code == "coverage" and not {"question", "answer", "reference"} <= set(self.evidence):
            raise ValueError("a coverage metric compares the answer with the reference, beyond the question: "
                             "evidence must list question, answer and reference")
        low, high = (1.0, 5.0) if self.kind == "scale" else (0.0, 1.0)
        if self.pass_ is not None and not low <= self.pass_ <= high:
            raise ValueError(f"pass must be within {low:g}..{high:g} for a {self.kind} metric, got {self.pass_:g}")
        return self

    @functools.cached_property
    def kind(self) -> str:
        # WHY cached: the judge reads a metric's kind dozens of times per case (its
        # range, threshold, questions, JSON field), and the spec is frozen.
        return next(k for k in KINDS if getattr(self, _field(k)) is not None)

    @functools.cached_property
    def identity(self) -> int:
        # WHY: a frozen spec is a cache key (json_scores.form), and pydantic's own hash
        # of its fields cannot hash ``weights`` (a dict): a rubric with weights crashed there.
        return hash(self.model_dump_json())

    def __hash__(self) -> int:
        return self.identity

    @property
    def model_and_code(self) -> bool:
        """Scored by the model and by code grounding together (parts combined)."""
        return self.yes_no is not None and self.code == "grounding"

    @property
    def threshold(self) -> float:
        return self.pass_ if self.pass_ is not None else DEFAULT_PASS[self.kind]

    @property
    def range(self) -> tuple[float, float]:
        return (1.0, 5.0) if self.kind == "scale" else (0.0, 1.0)

    @property
    def questions(self) -> tuple[str, ...]:
        """What the model is asked for this metric (none for a code metric)."""
        if self.kind == "checklist":
            return tuple(self.checklist or ())
        question = self.yes_no or self.scale
        return (question,) if question else ()


WEIGHTED_PARTS = ("bias", "model", "code", "overlap")


def _check_weights(weights: dict[str, float], model_and_code: bool) -> None:
    if not model_and_code:
        raise ValueError("weights combine the parts of a metric with both yesNo and code: grounding")
    unknown = [k for k in weights if k not in WEIGHTED_PARTS]
    if unknown:
        raise ValueError(f"weights: unknown part {unknown[0]!r}: use {', '.join(WEIGHTED_PARTS)}")
    if "bias" not in weights or not all(math.isfinite(w) for w in weights.values()):
        raise ValueError("weights need a bias, and every weight must be a finite number")
    negative = [k for k, w in weights.items() if k != "bias" and w < 0]
    if negative:
        raise ValueError(f"weights: {negative[0]} is {weights[negative[0]]:g}; a part's weight must be >= 0 "
                         "(a higher part must never lower the value)")


CASCADE_KEYS = ("model", "low", "high")


def _check_cascade(cascade: dict[str, float], weighted: bool) -> None:
    if not weighted:
        raise ValueError("cascade needs weights: the value without the model is the weights' value")
    if sorted(cascade) != sorted(CASCADE_KEYS):
        raise ValueError(f"cascade: give exactly {', '.join(CASCADE_KEYS)}, got {', '.join(cascade) or 'none'}")
    if not all(0.0 <= v <= 1.0 for v in cascade.values()) or cascade["low"] > cascade["high"]:
        raise ValueError("cascade: model, low and high must be within 0..1, and low <= high")


def _field(kind: str) -> str:
    return {"yesNo": "yes_no"}.get(kind, kind)


class _RubricFile(_Strict):
    name: str = ""
    evidence: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_HEADINGS))
    known: tuple[str, ...] = ()  # names any answer may use without evidence (the assistant's, its organisation's)
    metrics: tuple[MetricSpec, ...] = Field(min_length=1)

    @field_validator("evidence")
    @classmethod
    def _known_sections(cls, headings: dict[str, str]) -> dict[str, str]:
        unknown = [k for k in headings if k not in SECTIONS]
        if unknown:
            raise ValueError(f"unknown section {unknown[0]!r}: use {', '.join(SECTIONS)}")
        if "answer" not in headings:
            raise ValueError("must have a heading for answer")
        return headings

    @model_validator(mode="after")
    def _unique(self) -> _RubricFile:
        names = [m.name for m in self.metrics]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"metric names must be unique; repeated: {', '.join(repeated)}")
        by_name = {m.name: m for m in self.metrics}
        for m in self.metrics:
            for required in m.requires:
                if required not in by_name or required == m.name:
                    raise ValueError(f"metric {m.name!r}: requires {required!r}, which is not another metric here")
                if by_name[required].requires:
                    raise ValueError(f"metric {m.name!r}: requires {required!r}, which requires others itself")
        return self


@dataclass(frozen=True)
class Rubric:
    """A parsed rubric: headings, metrics, instructions, and the source text it came from."""

    text: str
    instructions: str
    headings: dict[str, str]
    metrics: tuple[MetricSpec, ...]
    name: str = ""
    known: tuple[str, ...] = ()
    only: tuple[str, ...] = ()  # the metrics kept by ``keep`` (its hash says so); () for the whole file

    @property
    def hash(self) -> str:
        whole = rubric_hash(self.text)
        return f"{whole}+{'+'.join(self.only)}" if self.only else whole

    def keep(self, names: Sequence[str]) -> Rubric:
        """The rubric cut to the metrics ``names`` and those they require, each asked exactly as in
        the whole rubric (a metric's prompt is its own sections, question and the instructions).
        WHY: a labels file that labels one metric needs one question per answer, not every metric's;
        the hash names the cut, so its calibration is never taken for the whole rubric's."""
        unknown = [n for n in names if n not in {m.name for m in self.metrics}]
        if unknown:
            raise ConfigError(f"no metric {unknown[0]!r} in the rubric: it has {', '.join(m.name for m in self.metrics)}")
        wanted = set(names) | {r for m in self.metrics if m.name in names for r in m.requires}
        kept = tuple(m for m in self.metrics if m.name in wanted)
        return replace(self, metrics=kept, only=tuple(m.name for m in kept))

    def metric(self, name: str) -> MetricSpec:
        return next(m for m in self.metrics if m.name == name)

    def sections(self, metric: MetricSpec) -> list[str]:
        """The sections ``metric`` sees, in the rubric's order."""
        return [s for s in self.headings if s in metric.evidence]


def parse_rubric(text: str, source: str = "rubric") -> Rubric:
    """A Rubric from its text, or ConfigError naming ``source``, the metric and the field."""
    front, body = _split(text, source)
    try:
        data = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: the front matter is not valid YAML: {exc}") from None
    except RecursionError:  # PyYAML recurses; no rubric nests that deep
        raise ConfigError(f"{source}: the front matter is nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the front matter must be a mapping with 'metrics'")
    try:
        parsed = _RubricFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {_problem(data, exc)}") from None
    if not body.strip():
        raise ConfigError(f"{source}: the instructions after the front matter are empty")
    return Rubric(text, body.strip(), parsed.evidence, parsed.metrics, parsed.name, parsed.known)


def load_rubric(path: str | Path | None = None) -> Rubric:
    """The rubric at ``path`` (default: the shipped one)."""
    path = Path(path or DEFAULT_RUBRIC)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the rubric: {exc.strerror or exc}") from None
    return parse_rubric(text, str(path))


def with_weights(text: str, metric: str, weights: Mapping[str, float], source: str = "rubric") -> str:
    """The rubric text with ``metric``'s ``weights`` line put in (replacing one already there),
    everything else as written. WHY text, not a YAML dump: a rubric's comments say why each
    metric is as it is, and a dump would drop them. The metric must be a block entry
    (``- name: METRIC``); the result is parsed back and must carry the weights."""
    lines = text.splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), len(lines))
    entry = re.compile(rf"^(\s*)-\s+name:\s*['\"]?{re.escape(metric)}['\"]?\s*(#.*)?$")
    start = next((i for i in range(1, end) if entry.match(lines[i].rstrip("\n"))), None)
    if start is None:
        raise ConfigError(f"{source}: metric {metric!r} is not a block entry ('- name: {metric}'): add its weights by hand")
    indent = len(entry.match(lines[start].rstrip("\n")).group(1)) + 2  # type: ignore[union-attr]
    stop = start + 1
    while stop < end and (not lines[stop].strip() or _indent(lines[stop]) >= indent):
        stop += 1
    body = _without_key(lines[start + 1:stop], "weights", indent)
    shown = ", ".join(f"{k}: {round(v, 4):g}" for k, v in weights.items())
    new = "".join([*lines[:start + 1], f"{' ' * indent}weights: {{{shown}}}\n", *body, *lines[stop:]])
    if parse_rubric(new, source).metric(metric).weights != {k: round(v, 4) for k, v in weights.items()}:
        raise ConfigError(f"{source}: the weights written for {metric!r} do not read back")
    return new


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _without_key(lines: Sequence[str], key: str, indent: int) -> list[str]:
    """``lines`` of one entry without ``key`` and the lines nested under it."""
    kept, inside = [], False
    for line in lines:
        if _indent(line) == indent and line.strip().startswith(f"{key}:"):
            inside = True
        elif inside and (not line.strip() or _indent(line) > indent):
            continue
        else:
            inside = False
            kept.append(line)
    return kept


def rubric_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _split(text: str, source: str) -> tuple[str, str]:
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ConfigError(f"{source}: a rubric starts with a YAML front matter ('---', the metrics, '---'); "
                          "see src/tracegrade/defaults/judge-rubric.md")
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1:])
    raise ConfigError(f"{source}: the front matter has no closing '---'")


def _problem(data: dict[str, object], exc: ValidationError) -> str:
    """The first problem, naming the metric by its name when it has one."""
    first = exc.errors()[0]
    loc = list(first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    if len(loc) >= 2 and loc[0] == "metrics" and isinstance(loc[1], int):
        metrics = data.get("metrics")
        entry = metrics[loc[1]] if isinstance(metrics, list) and loc[1] < len(metrics) else None
        name = entry.get("name") if isinstance(entry, dict) else None
        where = f"metric {name!r} (metrics[{loc[1]}])" if isinstance(name, str) else f"metrics[{loc[1]}]"
        rest = [str(p) for p in loc[2:]]
        return f"{where}: field {'.'.join(rest)!r}: {message}" if rest else f"{where}: {message}"
    return f"field {'.'.join(str(p) for p in loc)!r}: {message}"
