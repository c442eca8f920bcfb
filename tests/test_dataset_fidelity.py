"""case/dataset.py's fast paths held to the slow ones they replace: the canonical text is the
standard encoder's own bytes, so versions and content hashes never change with how they are made."""

from __future__ import annotations

import datetime
import hashlib
import json
import pickle
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from tracegrade.core import jsontext
from tracegrade.case.canonical import canonical_text as _canonical_text
from tracegrade.case.dataset import load_dataset
from tracegrade.case.held import held_form as _held_form, validated_canonical as _validated_canonical
from tracegrade.case.schema import GoldenCase
from tracegrade.engine.items import unpack_item as _unpack

# WHY these: where encoders differ (float forms like 1e-05 and 1e+16, NaN, integers past 64 bits,
# what is escaped, the order of keys beyond the Basic Multilingual Plane)
HOSTILE_VALUES: list[Any] = [
    {"small": 1e-05, "smaller": 1e-07, "big": 1e16, "bigger": 1.2345678901234568e+20, "tenth": 0.1,
     "negative zero": -0.0, "tiny": 5e-324, "largest": 1.7976931348623157e308, "whole": 100.0},
    {"nan": float("nan"), "infinity": float("inf"), "minus infinity": float("-inf")},
    {"past 64 bits": 2**64, "huge": 10**30, "negative": -(2**70), "max": 2**63 - 1},
    {"\uffff": 1, "\U0001d11e": 2, "z": 3, "Z": 4, "é": 5, "": 6, "a b": 7},
    {"text": "Où est ORD-101? ✓ 𝄞 \u2028 \x85 \x7f \x00 \x1f \t\n\r\b\f \"quoted\" back\\slash </script>"},
    {"nested": [[], {}, [None, True, False, 0, -1, "", [{"b": [1.5]}, {"a": {}}]]]},
    [],
    {},
]


@pytest.mark.parametrize("data", HOSTILE_VALUES)
def test_the_canonical_text_is_the_standard_encoders_own_bytes(data: Any) -> None:
    assert _canonical_text(data) == json.dumps(data, sort_keys=True, ensure_ascii=False).encode()


def test_a_lone_surrogate_fails_as_it_did_with_the_standard_encoder() -> None:
    with pytest.raises(UnicodeEncodeError):
        json.dumps({"a": "\ud800"}, sort_keys=True, ensure_ascii=False).encode()
    with pytest.raises(UnicodeEncodeError):
        _canonical_text({"a": "\ud800"})


HOSTILE_LINES = [
    json.dumps({"id": "ü-1", "question": HOSTILE_VALUES[4]["text"], "expectedTool": "getOrderStatus",
                "tags": ["é", "z", "✓"], "answerMustInclude": ["ORD-101"]}, ensure_ascii=False),
    json.dumps({"id": "numbers", "question": "q", "expectedArguments": {**HOSTILE_VALUES[0], **HOSTILE_VALUES[2]},
                "relevantSources": {"b.md": 2, "a.md": 1}, "maxSteps": 3, "version": 2}),
    '{"id": "nan", "question": "q", "expectedArguments": {"x": NaN, "y": -Infinity}}',  # what only json reads
    json.dumps({"id": "keys", "question": "q", "expectedArguments": HOSTILE_VALUES[3], "state": {"total": 3.5},
                "faults": {"getOrderStatus": "timeout"}}, ensure_ascii=False),
    json.dumps({"id": "unstated", "question": "q"}),  # no expectedTool: its canonical form says so
    json.dumps({"id": "stated-none", "question": "q", "expectedTool": None, "category": "general"}),
    json.dumps({"id": "nested", "question": "q", "toolOrder": {"mode": "exact", "tools": ["a"]},
                "history": [{"role": "user", "content": "hi"}],
                "tools": [{"name": "refund", "writes": True, "parameters": {"type": "object", "properties": {"orderId": {}}}}],
                "calls": {"expected": [{"tool": "refund", "arguments": {"orderId": "ORD-1"}}]},
                "requiresApproval": True}),
]


def test_a_files_version_and_content_hashes_are_those_of_the_standard_encoder(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(HOSTILE_LINES) + "\n", encoding="utf-8")
    dataset = load_dataset(path)
    # WHY jsontext.load: read as the load reads a line
    fresh = [GoldenCase.model_validate(jsontext.load(line)) for line in HOSTILE_LINES]
    texts = [json.dumps(case.canonical(), sort_keys=True, ensure_ascii=False).encode() for case in fresh]
    assert dataset.version == hashlib.sha256(b"[" + b", ".join(texts) + b"]").hexdigest()[:12]
    assert dataset.version == hashlib.sha256(json.dumps([c.canonical() for c in fresh], sort_keys=True,
                                                        ensure_ascii=False).encode()).hexdigest()[:12]
    assert [c.content_hash() for c in dataset.cases] == [hashlib.sha256(t).hexdigest() for t in texts]
    assert [c.content_hash() for c in fresh] == [hashlib.sha256(t).hexdigest() for t in texts]


# --- a case read back from the compact dataset ----------------------------------------------

YAML_CASES = """
normalize: [case]
strictIntegers: true
cases:
  - id: dates
    question: Where is ORD-101?
    expectedArguments: {when: 2024-01-02, at: 2024-01-02 10:00:00+02:00, ratio: .nan, far: .inf, n: 1.0}
    tags: [a, b]
  - id: own-normalisation
    question: q
    normalize: [whitespace]
    strictIntegers: false
  - id: with-a-model
    question: q
    toolOrder: {mode: exact, tools: [getOrderStatus]}
"""


def fields_of(case: GoldenCase) -> list[tuple[str, type, str]]:
    """A case's fields in the order it holds them, each with its type and repr (NaN equal to NaN)."""
    return [(name, type(value), repr(value)) for name, value in case.__dict__.items() if not name.startswith("_")]


def assert_read_back_as_validated(read: GoldenCase, fresh: GoldenCase) -> None:
    assert fields_of(read) == fields_of(fresh)
    assert read.model_fields_set == fresh.model_fields_set
    assert (read.__pydantic_extra__, read.__pydantic_private__) == (fresh.__pydantic_extra__, fresh.__pydantic_private__)
    assert repr(read) == repr(fresh) and read.content_hash() == fresh.content_hash()


def test_a_jsonl_case_read_back_is_the_case_its_line_validates_to(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(HOSTILE_LINES) + "\n", encoding="utf-8")
    cases = load_dataset(path).cases
    for line, read in zip(HOSTILE_LINES, cases, strict=True):
        assert_read_back_as_validated(read, GoldenCase.model_validate(jsontext.load(line)))
    assert cases[0] == GoldenCase.model_validate(jsontext.load(HOSTILE_LINES[0]))


def test_a_yaml_case_read_back_keeps_its_dates_and_what_the_dataset_gave_it(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(YAML_CASES, encoding="utf-8")
    cases = load_dataset(path).cases
    data = yaml.safe_load(YAML_CASES)
    context = {"tools": (), "normalize": ("case",), "strict_integers": True}
    for record, read in zip(data["cases"], cases, strict=True):
        assert_read_back_as_validated(read, GoldenCase.model_validate(record, context=context))
    assert cases[0].normalize == ("case",) and cases[0].strict_integers and cases[1].normalize == ("whitespace",)
    assert isinstance(cases[0].expected_arguments["when"], datetime.date)


def test_a_case_with_no_model_inside_is_made_from_its_fields_and_one_with_a_model_from_its_record(
        tmp_path: Path) -> None:
    # WHY: both ways must give the case validation gives (above); this holds the cheap one to being used
    path = tmp_path / "cases.yaml"
    path.write_text(YAML_CASES, encoding="utf-8")
    cases = load_dataset(path).cases
    assert [_unpack(cases._items[i])[1] for i in range(3)] == [True, True, False]  # type: ignore[attr-defined]


def test_cases_made_from_their_fields_share_no_dict(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": "a", "question": "q"}) + "\n" + json.dumps({"id": "b", "question": "q"}) + "\n")
    cases = load_dataset(path).cases
    first, again, second = cases[0], cases[0], cases[1]
    assert first.faults == {} and first.faults is not second.faults and first.faults is not again.faults
    assert first.expected_arguments is not second.expected_arguments
    assert first.relevant_sources is not second.relevant_sources


def test_every_default_a_case_made_from_its_fields_shares_cannot_change() -> None:
    # WHY: such a case takes its defaults from one dict for all; a mutable default would be shared
    defaults = [f.default for f in GoldenCase.model_fields.values() if f.default_factory is None]
    assert all(isinstance(d, (str, int, bool, tuple, type(None))) or d is PydanticUndefined for d in defaults)
    assert all(not d for d in defaults if isinstance(d, tuple))


def test_a_case_made_from_its_fields_behaves_as_one_validated(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": "a", "question": "Where is ORD-101?", "state": {"refund": {"$any": True}},
                                "expectedTool": "getOrderStatus"}) + "\n")
    read = load_dataset(path).cases[0]
    assert set(read.state_matchers) == {"refund"} and read.states_tool_choice()
    copy = read.model_copy(update={"question": "Where is ORD-102?"})
    assert copy.content_hash() == GoldenCase(id="a", question="Where is ORD-102?", state={"refund": {"$any": True}},
                                             expected_tool="getOrderStatus").content_hash()
    assert pickle.loads(pickle.dumps(read)) == read == GoldenCase.model_validate(read.model_dump())
    with pytest.raises(ValidationError):  # frozen, as validated
        read.question = "changed"  # type: ignore[misc]


# --- a case's canonical form worked out from its given fields --------------------------------

FIELD_VALUES: dict[str, list[Any]] = {  # per field, its default, stated or not, and other values
    "id": ["a", "ü 𝄞"], "question": ["Where is ORD-1?", "q"], "golden_answer": ["", "x"],
    "expected_behaviour": ["", "y"], "expected_tool": [None, "getOrderStatus"],
    "expected_tool_argument": [None, "ORD-1"], "expected_source": [None, "a.md"], "customer_id": [None, "C1"],
    "required_tools": [[], ["a"]], "forbidden_tools": [[], ["b", "c"]], "requires_approval": [False],
    "answer_must_include": [[], ["x", "y"]], "answer_must_not_include": [[], ["z"]], "max_steps": [None, 1, 3],
    "category": ["general", "returns"], "split": ["nominal", "edge"], "risk": ["low", "high"],
    "difficulty": ["easy", "hard"], "language": ["en", "de"], "version": [1, 2, 10**30], "tags": [[], ["t"]],
    "faults": [{}, {"getOrderStatus": "timeout"}], "relevant_sources": [{}, {"a.md": 2}],
    "expected_route": [None, "r"], "expected_arguments": [{}, {"x": 1e-05}], "forbidden_arguments": [[], ["ORD-9"]],
    "normalize": [[], ["case", "whitespace"]], "strict_integers": [False, True], "state": [None, {"total": 3}],
    "follow_ups": [[], ["and?"]], "handover_tool": [None], "tool_order": [None], "calls": [None], "answer": [None], "history": [[]],
    "tools": [[]],
}


def generated_records(count: int) -> list[dict[str, Any]]:
    """Cases stating a random choice of fields, each by its name or its alias, at a random value."""
    chance = random.Random(37)
    records = []
    for _ in range(count):
        names = ["id", "question", *chance.sample(sorted(FIELD_VALUES), chance.randint(0, 12))]
        record = {}
        for name in names:
            key = name if chance.random() < 0.3 else GoldenCase.model_fields[name].alias or name
            record[key] = chance.choice(FIELD_VALUES[name])
        records.append(record)
    return records


def test_the_canonical_form_from_a_validated_cases_fields_is_the_serializers() -> None:
    assert set(FIELD_VALUES) == set(GoldenCase.model_fields) - {"user"}
    from_fields = 0
    for record in generated_records(600):
        case = GoldenCase.model_validate(record)
        held, as_fields = _held_form(case, record)
        if as_fields:
            assert _validated_canonical(case, held) == case.canonical(), record
            from_fields += 1
    assert from_fields == 600  # no model given: every case is held as its fields


def test_an_integer_past_64_bits_in_a_jsonl_line_is_the_same_as_in_a_json_file(tmp_path: Path) -> None:
    """orjson read it as a float: the JSONL case expected another account than the JSON one
    (a different content hash), and an agent that called with the exact number failed the check."""
    from tracegrade.core.trace import Reply, ToolCall
    from tracegrade.checks.builtin import run_checks

    account = 2**64 + 1
    case = {"id": "big", "question": "Close account?",
            "calls": {"expected": [{"tool": "closeAccount", "arguments": {"accountId": account}}]}}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    (tmp_path / "cases.json").write_text(json.dumps([case]), encoding="utf-8")
    lines, document = load_dataset(tmp_path / "cases.jsonl"), load_dataset(tmp_path / "cases.json")
    read = lines.cases[0].calls.expected[0].arguments["accountId"]
    assert read == account and type(read) is int
    assert lines.version == document.version
    assert lines.cases[0].content_hash() == document.cases[0].content_hash()
    call = ToolCall(name="closeAccount", arguments={"accountId": account})
    checks = run_checks(lines.cases[0], Reply(answer="Closed.", tool_calls=(call,)))
    assert [(check.name, check.passed) for check in checks if check.name == "expectedCalls"] == [("expectedCalls", True)]
