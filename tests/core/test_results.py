"""A stored case result reads back equal to the one stored, and a row that does not fit is refused."""

from __future__ import annotations

import json

import pytest

from tracegrade.core.results import CaseResult, CheckResult, MetricScore
from tracegrade.core.trace import Reply, ToolCall


def result() -> CaseResult:
    call = ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-101"}, argument="ORD-101", result="SHIPPED")
    return CaseResult("c1", "fail", question="Where is ORD-101?", reply=Reply(answer="Shipped.", tool_calls=(call,)),
                      checks=(CheckResult("toolChoice", True), CheckResult("answer", False, "missing", "no date")),
                      scores={"correctness": 0.4}, seconds=1.25, agent_tokens=(10, 3), attempts=("fail", "fail"),
                      metrics=(MetricScore("correctness", 0.4, 0.5, "probability"),))


def test_a_result_reads_back_equal_and_behaves_as_one_made_directly():
    original = result()
    again = CaseResult.from_json(json.loads(json.dumps(original.to_json())))
    assert again == original and hash(again.checks) == hash(original.checks)
    assert again.failed_checks() == [original.checks[1]] and not again.passed
    with pytest.raises(AttributeError):  # still frozen
        again.status = "pass"  # type: ignore[misc]


def test_a_row_from_an_older_version_takes_the_defaults():
    again = CaseResult.from_json({"case_id": "c2", "status": "pass", "checks": [{"name": "toolChoice", "passed": True}]})
    assert again == CaseResult("c2", "pass", checks=(CheckResult("toolChoice", True),))
    assert again.repeat == 0 and again.checks[0].code == "ok"


@pytest.mark.parametrize("row", [
    {"case_id": "c3", "status": "pass", "no_such_field": 1},  # a field this version does not know
    {"status": "pass"},  # a required field missing
    {"case_id": "c4", "status": "pass", "checks": [{"name": "x"}]},  # a check without its verdict
])
def test_a_row_that_does_not_fit_is_refused_as_the_constructor_refuses_it(row):
    with pytest.raises(TypeError):
        CaseResult.from_json(row)


def test_to_json_has_every_field_given_at_construction_in_order_and_not_the_stored_form():
    import dataclasses

    result = CaseResult("c", "fail", checks=(CheckResult("toolChoice", False, "wrong_tool", "called x"),),
                        scores={"correctness": 4.0})
    object.__setattr__(result, "stored", "a cached encoding")
    given = [f.name for f in dataclasses.fields(CaseResult) if f.init]
    data = result.to_json()
    assert list(data) == given
    assert data["checks"] == ({"name": "toolChoice", "passed": False, "code": "wrong_tool", "detail": "called x"},)
    assert [list(c) for c in data["checks"]] == [[f.name for f in dataclasses.fields(CheckResult)]]
    read_back = CaseResult.from_json(data)
    assert read_back == result and list(read_back.to_json()) == given  # made without __init__: the same order


def test_made_is_the_result_its_constructor_makes_field_for_field():
    import dataclasses

    values = dict(case_id="c", status="fail", question="Where?", reply=Reply(answer="There."),
                  checks=(CheckResult("toolChoice", False, "wrong_tool", "x"),), seconds=0.5, category="k",
                  agent_tokens=(3, 4), repeat=2, case_hash="abc")
    made, built = CaseResult.made(**values), CaseResult(**values)
    assert made == built and type(made) is CaseResult and made.stored is None
    assert list(made.__dict__) == [f.name for f in dataclasses.fields(CaseResult)]  # stored last, unset
    with pytest.raises(TypeError):
        CaseResult.made(case_id="c", status="pass", not_a_field=1)  # what __init__ refuses, refused
    with pytest.raises(TypeError):
        CaseResult.made(status="pass")
