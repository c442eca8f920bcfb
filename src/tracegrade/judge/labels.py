"""Human-labelled answers for judge calibration (the shipped ``human-labels.json``).

    >>> item = LabelledItem.model_validate({
    ...     "id": "hl-01", "caseId": "rag-return-01", "question": "How many days do I have to return a product?",
    ...     "goldenAnswer": "Products can be returned within 30 days of delivery.",
    ...     "evidence": {"context": "SOURCE: return-policy.md\\n...", "toolCalls": []},
    ...     "answer": "30 days from delivery.", "kind": "right",
    ...     "labels": [{"annotator": "a", "rationale": "Right.", "scores": {"relevance": 5, "correctness": 5,
    ...                 "faithfulness": 5, "helpfulness": 5, "hallucinationFree": 5}}]})
    >>> item.reply().answer
    '30 days from delivery.'

Each item carries everything the annotator saw: the question, the evidence (the
policy context and the tool calls with their results), the golden answer and
the answer. The judge is shown exactly the same, through the same ``evidence``
function a run uses, so a human score and a judge score are about one input.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from tracegrade.eval.dataset import GoldenCase
from tracegrade.core.errors import DatasetError
from tracegrade.judge.scoring import MAX_SCORE, METRICS, MIN_SCORE
from tracegrade.core.trace import Reply, ToolCall
from tracegrade import defaults

DEFAULT_LABELS = defaults.path("human-labels.json")
AnswerKind = Literal["right", "partial", "wrong", "hallucinated", "refusal"]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class Evidence(_Strict):
    context: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class HumanLabel(_Strict):
    annotator: str = Field(min_length=1)
    scores: dict[str, StrictInt]  # strict: JSON true is not a score
    rationale: str = Field(min_length=1)

    @field_validator("scores")
    @classmethod
    def _every_metric_in_range(cls, scores: dict[str, int]) -> dict[str, int]:
        if set(scores) != set(METRICS):
            raise ValueError(f"scores must have exactly {', '.join(METRICS)}; got {', '.join(sorted(scores))}")
        bad = {m: v for m, v in scores.items() if not MIN_SCORE <= v <= MAX_SCORE}
        if bad:
            raise ValueError(f"scores must be {MIN_SCORE}..{MAX_SCORE}: {bad}")
        return scores


class LabelledItem(_Strict):
    id: str = Field(min_length=1)
    case_id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    golden_answer: str = ""
    expected_behaviour: str = ""
    evidence: Evidence
    answer: str
    kind: AnswerKind
    labels: tuple[HumanLabel, ...] = Field(min_length=1)

    def case(self) -> GoldenCase:
        return GoldenCase(id=self.id, question=self.question, golden_answer=self.golden_answer,
                          expected_behaviour=self.expected_behaviour)

    def reply(self, answer: str | None = None) -> Reply:
        """The answer with its evidence; ``answer`` swaps in another text (a break)."""
        return Reply(answer=self.answer if answer is None else answer, context=self.evidence.context,
                     tool_calls=self.evidence.tool_calls)

    def label_by(self, annotator: str) -> HumanLabel | None:
        return next((label for label in self.labels if label.annotator == annotator), None)


class LabelFile(_Strict):
    description: str = ""
    items: tuple[LabelledItem, ...] = Field(min_length=1)


def load_labels(path: str | Path | None = None) -> tuple[tuple[LabelledItem, ...], str]:
    """The items and a content hash of the file, or DatasetError naming file, item and field."""
    path = Path(path or DEFAULT_LABELS)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    except OSError as exc:  # a folder, no permission
        raise DatasetError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        parsed = LabelFile.model_validate_json(raw)
    except ValidationError as exc:
        raise DatasetError(f"{path}: {_problem(raw, exc)}") from None
    ids = [item.id for item in parsed.items]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise DatasetError(f"{path}: item ids must be unique; repeated: {', '.join(duplicates)}")
    return parsed.items, hashlib.sha256(raw).hexdigest()[:12]


def _problem(raw: bytes, exc: ValidationError) -> str:
    """The first problem, naming the item by its id when the file parsed."""
    first = exc.errors()[0]
    if first["type"] == "json_invalid":
        return f"cannot parse: {first['msg']}"
    loc = first["loc"]
    where = f"field {'.'.join(str(part) for part in loc)!r}: {first['msg']}"
    if len(loc) < 2 or loc[0] != "items" or not isinstance(loc[1], int):
        return where
    items = json.loads(raw).get("items")  # parsed once already: it is JSON
    item = items[loc[1]] if isinstance(items, list) else None
    item_id = item.get("id") if isinstance(item, dict) else None
    return f"item {item_id!r}: {where}" if isinstance(item_id, str) else f"item #{loc[1] + 1}: {where}"
