"""The LLM judge: rubric + evidence -> Scores, or Unscored with the reason.

    >>> parse_scores('{"relevance": 5, "correctness": 4, "faithfulness": 5, '
    ...              '"helpfulness": 4, "hallucinationFree": 5, "reason": "ok"}').values["correctness"]
    4

The reply is constrained to a JSON Schema where the provider supports it, and
then checked in code anyway: a schema promises an integer, not one from 1 to 5.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tracegrade.eval.dataset import GoldenCase
from tracegrade.core.errors import JudgeReplyError
from tracegrade.models import ChatModel, ChatOptions, Message
from tracegrade.core.results import JudgeOutcome, Scores, Unscored
from tracegrade.core.trace import Reply
from tracegrade import defaults

# WHY this order: with reason first the small local judge scored right answers 1.
METRICS = ("relevance", "correctness", "faithfulness", "helpfulness", "hallucinationFree")
MIN_SCORE, MAX_SCORE = 1, 5
DEFAULT_RUBRIC = defaults.path("judge-rubric.md")

SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{m: {"type": "integer", "minimum": MIN_SCORE, "maximum": MAX_SCORE} for m in METRICS},
        "reason": {"type": "string", "maxLength": 300},
    },
    "required": [*METRICS, "reason"],
    "additionalProperties": False,
}




def parse_scores(text: str) -> Scores:
    """Scores from a judge reply, or JudgeReplyError saying exactly what is wrong."""
    data = _json_object(text)
    problems = []
    for metric in METRICS:
        value = data.get(metric)
        # bool is a subclass of int in Python, so True would pass as 1.
        if not isinstance(value, int) or isinstance(value, bool) or not MIN_SCORE <= value <= MAX_SCORE:
            problems.append(f"{metric} must be {MIN_SCORE}..{MAX_SCORE}, got {value!r}")
    if problems:
        raise JudgeReplyError("; ".join(problems))
    reason = data.get("reason", "")
    return Scores({m: data[m] for m in METRICS}, reason.strip() if isinstance(reason, str) else "")


def _json_object(text: str) -> dict[str, Any]:
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


def tool_calls_text(reply: Reply) -> str:
    """Each tool call with its arguments, status and result, one line each, as every judge sees them."""
    return "\n".join(
        f"- {c.name}({json.dumps(c.arguments, ensure_ascii=False)}) -> [{c.status}] {c.result}" for c in reply.tool_calls
    ) or "(none)"


def evidence(case: GoldenCase, reply: Reply) -> str:
    """What the judge may use: only what the agent saw and did, and the golden answer."""
    calls = tool_calls_text(reply)
    history = "\n".join(f"{t.role}: {t.content}" for t in case.history)
    parts = [
        f"QUESTION:\n{case.question}",
        f"EARLIER CONVERSATION:\n{history}" if history else "",
        f"POLICY CONTEXT THE AGENT SAW:\n{reply.context or '(none)'}",
        f"TOOL CALLS AND RESULTS:\n{calls}",
        f"GOLDEN ANSWER:\n{case.golden_answer or '(none given)'}",
        f"EXPECTED BEHAVIOUR:\n{case.expected_behaviour}" if case.expected_behaviour else "",
        f"ANSWER TO SCORE:\n{reply.answer}",
    ]
    return "\n\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Judge:
    """Scores one answer. ``attempts`` bounds how often an unusable reply is retried."""

    model: ChatModel
    rubric: str
    attempts: int = 3
    temperature: float = 0.0
    max_tokens: int = 200
    seed: int = 0  # added to each attempt's seed: calibration samples a judge k times with k seeds

    @property
    def rubric_hash(self) -> str:
        return rubric_hash(self.rubric)

    async def score(self, case: GoldenCase, reply: Reply) -> JudgeOutcome:
        messages = [Message("system", self.rubric), Message("user", evidence(case, reply))]
        return await self.score_messages(messages)

    async def score_messages(self, messages: list[Message]) -> JudgeOutcome:
        asked = await ask_json(self.model, messages, SCORE_SCHEMA, parse_scores, attempts=self.attempts,
                               temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed)
        if not isinstance(asked.value, Scores):
            return Unscored(asked.problem, asked.input_tokens, asked.output_tokens, asked.attempts, asked.retries)
        return Scores(asked.value.values, asked.value.reason, asked.input_tokens, asked.output_tokens,
                      asked.attempts, asked.retries)


@dataclass(frozen=True)
class Asked:
    """What ``ask_json`` got: the parsed value, or None and the last problem."""

    value: Any
    problem: str
    input_tokens: int
    output_tokens: int
    attempts: int
    retries: int


async def ask_json(
    model: ChatModel, messages: list[Message], schema: dict[str, Any], parse: Callable[[str], Any],
    *, attempts: int = 3, temperature: float = 0.0, max_tokens: int = 200, seed: int = 0,
) -> Asked:
    """Ask for a schema-constrained JSON reply until ``parse`` accepts one (it raises
    JudgeReplyError otherwise), at most ``attempts`` times. The scoring judge and
    the pairwise judge share this one loop."""
    tokens_in = tokens_out = retries = 0
    problem = ""
    for attempt in range(1, attempts + 1):
        # WHY a little temperature on retries: at 0 the same input gives the same bad reply.
        options = ChatOptions(json_schema=schema, temperature=temperature if attempt == 1 else max(temperature, 0.3),
                              max_tokens=max_tokens, seed=seed + attempt)
        try:
            response = await model.complete(messages, options)
        except Exception as exc:  # the judge-call boundary
            problem = f"judge call failed: {type(exc).__name__}: {exc}"
            continue
        tokens_in += response.input_tokens
        tokens_out += response.output_tokens
        retries += response.retries
        try:
            value = parse(response.text)
        except JudgeReplyError as exc:
            problem = f"judge reply unusable: {exc}"
            continue
        return Asked(value, "", tokens_in, tokens_out, attempt, retries)
    return Asked(None, problem, tokens_in, tokens_out, attempts, retries)


def load_rubric(path: str | Path | None = None) -> str:
    return Path(path or DEFAULT_RUBRIC).read_text(encoding="utf-8")


def rubric_hash(rubric: str) -> str:
    return hashlib.sha256(rubric.encode()).hexdigest()[:12]
