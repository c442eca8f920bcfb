"""case/dataset.py: loading a dataset in its three file formats, the errors that name file/case/field,
its version and content hashes, filters and JSON Schema; the object form's header; JSONL read a line
at a time; and the fast paths held to the slow ones they replace."""

from __future__ import annotations

import json
import gc
import tracemalloc
import datetime
import hashlib
import pickle
import random
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest
import yaml
from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from places import ROOT
from tracegrade.case.schema import SCHEMA_PATH, GoldenCase, golden_case_json_schema
from tracegrade.case.dataset import Dataset, load_dataset
from tracegrade.core.errors import DatasetError
from tracegrade.engine import packed
from tracegrade.core import jsontext
from tracegrade.case.canonical import canonical_text as _canonical_text
from tracegrade.case.held import held_form as _held_form, validated_canonical as _validated_canonical
from tracegrade.engine.items import unpack_item as _unpack


# --- formats, errors, versions, filters, the JSON Schema --------------------------------------------
# Datasets: three file formats, errors that name file/case/field, version hash, filters, JSON Schema.


GOLDEN = ROOT / "evals" / "golden-dataset.json"

CASES = [
    {"id": "rag-1", "question": "How many days to return?", "expectedSource": "return-policy.md",
     "category": "returns", "split": "nominal", "tags": ["smoke"]},
    {"id": "tool-1", "question": "Where is ORD-101?", "expectedTool": "getOrderStatus",
     "expectedToolArgument": "ORD-101", "category": "order-status", "split": "edge",
     "toolOrder": {"mode": "exact", "tools": ["getOrderStatus"]}, "maxSteps": 3},
    {"id": "oos-1", "question": "Capital of France?", "category": "out-of-scope", "split": "unanswerable",
     "history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}]},
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def write_json(tmp_path: Path, cases: list, name: str = "cases.json") -> Path:
    return write(tmp_path, name, json.dumps(cases))


def error_of(path: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    return str(info.value)


# --- formats -----------------------------------------------------------------


def test_json_jsonl_and_yaml_load_the_same_cases(tmp_path):
    as_json = load_dataset(write_json(tmp_path, CASES))
    as_object = load_dataset(write(tmp_path, "object.json", json.dumps({"name": "x", "cases": CASES})))
    as_jsonl = load_dataset(write(tmp_path, "cases.jsonl", "\n".join(json.dumps(c) for c in CASES) + "\n\n"))
    as_yaml = load_dataset(write(tmp_path, "cases.yaml", yaml.safe_dump(CASES, sort_keys=False)))
    as_yml = load_dataset(write(tmp_path, "cases.yml", yaml.safe_dump({"cases": CASES})))

    assert [c.id for c in as_json.cases] == ["rag-1", "tool-1", "oos-1"]
    for other in (as_object, as_jsonl, as_yaml, as_yml):
        assert other.cases == as_json.cases
        assert other.version == as_json.version
    assert as_yaml.name == "cases.yaml"
    tool = as_json.cases[1]
    assert tool.expected_tool_argument == "ORD-101" and tool.tool_order.mode == "exact" and tool.max_steps == 3
    assert as_json.cases[2].history[1].content == "Hello."


def test_defaults_fill_the_optional_fields(tmp_path):
    case = load_dataset(write_json(tmp_path, [{"id": "a", "question": "q"}])).cases[0]
    assert (case.expected_tool, case.category, case.split, case.risk, case.requires_approval) == (
        None, "general", "nominal", "low", False)


def test_the_golden_dataset_has_twelve_unique_cases():
    dataset = load_dataset(GOLDEN)
    assert len(dataset.cases) == 12
    assert len({c.id for c in dataset.cases}) == 12
    assert dataset.name == "golden-dataset.json" and len(dataset.version) == 12


# --- malformed files ---------------------------------------------------------


def test_unknown_field_typo_names_file_case_and_field(tmp_path):
    path = write_json(tmp_path, [CASES[0], {**CASES[1], "expectedTol": "getOrderStatus"}])
    message = error_of(path)
    assert str(path) in message and "'tool-1'" in message and "'expectedTol'" in message
    assert "field 'expectedTol': unknown key (did you mean 'expectedTool'?)" in message


def test_wrong_type_names_file_case_and_field(tmp_path):
    path = write_json(tmp_path, [{**CASES[0], "maxSteps": "three"}])
    message = error_of(path)
    assert str(path) in message and "'rag-1'" in message and "'maxSteps'" in message


def test_nested_wrong_value_names_the_path_inside_the_case(tmp_path):
    path = write_json(tmp_path, [{**CASES[1], "toolOrder": {"mode": "sideways", "tools": []}}])
    message = error_of(path)
    assert "'tool-1'" in message and "'toolOrder.mode'" in message


def test_missing_question_names_the_case(tmp_path):
    path = write_json(tmp_path, [{"id": "no-question", "expectedTool": None}])
    message = error_of(path)
    assert str(path) in message and "'no-question'" in message and "'question'" in message
    assert "field 'question': required, but missing" in message


def test_a_case_without_an_id_is_named_by_its_position(tmp_path):
    message = error_of(write_json(tmp_path, [CASES[0], {"question": "q"}]))
    assert "case #2" in message and "'id'" in message


def test_several_problems_in_one_case_are_all_named(tmp_path):
    message = error_of(write_json(tmp_path, [{"id": "x", "question": "q", "risk": "huge", "typo": 1}]))
    assert "field 'risk': Input should be 'low', 'medium' or 'high'" in message
    assert "field 'typo': unknown key" in message


def test_a_gate_file_with_two_mistakes_names_both(tmp_path):
    from tracegrade.compare.gate import load_gate
    from tracegrade.core.errors import ConfigError

    gate = tmp_path / "gate.toml"
    gate.write_text("[latency]\nblock_p95_rise = -1\n[task_success]\nblock_dropp_pp = 3\n")
    with pytest.raises(ConfigError) as raised:
        load_gate(gate)
    assert "field 'latency.block_p95_rise': Input should be greater than or equal to 0" in str(raised.value)
    assert "field 'task_success.block_dropp_pp': unknown key (did you mean 'block_drop_pp'?)" in str(raised.value)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("bad.json", "[{", "cannot parse"),
        ("bad.jsonl", '{"id": "a", "question": "q"}\n{oops\n', "cannot parse"),
        ("bad.yaml", "- id: a\n  question: [unclosed\n", "cannot parse"),
        ("scalar.json", '"hello"', "expected a list of cases"),
        ("empty.json", "[]", "no cases"),
        ("entry.json", '["just a string"]', "case #1: expected an object, got str"),
    ],
)
def test_unreadable_files_name_the_file(tmp_path, name, text, expected):
    path = write(tmp_path, name, text)
    message = error_of(path)
    assert str(path) in message and expected in message


def test_missing_file_and_non_utf8_are_dataset_errors(tmp_path):
    assert "file not found" in error_of(tmp_path / "nope.json")
    path = tmp_path / "latin1.json"
    path.write_bytes(b'[{"id": "a", "question": "caf\xe9"}]')
    assert "not UTF-8" in error_of(path)


def test_duplicate_ids_are_rejected(tmp_path):
    same = error_of(write_json(tmp_path, [CASES[0], CASES[1], CASES[0]]))
    assert "'rag-1' appears twice (entry #3)" in same and "unique" in same
    different = error_of(write_json(tmp_path, [CASES[0], {**CASES[0], "question": "other"}]))
    assert "appears twice with different contents" in different


# --- version -----------------------------------------------------------------


def test_version_is_stable_for_the_same_content(tmp_path):
    first = load_dataset(write_json(tmp_path, CASES, "a.json"))
    # Same cases, keys in another order and written under another name.
    reordered_keys = [dict(reversed(list(c.items()))) for c in CASES]
    second = load_dataset(write_json(tmp_path, reordered_keys, "b.json"))
    assert first.version == second.version
    assert load_dataset(GOLDEN).version == load_dataset(GOLDEN).version


@pytest.mark.parametrize(
    "edit",
    [
        {"question": "How many days to return it?"},
        {"goldenAnswer": "30 days."},
        {"expectedSource": "shipping-policy.md"},
        {"split": "edge"},
        {"answerMustInclude": ["30"]},
        {"version": 2},
    ],
)
def test_version_changes_when_any_case_changes(tmp_path, edit):
    before = load_dataset(write_json(tmp_path, CASES, "a.json")).version
    edited = [{**CASES[0], **edit}, *CASES[1:]]
    assert load_dataset(write_json(tmp_path, edited, "b.json")).version != before


def test_version_changes_when_a_case_is_added_removed_or_moved(tmp_path):
    before = load_dataset(write_json(tmp_path, CASES, "a.json")).version
    after = {
        load_dataset(write_json(tmp_path, CASES[:2], "removed.json")).version,
        load_dataset(write_json(tmp_path, [*CASES, {"id": "new", "question": "q"}], "added.json")).version,
        load_dataset(write_json(tmp_path, CASES[::-1], "moved.json")).version,
    }
    assert before not in after and len(after) == 3


# --- select ------------------------------------------------------------------


@pytest.fixture
def dataset(tmp_path) -> Dataset:
    return load_dataset(write_json(tmp_path, CASES))


def ids(dataset: Dataset) -> list[str]:
    return [c.id for c in dataset.cases]


def test_select_without_filters_keeps_everything(dataset):
    assert dataset.select() == dataset


def test_select_filters(dataset):
    assert ids(dataset.select(only=["oos-1", "rag-1"])) == ["rag-1", "oos-1"]  # dataset order kept
    assert ids(dataset.select(split="edge")) == ["tool-1"]
    assert ids(dataset.select(category="out-of-scope")) == ["oos-1"]
    assert ids(dataset.select(tag="smoke")) == ["rag-1"]
    assert ids(dataset.select(only=["rag-1", "tool-1"], split="nominal")) == ["rag-1"]
    assert dataset.select(split="edge").name == dataset.name


def test_select_unknown_id_is_an_error(dataset):
    with pytest.raises(DatasetError, match="no case with id nope"):
        dataset.select(only=["rag-1", "nope"])


def test_select_that_matches_nothing_is_an_error(dataset):
    # A misspelt split must not become an empty run that "passes".
    with pytest.raises(DatasetError, match="no case matches split 'nomial'"):
        dataset.select(split="nomial")
    with pytest.raises(DatasetError, match="tag 'smoke'"):
        dataset.select(only=["tool-1"], tag="smoke")


# --- JSON Schema ---------------------------------------------------------------


def test_committed_schema_equals_the_generated_one():
    committed = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert committed == golden_case_json_schema(), "regenerate it: python -m tracegrade.case.dataset"


def test_schema_is_valid_draft_2020_12_with_one_top_level_dialect():
    schema = golden_case_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "$schema" not in json.dumps(schema["$defs"])
    assert schema["$defs"]["GoldenCase"]["additionalProperties"] is False


def test_golden_dataset_validates_against_the_committed_schema():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(GOLDEN.read_text(encoding="utf-8")), schema,
                        cls=jsonschema.Draft202012Validator)
    jsonschema.validate({"cases": CASES}, schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "a", "question": "q", "expectedTol": "x"},
        {"id": "a"},
        {"id": "a", "question": "q", "maxSteps": 0},
        {"id": "a", "question": "q", "toolOrder": {"mode": "sideways", "tools": []}},
        {"id": "a", "question": "q", "risk": "huge"},
    ],
)
def test_schema_and_loader_reject_the_same_mistakes(tmp_path, bad):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([bad], golden_case_json_schema(), cls=jsonschema.Draft202012Validator)
    with pytest.raises(DatasetError):
        load_dataset(write_json(tmp_path, [bad]))


def test_case_content_hash_ignores_how_it_was_written():
    by_alias = GoldenCase.model_validate({"id": "a", "question": "q", "expectedTool": "t"})
    by_name = GoldenCase(id="a", question="q", expected_tool="t")
    assert by_alias.content_hash() == by_name.content_hash()


def test_a_loaded_case_carries_the_content_hash_it_would_compute(tmp_path):
    """The load hands each case the hash of the bytes it versioned the file by; it
    must be the very hash the case computes from its own content, also after a selection."""
    records = [{"id": f"c{i}", "question": f"Where is ORD-{100 + i}?", "expectedTool": "getOrderStatus",
                "category": ("status", "refund")[i % 2]} for i in range(6)]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    dataset = load_dataset(path)
    for chosen in (dataset, dataset.select(category="refund")):
        for case in chosen.cases:
            fresh = GoldenCase.model_validate(next(r for r in records if r["id"] == case.id))
            assert case.content_hash() == fresh.content_hash()
    assert len({c.content_hash() for c in dataset.cases}) == 6


def test_what_a_case_works_out_once_is_forgotten_by_a_copy_with_other_content():
    case = GoldenCase(id="a", question="Where is ORD-101?", state={"refund": {"$any": True}})
    first_hash, matchers = case.content_hash(), case.state_matchers
    assert case.state_matchers is matchers  # worked out once
    assert case == GoldenCase(id="a", question="Where is ORD-101?", state={"refund": {"$any": True}})  # memos aside
    other = case.model_copy(update={"question": "Where is ORD-102?", "state": {"total": 3}})
    assert other.content_hash() == GoldenCase(id="a", question="Where is ORD-102?", state={"total": 3}).content_hash()
    assert other.content_hash() != first_hash and set(other.state_matchers) == {"total"}
    assert case.model_copy().content_hash() == first_hash


# --- the object form's header
# A dataset file's object form (case/dataset.py's DatasetHeader): what its top level may declare.


def test_a_top_level_version_is_told_how_a_dataset_is_versioned(tmp_path):
    """Issue 47: `"version"` beside the cases gave "field 'version': unknown key (did you mean 'version'?)"."""
    path = tmp_path / "golden.json"
    cases = [{"id": "a", "question": "Where is ORD-1?", "version": 2}]  # a case's own version is fine
    path.write_text(json.dumps({"name": "shop", "version": "2", "cases": cases}))
    with pytest.raises(DatasetError) as refused:
        load_dataset(path)
    said = str(refused.value)
    assert "field 'version'" in said and "did you mean" not in said and "hash of its cases' content" in said
    path.write_text(json.dumps({"name": "shop", "cases": cases}))
    assert len(load_dataset(path).version) == 12


# --- JSONL, a line at a time
# case/dataset.py on JSONL files, read a line at a time: what each line holds, what an error names,
# what a case read back from the compact dataset holds, and what the dataset keeps in memory.


def write_lines(tmp_path: Path, *lines: str, ending: str = "\n") -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(ending.join(lines).encode() + ending.encode())
    return path


def case(case_id: str, question: str = "Where is ORD-1?") -> str:
    return json.dumps({"id": case_id, "question": question}, ensure_ascii=False)


def test_every_line_is_a_case_in_order_blank_lines_and_crlf_endings_left_out(tmp_path: Path) -> None:
    path = write_lines(tmp_path, case("a"), "", "   ", case("b"), case("c"), ending="\r\n")
    dataset = load_dataset(path)
    assert [c.id for c in dataset.cases] == ["a", "b", "c"]
    assert dataset.version == load_dataset(write_lines(tmp_path, case("a"), case("b"), case("c"))).version


def test_a_line_separator_inside_a_json_string_is_the_strings_own(tmp_path: Path) -> None:
    # WHY: JSON allows U+2028 and U+0085 unescaped in a string; JSON Lines ends a line at "\n" only.
    path = write_lines(tmp_path, case("a", "first\u2028second\x85third"), case("b"))
    assert [c.question for c in load_dataset(path).cases] == ["first\u2028second\x85third", "Where is ORD-1?"]


def test_a_lone_carriage_return_ends_a_line_and_a_bad_byte_is_named_by_its_place_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(case("a").encode() + b"\r" + case("b").encode() + b"\n")  # as when the file was read as text
    assert [c.id for c in load_dataset(path).cases] == ["a", "b"]
    second = b'{"id": "b", "question": "caf\xe9?"}\n'
    path.write_bytes(case("a").encode() + b"\n" + second)
    place = len(case("a")) + 1 + second.index(b"\xe9")
    with pytest.raises(DatasetError, match=rf"not UTF-8 text \(byte {place}\)"):
        load_dataset(path)


def test_the_files_text_is_not_held_whole_while_its_cases_load(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(packed, "SPILL_BYTES", 4096)
    # WHY long questions: what the load keeps while it runs (each id, to find one twice) stays small beside them
    path = write_lines(tmp_path, *(case(f"case-{i:06d}", f"Where is ORD-{i}? " + "x" * 2000) for i in range(1000)))
    gc.collect()
    tracemalloc.start()
    try:
        load_dataset(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < path.stat().st_size / 2, (peak, path.stat().st_size)  # the text whole: more than its size


def test_a_line_that_does_not_parse_is_named_by_its_number_in_the_file(tmp_path: Path) -> None:
    path = write_lines(tmp_path, case("a"), "", '{"id": "b", "question": ', case("c"), ending="\r\n")
    with pytest.raises(DatasetError, match=r"cases\.jsonl: line 3: cannot parse"):
        load_dataset(path)


def test_a_repeated_id_says_what_differs_from_the_first_case_read_again(tmp_path: Path) -> None:
    path = write_lines(tmp_path, case("a"), case("b"), case("a", "Where is ORD-2?"))
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    assert "case 'a' appears twice with different contents" in str(raised.value)
    assert "differing: question" in str(raised.value) and "(entry #3)" in str(raised.value)


def test_a_case_read_again_has_its_id_and_content_hash(tmp_path: Path) -> None:
    path = write_lines(tmp_path, case("a"), case("b", "Where is ORD-2?"))
    cases = load_dataset(path).cases
    assert cases.ids() == ["a", "b"] and [cases[i].id for i in range(2)] == ["a", "b"]  # type: ignore[attr-defined]
    fresh = [GoldenCase.model_validate(json.loads(line)) for line in path.read_text().splitlines()]
    assert [c.content_hash() for c in cases] == [c.content_hash() for c in fresh]
    assert cases.find("b") == fresh[1] and cases.take([1]).ids() == ["b"]  # type: ignore[attr-defined]


def test_an_id_of_any_text_is_found_again(tmp_path: Path) -> None:
    odd = "ä ✓ 𝄞 \u2028"  # what is more than one byte in UTF-8
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": odd, "question": "q?"}) + "\n" + case("b") + "\n")
    cases = load_dataset(path).cases
    assert cases.ids() == [odd, "b"] and cases.find(odd).id == odd and cases[0].id == odd  # type: ignore[attr-defined, union-attr]


def test_a_large_dataset_holds_the_same_memory_whatever_its_size(tmp_path: Path, monkeypatch) -> None:
    # WHY: a run holds its dataset to its end; past the spill size, each case's record, id
    # and content hash are in a temporary file, and memory holds 8 bytes a batch of 64
    monkeypatch.setattr(packed, "SPILL_BYTES", 4096)
    held = {n: _held_by(load_dataset, write_lines(tmp_path, *(case(f"case-{i:06d}", f"Where is ORD-{i}?")
                                                         for i in range(n)))) for n in (20, 1000, 4000)}
    assert held[4000] - held[1000] < 2_000, held  # ids and hashes held beside: ~300 KB
    cases = load_dataset(tmp_path / "cases.jsonl").cases
    assert cases[3999].id == "case-003999" and cases.find("case-002000").question == "Where is ORD-2000?"  # type: ignore[attr-defined, union-attr]


def _held_by(load: Callable[[Path], Any], path: Path) -> int:
    """Bytes that Python allocated while ``load(path)`` ran and that its result still holds."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = load(path)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return after - before


# --- the fast paths held to the slow ones
# case/dataset.py's fast paths held to the slow ones they replace: the canonical text is the
# standard encoder's own bytes, so versions and content hashes never change with how they are made.


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
