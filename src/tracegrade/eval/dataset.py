"""Golden datasets: load, validate, version by content hash, filter.

    >>> case = GoldenCase(id="tool-status-01", question="Where is ORD-101?",
    ...                   expected_tool="getOrderStatus", expected_tool_argument="ORD-101")
    >>> Dataset("demo", (case,)).version == Dataset("demo", (case,)).version
    True

A case file is JSON (a list, or an object with ``cases``), JSONL or YAML. Every
field is checked (``extra="forbid"``): a typo is an error naming the file, the
case and the field, never a silently ignored expectation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from tracegrade.core.errors import DatasetError

SCHEMA_PATH = Path(__file__).parents[1] / "schemas" / "golden-case.schema.json"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class ToolOrder(_Strict):
    """The order the tools must be called in: ``exact`` sequence, ``in_order`` (a
    subsequence), or ``any_order`` (all present)."""

    mode: Literal["exact", "in_order", "any_order"] = "in_order"
    tools: tuple[str, ...]


class HistoryTurn(_Strict):
    role: Literal["user", "assistant"]
    content: str


class GoldenCase(_Strict):
    """One question with the behaviour we already know is right."""

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    golden_answer: str = ""
    expected_behaviour: str = ""
    expected_tool: str | None = None
    expected_tool_argument: str | None = None
    expected_source: str | None = None
    customer_id: str | None = None
    required_tools: tuple[str, ...] = ()
    forbidden_tools: tuple[str, ...] = ()
    tool_order: ToolOrder | None = None
    requires_approval: bool = False
    answer_must_include: tuple[str, ...] = ()
    answer_must_not_include: tuple[str, ...] = ()
    max_steps: int | None = Field(None, ge=1)
    category: str = "general"
    split: str = "nominal"
    risk: Literal["low", "medium", "high"] = "low"
    difficulty: Literal["easy", "medium", "hard"] = "easy"
    language: str = "en"
    # Richer benchmark fields.
    version: int = 1
    tags: tuple[str, ...] = ()
    history: tuple[HistoryTurn, ...] = ()
    faults: dict[str, Literal["timeout", "server_error", "malformed", "hang"]] = Field(default_factory=dict)
    relevant_sources: dict[str, int] = Field(default_factory=dict)  # source -> graded relevance
    expected_route: str | None = None
    # Every argument of the expected call, for argument exact/partial match metrics.
    expected_arguments: dict[str, Any] = Field(default_factory=dict)
    # Argument values (e.g. another customer's order ids) no call may get data for.
    forbidden_arguments: tuple[str, ...] = ()

    def content_hash(self) -> str:
        return _hash(self.canonical())

    def canonical(self) -> dict[str, Any]:
        """The case's content without default values.

        WHY without defaults: a new optional field must not change the hash
        (and so the version) of every case written before it existed.
        """
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)


@dataclass(frozen=True)
class Dataset:
    name: str
    cases: tuple[GoldenCase, ...]
    # WHY kept on a selection: a run of some cases measured the whole file's version.
    file_version: str = field(default="", compare=False)

    @property
    def version(self) -> str:
        """A hash of every case's content: any edit gives a new version."""
        return self.file_version or _hash([c.canonical() for c in self.cases])[:12]

    def select(
        self, only: Iterable[str] = (), split: str | None = None,
        category: str | None = None, tag: str | None = None,
    ) -> "Dataset":
        """The cases matching every filter given; DatasetError for an unknown id or an empty result."""
        wanted = set(only)
        unknown = wanted - {c.id for c in self.cases}
        if unknown:
            raise DatasetError(f"{self.name}: no case with id {', '.join(sorted(unknown))}")
        cases = tuple(
            c for c in self.cases
            if (not wanted or c.id in wanted)
            and (split is None or c.split == split)
            and (category is None or c.category == category)
            and (tag is None or tag in c.tags)
        )
        if not cases:
            # WHY an error: a misspelt --split would otherwise run nothing and exit 0.
            asked = {"split": split, "category": category, "tag": tag}
            named = ", ".join(f"{k} {v!r}" for k, v in asked.items() if v is not None)
            raise DatasetError(f"{self.name}: no case matches {named or 'the filters'}")
        return Dataset(self.name, cases, self.version)


def load_dataset(path: str | Path) -> Dataset:
    """Read and validate a dataset file, or DatasetError naming file, case and field."""
    path = Path(path)
    raw_cases = _read_records(path)
    cases, seen = [], {}
    for index, raw in enumerate(raw_cases):
        case = _validate(path, index, raw)
        if case.id in seen:
            raise DatasetError(f"{path}: {_duplicate(seen[case.id], case)} (entry #{index + 1}); ids must be unique")
        seen[case.id] = case
        cases.append(case)
    if not cases:
        raise DatasetError(f"{path}: no cases")
    return Dataset(path.name, tuple(cases))


def _duplicate(first: GoldenCase, second: GoldenCase) -> str:
    """Why a repeated id is refused, naming what differs."""
    if first.content_hash() == second.content_hash():
        return f"case {first.id!r} appears twice"
    if first.version != second.version:
        return (f"case {first.id!r} appears twice with different contents, as version {first.version} "
                f"and version {second.version}: keep one version per file")
    a, b = first.canonical(), second.canonical()
    fields = ", ".join(sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k)))
    return (f"case {first.id!r} appears twice with different contents under the same version {first.version} "
            f"(differing: {fields}): an edited case needs a new version")


def _read_records(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:  # a folder, no permission
        raise DatasetError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        if path.suffix == ".jsonl":
            data: Any = _json_lines(path, text)
        elif path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise DatasetError(f"{path}: cannot parse: {exc}") from None
    except RecursionError:  # no case nests that deep; the parsers recurse
        raise DatasetError(f"{path}: cannot parse: nested too deeply") from None
    if isinstance(data, dict) and "cases" in data:
        data = data["cases"]
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a list of cases (or an object with 'cases')")
    return data


def _json_lines(path: Path, text: str) -> list[Any]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            records += [json.loads(line)] if line.strip() else []
        except ValueError as exc:  # json's "line 1" would be wrong: say which line of the file
            raise DatasetError(f"{path}: line {number}: cannot parse: {exc}") from None
    return records


def _validate(path: Path, index: int, raw: Any) -> GoldenCase:
    case_name = raw.get("id") if isinstance(raw, dict) else None
    label = f"case {case_name!r}" if isinstance(case_name, str) else f"case #{index + 1}"
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: {label}: expected an object, got {type(raw).__name__}")
    try:
        return GoldenCase.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(case)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise DatasetError(f"{path}: {label}: field {field!r}: {first['msg']}{more}") from None


def golden_case_json_schema() -> dict[str, Any]:
    """The JSON Schema of a dataset file (JSON or YAML): a list of cases, or an
    object with ``cases``. A JSONL line is one ``#/$defs/GoldenCase``."""
    case = GoldenCase.model_json_schema(by_alias=True)
    # WHY hoist $defs: the case's own $refs ("#/$defs/ToolOrder") resolve from
    # the document root, so the definitions must live there, next to the case.
    definitions = {**case.pop("$defs", {}), "GoldenCase": case}
    cases = {"type": "array", "items": {"$ref": "#/$defs/GoldenCase"}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tracegrade golden dataset",
        "anyOf": [cases, {"type": "object", "properties": {"cases": cases}, "required": ["cases"]}],
        "$defs": definitions,
    }


def write_golden_case_schema(path: Path = SCHEMA_PATH) -> Path:
    """Write the schema file; ``python -m tracegrade.eval.dataset`` regenerates the committed one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(golden_case_json_schema(), indent=2) + "\n")
    return path


def _hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


if __name__ == "__main__":
    print(f"wrote {write_golden_case_schema()}")
