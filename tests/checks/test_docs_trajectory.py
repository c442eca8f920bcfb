"""Every example in docs/trajectory.md loads, and the worked examples judge as the page says."""

from __future__ import annotations

import json
import re

import pytest

from places import ROOT
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.checks.builtin import BUILTIN_CHECKS, checks_for
from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset

DOC = ROOT / "docs" / "trajectory.md"
BLOCKS = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)]
HEADER = next(b for b in BLOCKS if "tools" in b and "cases" in b)
CASES = {b["id"]: b for b in BLOCKS if "id" in b}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("doc") / "doc.json"
    path.write_text(json.dumps({**HEADER, "cases": [*HEADER["cases"], *CASES.values()]}))
    return {c.id: c for c in load_dataset(path).cases}


def test_the_page_has_an_example_per_rule_and_the_decision():
    assert {f"doc-rule-{n}" for n in range(1, 12)} | {"doc-decision"} <= CASES.keys()
    Reply.from_wire(next(b for b in BLOCKS if "toolCalls" in b))  # the trace contract example is a valid Reply


def judge(case: GoldenCase, check: str, **reply) -> str:
    calls = tuple(ToolCall(name=n, arguments=a, status=s, turn=t, round=r)
                  for n, a, s, t, r in reply.pop("calls", ()))
    result = next(c for c in BUILTIN_CHECKS if c.name == check)(case, Reply(answer=reply.pop("answer", "ok"),
                                                                            tool_calls=calls, **reply))
    return result.code


BOOK = {"flightId": "LH100", "passengers": ["Ana Silva"], "seat": "window", "payment": "card"}


@pytest.mark.parametrize(("case_id", "check", "reply", "code"), [
    ("doc-rule-1", "expectedCalls", {"calls": [("book_flight", dict(reversed(BOOK.items())), "ok", None, None)]}, "ok"),
    ("doc-rule-1", "expectedCalls", {"calls": [("book_flight", {**BOOK, "seat": "aisle"}, "ok", None, None)]},
     "wrong_argument_value"),
    ("doc-rule-3", "expectedCalls", {"calls": [("search_flights", {"origin": "BER", "destination": "LIS", "date": "2026-05-01",
                                                                   "cabin": "business", "passengers": "2"}, "ok", None, None)]},
     "wrong_argument_type"),
    ("doc-rule-4", "toolSchema", {"calls": [("get_booking", {"bookingId": "BK-1001"}, "ok", None, None),
                                            ("search_flights", {"origin": "BER", "destination": "LIS",
                                                                "date": "2026-05-01", "passengers": "two"}, "ok", None, None)]},
     "wrong_argument_type"),
    ("doc-rule-2", "expectedCalls", {"calls": [
        ("cancel_booking", {"bookingId": "BK-1001", "refundTo": "original"}, "ok", None, None),
        ("book_flight", {"flightId": "LH102", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, None)]}, "ok"),
    ("doc-rule-2", "expectedCalls", {"calls": [
        ("cancel_booking", {"bookingId": "BK-1001", "refundTo": "voucher"}, "ok", None, None),
        ("book_flight", {"flightId": "LH102", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, None)]},
     "unexpected_argument"),
    ("doc-rule-5", "expectedCalls", {"calls": [("search_flights", {"origin": " BER ", "destination": "LIS",
                                                                   "date": "2026-05-01"}, "ok", None, None)]}, "ok"),
    ("doc-rule-5", "expectedCalls", {"calls": [("search_flights", {"origin": "BER", "destination": "LIS",
                                                                   "date": "2026-5-1"}, "ok", None, None)]},
     "wrong_argument_value"),
    ("doc-rule-6", "callOrder", {"calls": [
        ("search_flights", {"origin": "BER", "destination": "LIS", "date": "2026-05-01"}, "ok", None, 0),
        ("search_flights", {"origin": "LIS", "destination": "BER", "date": "2026-05-08"}, "ok", None, 1),
        ("book_flight", {"flightId": "LH102", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, 2),
        ("book_flight", {"flightId": "TP202", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, 3)]},
     "not_parallel"),
    ("doc-rule-6", "callOrder", {"calls": [
        ("book_flight", {"flightId": "LH102", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, 0),
        ("search_flights", {"origin": "BER", "destination": "LIS", "date": "2026-05-01"}, "ok", None, 1),
        ("search_flights", {"origin": "LIS", "destination": "BER", "date": "2026-05-08"}, "ok", None, 1),
        ("book_flight", {"flightId": "TP202", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, 2)]},
     "order"),
    ("doc-rule-9", "expectedState", {"state": {"bookings": [{"id": "BK-1002", "status": "confirmed"}]}},
     "wrong_state_value"),
    ("doc-rule-9", "expectedState", {}, "no_state"),
    ("doc-rule-7", "unexpectedCalls", {"calls": [("get_booking", {"bookingId": "BK-1002"}, "ok", None, None),
                                                 ("cancel_booking", {"bookingId": "BK-1002"}, "ok", None, None)]},
     "unexpected_write"),
    ("doc-rule-8", "forbiddenCalls", {"calls": [("cancel_booking", {"bookingId": "BK-2001"}, "denied", None, None)]},
     "forbidden_call"),
    ("doc-rule-10", "expectedCalls", {"calls": [("get_booking", {"bookingId": "BK-1001"}, "ok", 1, 0),
                                                ("cancel_booking", {"bookingId": "BK-1001"}, "ok", 1, 1)]},
     "wrong_turn"),
    ("doc-rule-11", "answerText", {"answer": "Two seats, €1,250.00 in total; you fly on May 1, 2026 with 2 bags."}, "ok"),
    ("doc-rule-11", "answerText", {"answer": "Two seats, $1,250 in total; you fly on May 1, 2026 with 2 bags."},
     "missing_text"),
    ("doc-rule-3-pairs", "expectedCalls", {"calls": [("book_flight", {
        "flightId": "LH100", "payment": "card", "passengers": ["Ben Okafor", "Ana Silva"], "seats": ["aisle", "window"]},
        "ok", None, None)]}, "ok"),
    ("doc-rule-3-pairs", "expectedCalls", {"calls": [("book_flight", {
        "flightId": "LH100", "payment": "card", "passengers": ["Ben Okafor", "Ana Silva"], "seats": ["window", "aisle"]},
        "ok", None, None)]}, "wrong_argument_value"),
    ("doc-rule-6-partial", "callOrder", {"calls": [
        ("book_flight", {"flightId": "LH102", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, 0),
        ("cancel_booking", {"bookingId": "BK-1001"}, "ok", None, 1),
        ("book_flight", {"flightId": "TP202", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, 2)]}, "ok"),
    ("doc-rule-6-partial", "callOrder", {"calls": [
        ("cancel_booking", {"bookingId": "BK-1001"}, "ok", None, 0),
        ("book_flight", {"flightId": "TP202", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, 1),
        ("book_flight", {"flightId": "LH102", "passengers": ["Ana Silva"], "payment": "card"}, "ok", None, 2)]}, "order"),
    ("doc-unsaid", "answerText", {"calls": [("get_booking", {"bookingId": "BK-1002"}, "ok", None, None)],
                                  "answer": "Basic fares are refunded as a voucher."}, "ok"),
    ("doc-decision", "answerDecision", {"answer": "You can return ORD-103. It was delivered 45 days ago."},
     "wrong_decision"),
    ("doc-decision", "answerDecision", {"answer": "No. ORD-103 was delivered 45 days ago, outside the window."}, "ok"),
])
def test_worked_examples_judge_as_the_page_says(dataset, case_id, check, reply, code):
    assert judge(dataset[case_id], check, **reply) == code


def test_a_case_that_leaves_tools_unsaid_runs_no_call_check(dataset):
    names = {c.name for c in checks_for(dataset["doc-unsaid"])}  # type: ignore[attr-defined]
    assert names.isdisjoint({"toolChoice", "expectedCalls", "unexpectedCalls", "callOrder", "forbiddenCalls"})
