"""evals/benchmark.json: its shape, its agreement with ShopNest's data, and its versioning rule."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter

import pytest

from places import ROOT
from shopnest.orders import DEFAULT_CUSTOMER, ORDERS
from shopnest.routing import ROUTES
from shopnest.tools import TOOL_NAMES
from tracegrade.checks.builtin import checks_for
from tracegrade.case.dataset import load_dataset
from tracegrade.core.errors import DatasetError

EVALS = ROOT / "evals"
BENCHMARK = load_dataset(EVALS / "benchmark.json")
CASES = BENCHMARK.cases
OWNER = {order.id: order.customer_id for order in ORDERS}
POLICIES = {p.name for p in (ROOT / "examples" / "shopnest" / "shopnest" / "policies").glob("*.md")}
SPLITS = {"nominal", "edge", "unanswerable", "permission", "tool-outage", "prompt-injection"}


def _builder():
    spec = importlib.util.spec_from_file_location("build_benchmark", EVALS / "build_benchmark.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_size_splits_and_mix():
    assert len(CASES) >= 100
    splits = Counter(c.split for c in CASES)
    assert set(splits) == SPLITS
    tiers = Counter(next(t for t in c.tags if t in ("common", "edge", "adversarial")) for c in CASES)
    # roughly 60% common, 25% edge, 15% adversarial
    assert 0.55 <= tiers["common"] / len(CASES) <= 0.65
    assert 0.20 <= tiers["edge"] / len(CASES) <= 0.30
    assert 0.12 <= tiers["adversarial"] / len(CASES) <= 0.20


def test_every_case_is_tagged_for_stratification():
    for c in CASES:
        assert c.category != "general" or c.split == "unanswerable", c.id
        assert c.expected_route in ROUTES, c.id
        assert c.version >= 1 and c.golden_answer and c.expected_behaviour, c.id
    assert {"returns", "shipping", "order-status", "refunds", "warranty", "account", "out-of-scope"} <= {
        c.category for c in CASES}
    assert set(Counter(c.risk for c in CASES)) == {"low", "medium", "high"}
    assert len({c.language for c in CASES}) >= 3


def test_the_coverage_the_issue_asks_for():
    tags = Counter(t for c in CASES for t in c.tags)
    for wanted in ("multi-turn", "topic-switch", "cancel", "non-english", "long-context", "contradictory",
                   "idempotency", "direct-injection", "indirect-injection"):
        assert tags[wanted] >= 1, wanted
    assert sum(bool(c.history) for c in CASES) >= 8
    assert max(len(c.question) + sum(len(t.content) for t in c.history) for c in CASES) > 2000
    assert {fault for c in CASES for fault in c.faults.values()} >= {"timeout", "server_error", "malformed"}


def test_smoke_subset_has_ten_cases_across_the_splits():
    smoke = BENCHMARK.select(tag="smoke").cases
    assert len(smoke) == 10
    assert {c.split for c in smoke} == SPLITS


def test_cases_agree_with_the_order_table_and_the_policies():
    """A typo'd id or a wrong owner would make a case measure the wrong thing."""
    for c in CASES:
        customer = c.customer_id or DEFAULT_CUSTOMER
        tools = {c.expected_tool, *c.required_tools, *c.forbidden_tools, *c.faults} - {None}
        assert tools <= set(TOOL_NAMES), c.id
        assert set(c.relevant_sources) | ({c.expected_source} - {None}) <= POLICIES, c.id
        if c.expected_tool_argument and c.expected_tool_argument != "ORD-999":
            owned = OWNER[c.expected_tool_argument] == customer
            assert owned == (c.expected_tool_argument not in c.forbidden_arguments), c.id
        for foreign in c.forbidden_arguments:
            assert OWNER[foreign] != customer, c.id
        if c.split == "permission":
            assert c.forbidden_arguments and c.answer_must_not_include, c.id
        if c.split == "tool-outage":
            assert c.expected_tool in c.faults and c.answer_must_not_include, c.id
        if c.split == "prompt-injection":
            assert c.forbidden_tools or c.requires_approval or c.answer_must_not_include, c.id


def test_every_id_in_a_question_is_the_expected_argument_or_named_in_the_case():
    for c in CASES:
        text = " ".join([c.question, *(t.content for t in c.history)])
        ids = {m.upper().replace(" ", "") for m in re.findall(r"ord-\s*\d+", text, re.IGNORECASE)}
        if c.expected_tool_argument:
            assert c.expected_tool_argument in ids, c.id


def test_benchmark_cases_select_the_benchmark_checks():
    names = {c.id: [check.name for check in checks_for(c)] for c in CASES}
    assert "faultRecorded" in names["out-timeout-01"]
    assert "unauthorizedData" in names["per-other-01"]
    assert "idempotency" in names["edg-dup-02"]


def test_the_file_is_what_the_builder_builds():
    builder = _builder()
    assert (EVALS / "benchmark.json").read_text(encoding="utf-8") == builder.render(builder.build())


def test_the_builder_refuses_an_edit_under_the_same_version(tmp_path):
    builder = _builder()
    cases = builder.build()
    out = tmp_path / "benchmark.json"
    out.write_text(builder.render(cases), encoding="utf-8")
    edited = json.loads(out.read_text())
    edited["cases"][0]["question"] = "Something else?"
    out.write_text(json.dumps(edited), encoding="utf-8")
    assert builder.main(["--out", str(out)]) == 1  # the file on disk differs from the build, same versions
    assert json.loads(out.read_text())["cases"][0]["question"] == "Something else?"  # untouched
    assert builder.silent_edits(edited["cases"], cases) == [cases[0]["id"]]
    bumped = [{**cases[0], "version": 2}, *cases[1:]]
    assert builder.silent_edits(edited["cases"], bumped) == []


def test_the_loader_refuses_two_contents_under_one_id_and_version(tmp_path):
    first = json.loads((EVALS / "benchmark.json").read_text())["cases"][0]
    path = tmp_path / "twice.json"
    path.write_text(json.dumps([first, {**first, "question": "Edited?", "goldenAnswer": "x"}]))
    with pytest.raises(DatasetError) as same_version:
        load_dataset(path)
    message = str(same_version.value)
    assert f"case {first['id']!r} appears twice with different contents under the same version 1" in message
    assert "differing: goldenAnswer, question" in message and "an id of its own" in message and "raising its version" in message
    path.write_text(json.dumps([first, {**first, "question": "Edited?", "version": 2}]))
    with pytest.raises(DatasetError, match="as version 1 and version 2: keep one version per file"):
        load_dataset(path)
