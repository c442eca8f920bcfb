"""Bad trajectory expectations are load errors naming the file, the case and the field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tracegrade.core.errors import DatasetError
from tracegrade.case.schema import golden_case_json_schema
from tracegrade.case.dataset import load_dataset

TOOLS = [{"name": "book_flight", "writes": True, "parameters": {
    "type": "object", "required": ["flightId"], "properties": {"flightId": {"type": "string"},
                                                               "seat": {"type": "string", "default": "aisle"}}}},
         {"name": "get_booking"}]


def load(tmp_path: Path, case: dict, tools: list = TOOLS) -> str:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"tools": tools, "cases": [{"id": "c1", "question": "q", **case}]}))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert str(path) in message
    return message


BAD_CASES = [
    # (case fields, the field the error names, words of the message)
    ({"calls": {"expectd": []}}, "calls.expectd", "unknown key (did you mean 'expected'?)"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"flightId": {"$anyof": ["LH1"]}}}]}},
     "calls.expected.0.arguments", "unknown operator $anyof"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"flightId": {"$eq": "LH1", "x": 1}}}]}},
     "calls.expected.0.arguments", "mixes operators"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$optional": "yes"}}}]}},
     "calls.expected.0.arguments", "$optional must be true or false"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$anyOf": []}}}]}},
     "calls.expected.0.arguments", "non-empty list"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$normalize": ["case"]}}}]}},
     "calls.expected.0.arguments", "not what"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$regex": "("}}}]}},
     "calls.expected.0.arguments", "does not compile"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$eq": "A", "$normalize": ["caps"]}}}]}},
     "calls.expected.0.arguments", "$normalize must be a list of"),
    ({"calls": {"expected": [{"tool": "book_flght"}]}}, "calls.expected.0.tool", "not a declared tool"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"flight": "LH1"}}]}},
     "calls.expected.0.arguments.flight", "has no parameter 'flight'"),
    ({"calls": {"forbidden": [{"tool": "cancel"}]}}, "calls.forbidden.0.tool", "not a declared tool"),
    ({"calls": {"count": "atMost"}}, "calls.count", "'atLeast' or 'exactly'"),
    ({"calls": {"expected": [{"tool": "book_flight", "status": ["done"]}]}}, "calls.expected.0.status.0", "'ok'"),
    ({"answer": {"include": [{"$money": {"amount": 5, "currency": "euro"}}]}}, "answer.include", "ISO 4217"),
    ({"answer": {"include": [{"$date": "1 May 2026"}]}}, "answer.include", "YYYY-MM-DD"),
    ({"answer": {"include": [42]}}, "answer.include", "an answer item is a string"),
    ({"answer": {"decision": {"expect": "maybe", "options": {"yes": ["^yes"], "no": ["^no"]}}}}, "answer.decision",
     "'maybe' is not among the options"),
    ({"answer": {"decision": {"expect": "yes", "options": {"yes": ["^yes"]}}}}, "answer.decision", "at least two"),
    ({"answer": {"turn": 0}}, "answer.turn", "starts at 1"),
    ({"state": {"bookings": {"$contains": "BK-1"}}}, "state", "$contains must be a list"),
    ({"normalize": ["lowercase"]}, "normalize.0", "'case'"),
    ({"requiresApproval": True, "tools": [{"name": "book_flight", "writes": False}]}, "requiresApproval",
     "no tool is declared with writes: true"),
    ({"tools": [{"name": "x", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/defs/a"}}}}]},
     "tools.0.parameters", "'$ref' is not checked"),
    ({"tools": [{"name": "x", "parameters": {"type": "object", "properties": {"a": {"type": "text"}}}}]},
     "tools.0.parameters", "'text' is not a JSON Schema type"),
    ({"tools": [{"name": "x", "approval": True}]}, "tools.0", "only a tool that writes"),
    # Round two: exact numbers, $never, separators, partial order.
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$approx": 3}}}]}},
     "calls.expected.0.arguments", "$approx must be"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$approx": {"value": 3}}}}]}},
     "calls.expected.0.arguments", "abs or rel"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$approx": {"value": 3, "abs": -1}}}}]}},
     "calls.expected.0.arguments", "cannot be negative"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$approx": {"value": "3", "abs": 1}}}}]}},
     "calls.expected.0.arguments", "$approx must be"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$never": False}}}]}},
     "calls.expected.0.arguments", "$never must be true"),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$eq": "A", "$normalize": [{"remove": ""}]}}}]}},
     "calls.expected.0.arguments", '{"remove": "<characters>"}'),
    ({"calls": {"expected": [{"tool": "book_flight", "arguments": {"seat": {"$number": float("inf")}}}]}},
     "calls.expected.0.arguments", "$number must be a number"),
    ({"calls": {"expected": [{"tool": "book_flight", "after": ["search"]}]}}, "calls", "no expected call has the id 'search'"),
    ({"calls": {"expected": [{"tool": "book_flight", "id": "b"}, {"tool": "book_flight", "id": "b"}]}}, "calls",
     "id 'b' names two expected calls"),
    ({"calls": {"expected": [{"tool": "book_flight", "id": "a", "after": ["b"]},
                             {"tool": "book_flight", "id": "b", "after": ["a"]}]}}, "calls", "cycle among a, b"),
    ({"calls": {"expected": [{"tool": "book_flight", "id": "a", "after": ["a"]}]}}, "calls", "cycle among a"),
    ({"strictIntegers": "sometimes"}, "strictIntegers", "boolean"),
    ({"calls": {"expected": [{"tool": "get_booking", "pairs": [["a"]], "arguments": {"a": [1]}}]}},
     "calls.expected.0", "at least two arguments"),
    ({"calls": {"expected": [{"tool": "get_booking", "pairs": [["a", "b"]], "arguments": {"a": [1], "b": {"$any": True}}}]}},
     "calls.expected.0", "'b' must be an expected argument written as a list"),
    ({"calls": {"expected": [{"tool": "get_booking", "pairs": [["a", "b"]], "arguments": {"a": [1], "b": [1, 2]}}]}},
     "calls.expected.0", "must have one length"),
    ({"calls": {"expected": [{"tool": "get_booking", "pairs": [["a", "b"], ["b", "c"]],
                              "arguments": {"a": [1], "b": [2], "c": [3]}}]}}, "calls.expected.0", "'b' is in two groups"),
]


@pytest.mark.parametrize(("fields", "field", "words"), BAD_CASES, ids=[b[1] + ":" + b[2][:20] for b in BAD_CASES])
def test_a_bad_expectation_names_file_case_and_field(tmp_path, fields, field, words):
    message = load(tmp_path, fields)
    assert "case 'c1'" in message and f"field '{field}" in message and words in message, message


def test_a_bad_dataset_tool_names_the_file_and_the_field(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"tools": [{"name": "a", "writes": "sometimes"}], "cases": [{"id": "c", "question": "q"}]}))
    with pytest.raises(DatasetError, match=r"d\.json: field 'tools\.0\.writes'"):
        load_dataset(path)
    path.write_text(json.dumps({"tools": [{"name": "a"}, {"name": "a"}], "cases": [{"id": "c", "question": "q"}]}))
    with pytest.raises(DatasetError, match="tool 'a' is declared twice"):
        load_dataset(path)
    path.write_text(json.dumps({"tols": [], "cases": [{"id": "c", "question": "q"}]}))
    with pytest.raises(DatasetError, match="field 'tols'"):
        load_dataset(path)


def test_dataset_tools_and_normalisation_reach_every_case_and_a_case_overrides_them(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"tools": TOOLS, "normalize": ["case"], "cases": [
        {"id": "a", "question": "q"},
        {"id": "b", "question": "q", "normalize": [], "tools": [{"name": "get_booking", "writes": True}]}]}))
    a, b = load_dataset(path).cases
    assert [t.name for t in a.tools] == ["book_flight", "get_booking"] and a.normalize == ("case",)
    assert b.normalize == () and b.tool("get_booking").writes and b.tool("book_flight").writes
    assert a.tool("book_flight").defaults == {"seat": "aisle"}


def test_the_openai_function_form_is_accepted(tmp_path):
    path = tmp_path / "d.json"
    tool = {"type": "function", "writes": True, "function": {"name": "book", "description": "d",
                                                             "parameters": {"type": "object", "properties": {}}}}
    path.write_text(json.dumps({"tools": [tool], "cases": [{"id": "a", "question": "q"}]}))
    (case,) = load_dataset(path).cases
    assert case.tool("book").writes and case.tool("book").description == "d"
    jsonschema.validate(json.loads(path.read_text()), golden_case_json_schema(), cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("bad", [
    {"tools": [{"name": "x", "writs": True}], "cases": [{"id": "a", "question": "q"}]},
    {"cases": [{"id": "a", "question": "q", "calls": {"expectd": []}}]},
    {"cases": [{"id": "a", "question": "q", "answer": {"turn": "last"}}]},
])
def test_the_published_schema_rejects_what_the_loader_rejects(tmp_path, bad):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, golden_case_json_schema(), cls=jsonschema.Draft202012Validator)
    path = tmp_path / "d.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(DatasetError):
        load_dataset(path)


def test_the_dataset_strict_integer_switch_reaches_every_case_and_a_case_overrides_it(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"tools": TOOLS, "strictIntegers": True, "cases": [
        {"id": "a", "question": "q"}, {"id": "b", "question": "q", "strictIntegers": False}]}))
    a, b = load_dataset(path).cases
    assert a.strict_integers and not b.strict_integers
    assert a.content_hash() != b.content_hash()
    jsonschema.validate(json.loads(path.read_text()), golden_case_json_schema(), cls=jsonschema.Draft202012Validator)
