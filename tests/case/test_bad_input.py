"""Bad input, generated: the dataset loader, the judge-reply parser and the
tool-call parser give a result or their own clear error for any input, never
another exception."""

from __future__ import annotations

import json
import string
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tracegrade.case.dataset import Dataset, load_dataset
from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import ConfigError, DatasetError, JudgeReplyError
from tracegrade.judge.json_scores import parse_reply
from tracegrade.judge.rubric import parse_rubric
from judge_rubrics import SCALE_RUBRIC, SEED_METRICS as METRICS
from tracegrade.models.decisions import parse_decision

pytestmark = pytest.mark.slow  # hypothesis generates hundreds of inputs a test

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SUFFIXES = (".json", ".jsonl", ".yaml")
FIELDS = [field.alias or name for name, field in GoldenCase.model_fields.items()] + ["unknownField", "expected_tool"]
TOOLS = ("getOrderStatus", "getDeliveryDate", "getRefundStatus", "createRefundDraft")
DEEP = "[" * 50_000 + "]" * 50_000

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
# Case-shaped objects: real field names (and a few wrong ones) with values of any type.
case_like = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6) | st.fixed_dictionaries(
    {"id": st.text(string.ascii_lowercase, min_size=1, max_size=3), "question": st.text(min_size=1, max_size=20)},
    optional={name: json_values for name in FIELDS if name not in ("id", "question")},
)


def load_text(content: bytes, suffix: str) -> Dataset | DatasetError:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"cases{suffix}"
        path.write_bytes(content)
        try:
            return load_dataset(path)
        except DatasetError as exc:
            assert str(exc).startswith(f"{path}: "), exc  # always names the file
            return exc


@FAST
@given(st.binary(max_size=300), st.sampled_from(SUFFIXES))
@example(DEEP.encode(), ".json")
@example(DEEP.encode(), ".yaml")
@example(b"\xef\xbb\xbf[]", ".json")
@example(b"\xff\xfe{}", ".json")
@example(b'{"id": "a", "question": "q?"}\n' + DEEP.encode(), ".jsonl")  # a deep line after a good one
def test_dataset_loader_on_any_bytes(content, suffix):
    assert isinstance(load_text(content, suffix), (Dataset, DatasetError))


@FAST
@given(json_values, st.sampled_from(SUFFIXES))
def test_dataset_loader_on_any_json_document(document, suffix):
    assert isinstance(load_text(_serialise([document] if suffix == ".jsonl" else document, suffix), suffix),
                      (Dataset, DatasetError))


@FAST
@given(st.lists(case_like, max_size=4), st.sampled_from(SUFFIXES))
def test_dataset_loader_on_case_shaped_records(records, suffix):
    outcome = load_text(_serialise(records, suffix), suffix)
    if isinstance(outcome, Dataset):
        assert [c.id for c in outcome.cases] == [r["id"] for r in records]  # nothing dropped or reordered
        assert len(outcome.version) == 12
    elif records and "expected a list" not in str(outcome) and "no cases" not in str(outcome):
        # A case problem names the case (by id, or by position) and, if about a field, the field.
        assert " case " in str(outcome), outcome


def _serialise(document, suffix: str) -> bytes:
    if suffix == ".jsonl":
        return "\n".join(json.dumps(record) for record in document).encode()
    if suffix == ".yaml":
        return yaml.safe_dump(document, allow_unicode=True).encode()
    return json.dumps(document).encode()


# --- the judge's reply ----------------------------------------------------------------

SCALES = SCALE_RUBRIC.metrics  # five 1..5 scales, as a JSON judge replies
score_objects = st.fixed_dictionaries(
    {}, optional={**{m: json_values | st.integers(-2, 8) for m in METRICS}, "reason": json_values},
)


@FAST
@given(st.text(max_size=400))
@example('{"relevance": ' + "[" * 900 + "]" * 900 + "}")
@example("{" + DEEP + "}")
@example('{"relevance": 1e400}')
@example('{"relevance": ' + "9" * 5000 + "}")
@example("}{")
def test_judge_parser_on_any_text(text):
    _scores_or_clear_error(text)


@FAST
@given(score_objects, st.text(max_size=20), st.text(max_size=20))
def test_judge_parser_on_score_shaped_json_in_any_wrapping(data, before, after):
    scores = _scores_or_clear_error(before + json.dumps(data) + after)
    if "{" not in before + after and "}" not in before + after and _valid_scores(data):
        assert scores == {m: data[m] for m in METRICS}  # a valid reply parses, to its own values


def _valid_scores(data: dict) -> bool:
    return all(type(data.get(m)) is int and 1 <= data[m] <= 5 for m in METRICS)


@FAST
@given(st.fixed_dictionaries({m: st.integers(1, 5) for m in METRICS}, optional={"reason": st.text(max_size=40)}),
       st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=20),
       st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=20))
def test_a_valid_judge_reply_parses_to_its_values_in_any_wrapping(data, before, after):
    values, reason = parse_reply(SCALES, before + json.dumps(data) + after)
    assert values == {m: float(data[m]) for m in METRICS}
    assert reason == data.get("reason", "").strip()


def _scores_or_clear_error(text: str) -> dict[str, float] | None:
    try:
        values, _ = parse_reply(SCALES, text)
    except JudgeReplyError as exc:
        assert str(exc)
        return None
    assert set(values) == set(METRICS)
    assert all(float(v).is_integer() and 1 <= v <= 5 for v in values.values())
    return values


@FAST
@given(st.text(max_size=300))
@example("---\nmetrics: 5\n---\nx")
@example("---\nmetrics:\n  - name: a\n---\nx")
@example("---\n[\n---\nx")
def test_a_rubric_of_any_text_parses_or_names_the_problem(text):
    try:
        rubric = parse_rubric("---\n" + text, "r.md")
    except ConfigError as exc:
        assert str(exc).startswith("r.md: ")
        return
    assert rubric.metrics


# --- the tool-call parser -------------------------------------------------------------

decision_objects = st.fixed_dictionaries({}, optional={
    "tool": st.sampled_from(TOOLS) | json_values, "name": st.sampled_from(TOOLS) | json_values,
    "arguments": json_values | st.text(max_size=30), "parameters": json_values, "answer": json_values,
})
wrappings = st.sampled_from(["{}", "```json\n{}\n```", "<tool_call>{}</tool_call>", "{{{}}}", "text {} more", "{}\n{}"])


@FAST
@given(st.text(max_size=400))
@example(DEEP)
@example("{" * 5000)
@example("{{" + DEEP + "}}")
def test_tool_call_parser_never_raises_on_any_text(text):
    _valid_decision(text)


@FAST
@given(decision_objects, wrappings)
def test_tool_call_parser_on_call_shaped_json_in_every_form(data, wrapping):
    answer, calls = _valid_decision(wrapping.replace("{}", json.dumps(data)))
    name = data["tool"] if "tool" in data else data.get("name")  # "tool" wins, as in the schema
    if isinstance(name, str) and name in TOOLS:  # a valid call is recognised, in every form
        assert [c.name for c in calls] == [name]
        arguments = data.get("arguments", data.get("parameters", {}))
        if isinstance(arguments, dict):
            assert calls[0].arguments == arguments


@FAST
@given(st.sampled_from(TOOLS), st.dictionaries(st.text(max_size=10), json_values, max_size=4),
       st.sampled_from(["tool", "name"]), st.sampled_from(["arguments", "parameters"]), wrappings)
def test_a_valid_tool_call_is_recognised_in_every_form(tool, arguments, name_key, arguments_key, wrapping):
    text = wrapping.replace("{}", json.dumps({name_key: tool, arguments_key: arguments}))
    answer, calls = parse_decision(text, TOOLS)
    assert answer == "" and [(c.name, c.arguments) for c in calls] == [(tool, arguments)]


def _valid_decision(text: str) -> tuple[str, tuple]:
    answer, calls = parse_decision(text, TOOLS)
    assert isinstance(answer, str) and isinstance(calls, tuple) and len(calls) <= 1
    for call in calls:
        assert call.name in TOOLS and isinstance(call.arguments, dict)
        assert answer == ""
    return answer, calls
