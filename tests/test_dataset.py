"""Datasets: three file formats, errors that name file/case/field, version hash, filters, JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from tracegrade.case.schema import SCHEMA_PATH, GoldenCase, golden_case_json_schema
from tracegrade.case.dataset import Dataset, load_dataset
from tracegrade.core.errors import DatasetError

GOLDEN = Path(__file__).resolve().parents[1] / "evals" / "golden-dataset.json"

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
