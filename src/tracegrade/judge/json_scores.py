"""The strict-JSON way of asking, for providers without token probabilities.

    >>> from tracegrade.judge.rubric import parse_rubric
    >>> rubric = parse_rubric('''---
    ... metrics:
    ...   - {name: correctness, measures: right, yesNo: Does it agree with the reference}
    ...   - {name: helpfulness, measures: useful, scale: How useful is it}
    ... ---
    ... Judge the answer.''')
    >>> parse_reply(rubric.metrics, '{"correctness": "no", "helpfulness": 4, "reason": "wrong day"}')
    ({'correctness': 0.0, 'helpfulness': 4.0}, 'wrong day')

All questions of one answer go into one call: one JSON object with a field per
question (``"yes"``/``"no"``, or an integer 1..5 for a scale), the reason last
(WHY last: with the reason first the small local judge scored right answers 1).
The reply is constrained to the schema where the provider supports it, and
checked in code anyway: a schema promises an integer, not one from 1 to 5.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Sequence

from tracegrade.core.errors import JudgeReplyError
from tracegrade.judge.probability import combine
from tracegrade.judge.rubric import MetricSpec

REASON_CHARS = 300
# Output budget: a field is about 8 tokens ("correctness": "yes", ), the reason
# at most REASON_CHARS / 4; more than that is never parsed.
TOKENS_PER_FIELD, REASON_TOKENS = 10, REASON_CHARS // 4 + 10


def fields(specs: Sequence[MetricSpec]) -> list[tuple[str, MetricSpec, str]]:
    """(JSON field, metric, question) for every question; a checklist's items are NAME_1, NAME_2, ..."""
    out = []
    for spec in specs:
        questions = spec.questions
        for index, question in enumerate(questions, start=1):
            out.append((spec.name if len(questions) == 1 and spec.kind != "checklist" else f"{spec.name}_{index}",
                        spec, question))
    return out


def schema(specs: Sequence[MetricSpec]) -> dict[str, Any]:
    properties: dict[str, Any] = {
        name: ({"type": "integer", "minimum": 1, "maximum": 5} if spec.kind == "scale"
               else {"type": "string", "enum": ["yes", "no"]})
        for name, spec, _ in fields(specs)
    }
    properties["reason"] = {"type": "string", "maxLength": REASON_CHARS}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def max_tokens(specs: Sequence[MetricSpec]) -> int:
    return TOKENS_PER_FIELD * len(fields(specs)) + REASON_TOKENS


def instructions(specs: Sequence[MetricSpec]) -> str:
    """The questions, after the evidence, and the reply format."""
    lines = ["QUESTIONS"]
    for name, spec, question in fields(specs):
        answer = "an integer 1 (worst) to 5 (best)" if spec.kind == "scale" else '"yes" or "no"'
        lines.append(f"- {name}: {question.strip()} ({answer})")
    lines.append("Reply with one JSON object: every field above, then \"reason\": one sentence naming what "
                 "is wrong, if anything.")
    return "\n".join(lines)


@dataclass(frozen=True)
class Form:
    """One JSON call's questions for a set of metrics: its schema, output budget,
    instructions and reply parser, worked out once (``form``)."""

    specs: tuple[MetricSpec, ...]
    fields: tuple[tuple[str, MetricSpec, str], ...]
    schema: dict[str, Any]  # shared by every call: read it, never change it
    max_tokens: int
    instructions: str

    def parse_reply(self, text: str) -> tuple[dict[str, float], str]:
        return _parse(self.specs, self.fields, text)


@functools.lru_cache(maxsize=64)
def form(specs: tuple[MetricSpec, ...]) -> Form:
    """The Form for ``specs``. WHY cached: a run asks the same metrics case after case,
    and working out the fields, schema and instructions again cost ~30 us a case."""
    return Form(specs, tuple(fields(specs)), schema(specs), max_tokens(specs), instructions(specs))


def parse_reply(specs: Sequence[MetricSpec], text: str) -> tuple[dict[str, float], str]:
    """Each metric's value and the reason, or JudgeReplyError naming every bad field at once."""
    return _parse(specs, fields(specs), text)


def _parse(specs: Sequence[MetricSpec], asked: Sequence[tuple[str, MetricSpec, str]],
           text: str) -> tuple[dict[str, float], str]:
    data = json_object(text)
    problems, answers = [], {}
    for name, spec, _ in asked:
        value = data.get(name)
        if spec.kind == "scale":
            # bool is a subclass of int in Python, so True would pass as 1.
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 5:
                problems.append(f"{name} must be 1..5, got {value!r}")
                continue
            answers[name] = float(value)
        elif isinstance(value, str) and value.strip().lower() in ("yes", "no"):
            answers[name] = 1.0 if value.strip().lower() == "yes" else 0.0
        else:
            problems.append(f"{name} must be \"yes\" or \"no\", got {value!r}")
    if problems:
        raise JudgeReplyError("; ".join(problems))
    items: dict[str, list[float]] = {spec.name: [] for spec in specs}
    for name, spec, _ in asked:
        items[spec.name].append(answers[name])
    values = {spec.name: combine(items[spec.name], spec.rule) if spec.kind == "checklist" else items[spec.name][0]
              for spec in specs}
    reason = data.get("reason", "")
    return values, reason.strip() if isinstance(reason, str) else ""


def json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text`` (fenced or with words around it), or JudgeReplyError."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise JudgeReplyError(f"not JSON: {text[:80]!r}")
    try:
        data = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):
        raise JudgeReplyError(f"not JSON: {text[:80]!r}") from None
    if not isinstance(data, dict):
        raise JudgeReplyError("not a JSON object")
    return data
