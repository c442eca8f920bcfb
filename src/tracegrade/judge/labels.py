"""Human-labelled answers for judge calibration (the shipped ``human-labels.json``).

    >>> item = LabelledItem.model_validate({
    ...     "id": "hl-01", "caseId": "rag-return-01", "question": "How many days do I have to return a product?",
    ...     "goldenAnswer": "Products can be returned within 30 days of delivery.",
    ...     "evidence": {"context": "SOURCE: return-policy.md\\n...", "toolCalls": []},
    ...     "answer": "30 days from delivery.",
    ...     "labels": [{"annotator": "a", "rationale": "Right.", "scores": {"correctness": 5, "tone": "good"}}]})
    >>> item.reply().answer, item.labels[0].verdict("tone"), item.labels[0].verdict("relevance")
    ('30 days from delivery.', 'good', None)

Each item carries everything the annotator saw: the question, the evidence (the
context and the tool calls with their results), the reference answer and the
answer. The judge is shown exactly the same, through the same functions a run
uses, so a human score and a judge score are about one input.

A label scores any of the judge's metrics (not necessarily all): an integer
1..5, or ``"good"``/``"bad"`` for a binary judgement. For calibration 4..5 is
good, 1..2 is bad, 3 is neither. ``kind`` is an optional free-text category
(the shipped file uses right, partial, wrong, hallucinated, refusal).

A ``.jsonl`` file is read as **attribution labels** (``attribution_items``): one
reply a line with the knowledge it was given and a human's verdict on whether
the knowledge supports everything it states, the form public sets such as
FaithDial's audit use: ``{"id", "knowledge", "history", "response", "label":
"attributable" | "not attributable"}``, optionally ``system`` and
``benchmark``. Each becomes an item labelled on ``faithfulness`` alone: the
previous user turn is the question, the knowledge the context, the reply the
answer; its ``caseId`` is ``system/benchmark``, so calibration's folds of whole
"questions" hold out whole systems and benchmarks, never a reply beside its
own system's others.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Annotated, Any, Sequence

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import DatasetError
from tracegrade.core.trace import Reply, ToolCall
from tracegrade import defaults

DEFAULT_LABELS = defaults.path("human-labels.json")
MIN_SCORE, MAX_SCORE = 1, 5


def _human_score(value: object) -> int | str:
    # WHY by hand: JSON true is not a score, nor is "5"; one clear message for both.
    if (isinstance(value, int) and not isinstance(value, bool) and MIN_SCORE <= value <= MAX_SCORE) \
            or value in ("good", "bad"):
        return value
    raise ValueError(f"must be an integer {MIN_SCORE}..{MAX_SCORE} or \"good\"/\"bad\", got {value!r}")


HumanScore = Annotated[Any, AfterValidator(_human_score)]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class Evidence(_Strict):
    context: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class HumanLabel(_Strict):
    annotator: str = Field(min_length=1)
    scores: dict[str, HumanScore] = Field(min_length=1)
    rationale: str = Field(min_length=1)

    def verdict(self, metric: str) -> str | None:
        """"good" (4-5 or good), "bad" (1-2 or bad), "neither" (3), or None when not labelled."""
        value = self.scores.get(metric)
        if value is None or isinstance(value, str):
            return value
        return "good" if value >= 4 else "bad" if value <= 2 else "neither"

    def number(self, metric: str) -> int | None:
        """The score on 1..5 (a binary good is 5, bad is 1), or None when not labelled."""
        value = self.scores.get(metric)
        # WHY indexing: the validator admits no text but "good" and "bad".
        return {"good": MAX_SCORE, "bad": MIN_SCORE}[value] if isinstance(value, str) else value


class LabelledItem(_Strict):
    id: str = Field(min_length=1)
    case_id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    golden_answer: str = ""
    expected_behaviour: str = ""
    evidence: Evidence
    answer: str
    kind: str = ""
    labels: tuple[HumanLabel, ...] = Field(min_length=1)

    def case(self) -> GoldenCase:
        return GoldenCase(id=self.id, question=self.question, golden_answer=self.golden_answer,
                          expected_behaviour=self.expected_behaviour)

    def verdict(self, metric: str) -> str | None:
        """The reference annotator's (first label's) verdict on ``metric``."""
        return self.labels[0].verdict(metric)

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
    """The items and a content hash of the file, or DatasetError naming file, item and field.
    A ``.jsonl`` file holds attribution labels (``attribution_items``)."""
    path = Path(path or DEFAULT_LABELS)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    except OSError as exc:  # a folder, no permission
        raise DatasetError(f"{path}: cannot read: {exc.strerror}") from None
    if path.suffix == ".jsonl":
        return attribution_items(raw, str(path)), hashlib.sha256(raw).hexdigest()[:12]
    try:
        parsed = LabelFile.model_validate_json(raw)
    except ValidationError as exc:
        raise DatasetError(f"{path}: {_problem(raw, exc)}") from None
    ids = [item.id for item in parsed.items]
    duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)  # WHY Counter: ids.count was quadratic
    if duplicates:
        raise DatasetError(f"{path}: item ids must be unique; repeated: {', '.join(duplicates)}")
    return parsed.items, hashlib.sha256(raw).hexdigest()[:12]


ATTRIBUTABLE = {"attributable": "good", "not attributable": "bad"}
ATTRIBUTION_METRIC = "faithfulness"


class _AttributionRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")  # WHY ignore: public sets carry fields of their own

    id: str = Field(min_length=1)
    knowledge: str = ""  # WHY may be empty: a reply given no knowledge is n/a for faithfulness, not an error
    history: str = ""
    response: str
    label: str
    system: str = ""
    benchmark: str = ""
    annotation: str = ""


def attribution_items(raw: bytes, source: str = "labels") -> tuple[LabelledItem, ...]:
    """Attribution labels (JSON lines, module docstring) as labelled items, or DatasetError
    naming ``source``, the line and the field. One pass over the lines."""
    items: list[LabelledItem] = []
    seen: set[str] = set()
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = _AttributionRecord.model_validate_json(line)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise DatasetError(f"{source}: line {number}: {f'field {where!r}: ' if where else ''}{first['msg']}") from None
        verdict = ATTRIBUTABLE.get(record.label.strip().lower())
        if verdict is None:
            raise DatasetError(f"{source}: line {number} ({record.id}): field 'label': must be one of "
                               f"{', '.join(map(repr, ATTRIBUTABLE))}, got {record.label!r}")
        if record.id in seen:
            raise DatasetError(f"{source}: line {number}: item id {record.id!r} repeated")
        seen.add(record.id)
        items.append(LabelledItem(
            id=record.id, case_id=f"{record.system or '-'}/{record.benchmark or '-'}",
            question=record.history.strip() or "(the conversation starts here)",
            evidence=Evidence(context=record.knowledge), answer=record.response, kind=record.system,
            labels=(HumanLabel(annotator="label", scores={ATTRIBUTION_METRIC: verdict},
                               rationale=record.annotation or record.label),)))
    if not items:
        raise DatasetError(f"{source}: no labelled reply")
    return tuple(items)


def _problem(raw: bytes, exc: ValidationError) -> str:
    """The first problem, naming the item by its id when the file parsed."""
    first = exc.errors()[0]
    if first["type"] == "json_invalid":
        return f"cannot parse: {first['msg']}"
    loc = first["loc"]
    where = f"field {'.'.join(str(part) for part in loc)!r}: {first['msg'].removeprefix('Value error, ')}"
    if len(loc) < 2 or loc[0] != "items" or not isinstance(loc[1], int):
        return where
    items = json.loads(raw).get("items")  # parsed once already: it is JSON
    item = items[loc[1]] if isinstance(items, list) else None
    item_id = item.get("id") if isinstance(item, dict) else None
    return f"item {item_id!r}: {where}" if isinstance(item_id, str) else f"item #{loc[1] + 1}: {where}"


def balanced_subset(items: Sequence[LabelledItem], limit: int) -> list[LabelledItem]:
    """``limit`` items taking good, bad and in-between answers in turn, each class
    round-robin over the questions: a small calibration still sees both sides."""
    classes: dict[str, list[LabelledItem]] = {"good": [], "bad": [], "neither": []}
    for item in items:
        verdicts = {item.verdict(m) for m in item.labels[0].scores}
        classes["bad" if "bad" in verdicts else "good" if verdicts == {"good"} else "neither"].append(item)
    queues = [_round_robin(classes[c]) for c in ("good", "bad", "neither")]
    chosen: list[LabelledItem] = []
    while len(chosen) < min(limit, len(items)):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    order = {item.id: index for index, item in enumerate(items)}
    return sorted(chosen, key=lambda i: order[i.id])


def _round_robin(items: list[LabelledItem]) -> list[LabelledItem]:
    by_question: dict[str, list[LabelledItem]] = defaultdict(list)
    for item in items:
        by_question[item.case_id].append(item)
    out, queues = [], list(by_question.values())
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out
