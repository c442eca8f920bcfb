"""Trajectory conformance: one row per accept/reject pair, written from the rules
in docs/trajectory.md (not from the checks' output).

Each row: the rule it covers, the case's expectation in the dataset format, the
reply (calls, answer, state, turns), the check that judges it, and the expected
verdict: ``"ok"`` (passes), a failure code, or ``None`` (the check does not
apply to the case).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from places import ROOT
from tracegrade.core.trace import Message, Reply, ToolCall
from tracegrade.checks.builtin import BUILTIN_CHECKS, checks_for, run_checks
from tracegrade.case.schema import GoldenCase
from tracegrade.case.expectations import ToolDeclaration

STRING = {"type": "string"}
# The dataset-level tool declarations every row's case sees.
TOOLS = [
    {"name": "search_flights", "writes": False, "parameters": {
        "type": "object", "required": ["origin", "destination", "date"],
        "properties": {"origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
                       "destination": {"type": "string", "pattern": "^[A-Z]{3}$"}, "date": STRING,
                       "cabin": {"type": "string", "enum": ["economy", "premium", "business"], "default": "economy"},
                       "passengers": {"type": "integer", "minimum": 1, "default": 1},
                       "maxPrice": {"type": "number"}}}},
    {"type": "function", "writes": True, "function": {"name": "book_flight", "parameters": {
        "type": "object", "required": ["flightId", "passengers"],
        "properties": {"flightId": STRING, "passengers": {"type": "array", "items": STRING},
                       "cabin": {"type": "string", "enum": ["economy", "premium", "business"], "default": "economy"},
                       "seat": {"type": "string", "enum": ["aisle", "window", "middle"]},
                       "count": {"type": "integer"}, "insured": {"type": "boolean"}, "price": {"type": "number"},
                       "note": STRING, "traveller": {"type": "object"}, "unit": STRING, "city": STRING}}}},
    {"name": "cancel_booking", "writes": True, "parameters": {
        "type": "object", "required": ["bookingId"],
        "properties": {"bookingId": STRING, "refundTo": {"type": "string", "enum": ["original", "voucher"],
                                                          "default": "original"}}}},
    {"name": "get_booking", "writes": False, "parameters": {
        "type": "object", "required": ["bookingId"], "properties": {"bookingId": STRING}}},
    {"name": "get_weather", "writes": False},  # arguments not declared
    {"name": "log_note", "writes": False, "parameters": {"type": "object", "additionalProperties": True,
                                                        "properties": {}}},
]
DECLARED = tuple(ToolDeclaration.model_validate(t) for t in TOOLS)


def C(tool: str, status: str = "ok", turn: int | None = None, round: int | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(name=tool, arguments=arguments, status=status, turn=turn, round=round)


def build(fields: dict[str, Any]) -> GoldenCase:
    return GoldenCase.model_validate({"id": "row", "question": "q", **fields}, context={"tools": DECLARED})


def expect(*calls: dict[str, Any], **options: Any) -> dict[str, Any]:
    return {"calls": {"expected": list(calls), **options}}


def call(tool: str, arguments: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    return {"tool": tool, **({"arguments": arguments} if arguments is not None else {}), **more}


BOOK = {"flightId": "LH1", "passengers": ["Ana"]}
SEARCH = {"origin": "BER", "destination": "LIS", "date": "2026-05-01"}
PAIRED = {"itemIds": ["a", "b"], "newItemIds": ["x", "y"]}  # item a becomes x, b becomes y
TWO_TURNS = (Message(role="user", content="Find flights"), Message(role="assistant", content="LH1 costs 1,000 EUR."),
             Message(role="user", content="Book it"), Message(role="assistant", content="Booked LH1."))
NO_OPTIONS = {"yes": ["^yes", "can return", "can still return"], "no": ["^no", "cannot return", "can't return"]}
STATUS_OPTIONS = {"shipped": ["shipped", "on its way"], "delivered": ["been delivered", "was delivered"]}

# (rule, expectation fields, reply, check, expected verdict)
ROWS: list[tuple[str, dict[str, Any], dict[str, Any], str, str | None]] = [
    # 1. Expected calls with all their arguments; argument order never matters.
    ("1 all args, any order", expect(call("book_flight", {"flightId": "LH1", "passengers": ["Ana"]})),
     {"calls": [C("book_flight", passengers=["Ana"], flightId="LH1")]}, "expectedCalls", "ok"),
    ("1 second argument wrong", expect(call("book_flight", {**BOOK, "cabin": "business"})),
     {"calls": [C("book_flight", **BOOK, cabin="premium")]}, "expectedCalls", "wrong_argument_value"),
    ("1 first argument wrong", expect(call("book_flight", BOOK)),
     {"calls": [C("book_flight", flightId="LH2", passengers=["Ana"])]}, "expectedCalls", "wrong_argument_value"),
    ("1 argument missing", expect(call("book_flight", BOOK)),
     {"calls": [C("book_flight", flightId="LH1")]}, "expectedCalls", "missing_argument"),
    ("1 argument not expected", expect(call("book_flight", BOOK)),
     {"calls": [C("book_flight", **BOOK, seat="aisle")]}, "expectedCalls", "unexpected_argument"),
    ("1 other arguments allowed", expect(call("book_flight", {"flightId": "LH1"}, otherArguments="allow")),
     {"calls": [C("book_flight", **BOOK, seat="aisle")]}, "expectedCalls", "ok"),
    ("1 arguments not given: any", expect(call("book_flight")),
     {"calls": [C("book_flight", flightId="LH9", passengers=["Bo"])]}, "expectedCalls", "ok"),
    ("1 tool not called", expect(call("book_flight", BOOK)),
     {"calls": [C("search_flights", **SEARCH)]}, "expectedCalls", "missing_call"),
    ("1 no arguments expected, one given", expect(call("get_weather", {})),
     {"calls": [C("get_weather", city="Lisbon")]}, "expectedCalls", "unexpected_argument"),

    # 2. Acceptable values, optional arguments, explicit defaults.
    ("2 one of the values", expect(call("book_flight", {**BOOK, "unit": ["celsius", "C"]})),
     {"calls": [C("book_flight", **BOOK, unit=["celsius", "C"])]}, "expectedCalls", "ok"),
    ("2 $anyOf accepts one", expect(call("book_flight", {**BOOK, "unit": {"$anyOf": ["celsius", "C"]}})),
     {"calls": [C("book_flight", **BOOK, unit="C")]}, "expectedCalls", "ok"),
    ("2 $anyOf rejects another", expect(call("book_flight", {**BOOK, "unit": {"$anyOf": ["celsius", "C"]}})),
     {"calls": [C("book_flight", **BOOK, unit="kelvin")]}, "expectedCalls", "wrong_argument_value"),
    ("2 optional omitted", expect(call("book_flight", {**BOOK, "seat": {"$anyOf": ["aisle", "window"], "$optional": True}})),
     {"calls": [C("book_flight", **BOOK)]}, "expectedCalls", "ok"),
    ("2 optional given right", expect(call("book_flight", {**BOOK, "seat": {"$anyOf": ["aisle", "window"], "$optional": True}})),
     {"calls": [C("book_flight", **BOOK, seat="window")]}, "expectedCalls", "ok"),
    ("2 optional given wrong", expect(call("book_flight", {**BOOK, "seat": {"$anyOf": ["aisle", "window"], "$optional": True}})),
     {"calls": [C("book_flight", **BOOK, seat="middle")]}, "expectedCalls", "wrong_argument_value"),
    ("2 explicit default is the same call", expect(call("book_flight", BOOK)),
     {"calls": [C("book_flight", **BOOK, cabin="economy")]}, "expectedCalls", "ok"),
    ("2 a non-default value is not", expect(call("book_flight", BOOK)),
     {"calls": [C("book_flight", **BOOK, cabin="business")]}, "expectedCalls", "unexpected_argument"),
    ("2 omitted equals expected default", expect(call("book_flight", {**BOOK, "cabin": "economy"})),
     {"calls": [C("book_flight", **BOOK)]}, "expectedCalls", "ok"),
    ("2 omitted is not a non-default", expect(call("book_flight", {**BOOK, "cabin": "business"})),
     {"calls": [C("book_flight", **BOOK)]}, "expectedCalls", "missing_argument"),
    ("2 $optional alone: any or absent", expect(call("book_flight", {**BOOK, "note": {"$optional": True}})),
     {"calls": [C("book_flight", **BOOK, note="vegetarian meal")]}, "expectedCalls", "ok"),
    ("2 $any needs presence", expect(call("book_flight", {**BOOK, "note": {"$any": True}})),
     {"calls": [C("book_flight", **BOOK)]}, "expectedCalls", "missing_argument"),

    # 3. Typed comparison.
    ("3 10 is not '10'", expect(call("book_flight", {**BOOK, "count": 10})),
     {"calls": [C("book_flight", **BOOK, count="10")]}, "expectedCalls", "wrong_argument_type"),
    ("3 true is not 'true'", expect(call("book_flight", {**BOOK, "insured": True})),
     {"calls": [C("book_flight", **BOOK, insured="true")]}, "expectedCalls", "wrong_argument_type"),
    ("3 1 is not true", expect(call("book_flight", {**BOOK, "count": 1})),
     {"calls": [C("book_flight", **BOOK, count=True)]}, "expectedCalls", "wrong_argument_type"),
    ("3 integer where a number is expected", expect(call("book_flight", {**BOOK, "price": 10.0})),
     {"calls": [C("book_flight", **BOOK, price=10)]}, "expectedCalls", "ok"),
    ("3 same type, other number", expect(call("book_flight", {**BOOK, "price": 10})),
     {"calls": [C("book_flight", **BOOK, price=10.5)]}, "expectedCalls", "wrong_argument_value"),
    ("3 list in order", expect(call("book_flight", {"flightId": "LH1", "passengers": ["Ana", "Bo"]})),
     {"calls": [C("book_flight", flightId="LH1", passengers=["Bo", "Ana"])]}, "expectedCalls", "wrong_argument_value"),
    ("3 list as a set", expect(call("book_flight", {"flightId": "LH1", "passengers": {"$unordered": ["Ana", "Bo"]}})),
     {"calls": [C("book_flight", flightId="LH1", passengers=["Bo", "Ana"])]}, "expectedCalls", "ok"),
    ("3 set with an item short", expect(call("book_flight", {"flightId": "LH1", "passengers": {"$unordered": ["Ana", "Bo"]}})),
     {"calls": [C("book_flight", flightId="LH1", passengers=["Ana"])]}, "expectedCalls", "wrong_argument_value"),
    ("3 set with an item too many", expect(call("book_flight", {"flightId": "LH1", "passengers": {"$unordered": ["Ana", "Bo"]}})),
     {"calls": [C("book_flight", flightId="LH1", passengers=["Bo", "Ana", "Cy"])]}, "expectedCalls", "wrong_argument_value"),
    ("3 $contains allows others", expect(call("book_flight", {"flightId": "LH1", "passengers": {"$contains": ["Ana"]}})),
     {"calls": [C("book_flight", flightId="LH1", passengers=["Bo", "Ana"])]}, "expectedCalls", "ok"),
    ("3 $contains needs each", expect(call("book_flight", {"flightId": "LH1", "passengers": {"$contains": ["Ana", "Cy"]}})),
     {"calls": [C("book_flight", flightId="LH1", passengers=["Bo", "Ana"])]}, "expectedCalls", "wrong_argument_value"),
    ("3 $money in an argument", expect(call("book_flight", {**BOOK, "note": {"$money": {"amount": 95, "currency": "EUR"}}})),
     {"calls": [C("book_flight", **BOOK, note="EUR 95.00")]}, "expectedCalls", "ok"),
    ("3 $money: another currency", expect(call("book_flight", {**BOOK, "note": {"$money": {"amount": 95, "currency": "EUR"}}})),
     {"calls": [C("book_flight", **BOOK, note="USD 95.00")]}, "expectedCalls", "wrong_argument_value"),
    ("3 $has: other keys free", expect(call("book_flight", {**BOOK, "traveller": {"$has": {"name": "Ana"}}})),
     {"calls": [C("book_flight", **BOOK, traveller={"name": "Ana", "age": 30})]}, "expectedCalls", "ok"),
    ("3 $has: a listed key wrong", expect(call("book_flight", {**BOOK, "traveller": {"$has": {"name": "Ana"}}})),
     {"calls": [C("book_flight", **BOOK, traveller={"name": "Bo", "age": 30})]}, "expectedCalls", "wrong_argument_value"),
    ("3 $has: a listed key missing", expect(call("book_flight", {**BOOK, "traveller": {"$has": {"name": "Ana"}}})),
     {"calls": [C("book_flight", **BOOK, traveller={"age": 30})]}, "expectedCalls", "missing_argument"),
    ("3 paired lists, pairs in any order", expect(call("log_note", PAIRED, pairs=[["itemIds", "newItemIds"]])),
     {"calls": [C("log_note", itemIds=["b", "a"], newItemIds=["y", "x"])]}, "expectedCalls", "ok"),
    ("3 paired lists, a pair broken", expect(call("log_note", PAIRED, pairs=[["itemIds", "newItemIds"]])),
     {"calls": [C("log_note", itemIds=["b", "a"], newItemIds=["x", "y"])]}, "expectedCalls", "wrong_argument_value"),
    ("3 paired lists, an item too many", expect(call("log_note", PAIRED, pairs=[["itemIds", "newItemIds"]])),
     {"calls": [C("log_note", itemIds=["a", "b"], newItemIds=["x", "y", "z"])]}, "expectedCalls", "wrong_argument_value"),
    ("3 paired lists, one missing", expect(call("log_note", PAIRED, pairs=[["itemIds", "newItemIds"]])),
     {"calls": [C("log_note", itemIds=["a", "b"])]}, "expectedCalls", "missing_argument"),
    ("3 without pairs the lists keep their order", expect(call("log_note", PAIRED)),
     {"calls": [C("log_note", itemIds=["b", "a"], newItemIds=["y", "x"])]}, "expectedCalls", "wrong_argument_value"),
    ("3 set is a multiset", expect(call("book_flight", {"flightId": "LH1", "passengers": {"$unordered": ["Ana", "Ana"]}})),
     {"calls": [C("book_flight", flightId="LH1", passengers=["Ana", "Bo"])]}, "expectedCalls", "wrong_argument_value"),
    ("3 nested object, keys in any order", expect(call("book_flight", {**BOOK, "traveller": {"name": "Ana", "age": 30}})),
     {"calls": [C("book_flight", **BOOK, traveller={"age": 30, "name": "Ana"})]}, "expectedCalls", "ok"),
    ("3 nested value of the wrong type", expect(call("book_flight", {**BOOK, "traveller": {"name": "Ana", "age": 30}})),
     {"calls": [C("book_flight", **BOOK, traveller={"age": "30", "name": "Ana"})]}, "expectedCalls", "wrong_argument_type"),
    ("3 nested key added", expect(call("book_flight", {**BOOK, "traveller": {"name": "Ana"}})),
     {"calls": [C("book_flight", **BOOK, traveller={"name": "Ana", "age": 30})]}, "expectedCalls", "unexpected_argument"),
    ("3 nested key missing", expect(call("book_flight", {**BOOK, "traveller": {"name": "Ana", "age": 30}})),
     {"calls": [C("book_flight", **BOOK, traveller={"name": "Ana"})]}, "expectedCalls", "missing_argument"),
    ("3 null given as null", expect(call("book_flight", {**BOOK, "note": None})),
     {"calls": [C("book_flight", **BOOK, note=None)]}, "expectedCalls", "ok"),
    ("3 null is not absent", expect(call("book_flight", {**BOOK, "note": None})),
     {"calls": [C("book_flight", **BOOK)]}, "expectedCalls", "missing_argument"),
    ("3 an integer is compared exactly", expect(call("book_flight", {**BOOK, "count": 1617262800000})),
     {"calls": [C("book_flight", **BOOK, count=1617262800007)]}, "expectedCalls", "wrong_argument_value"),
    ("3 an integer meets itself", expect(call("book_flight", {**BOOK, "count": 1617262800000})),
     {"calls": [C("book_flight", **BOOK, count=1617262800000)]}, "expectedCalls", "ok"),
    ("3 a 10-digit id off by one", expect(call("book_flight", {**BOOK, "count": 1000000000})),
     {"calls": [C("book_flight", **BOOK, count=1000000001)]}, "expectedCalls", "wrong_argument_value"),
    ("3 floats equal only when equal", expect(call("book_flight", {**BOOK, "price": 0.3})),
     {"calls": [C("book_flight", **BOOK, price=0.1 + 0.2)]}, "expectedCalls", "wrong_argument_value"),
    ("3 $approx within abs", expect(call("book_flight", {**BOOK, "price": {"$approx": {"value": 0.3, "abs": 1e-9}}})),
     {"calls": [C("book_flight", **BOOK, price=0.1 + 0.2)]}, "expectedCalls", "ok"),
    ("3 $approx within rel", expect(call("book_flight", {**BOOK, "price": {"$approx": {"value": 100, "rel": 0.01}}})),
     {"calls": [C("book_flight", **BOOK, price=100.9)]}, "expectedCalls", "ok"),
    ("3 $approx outside", expect(call("book_flight", {**BOOK, "price": {"$approx": {"value": 100, "rel": 0.01}}})),
     {"calls": [C("book_flight", **BOOK, price=102)]}, "expectedCalls", "wrong_argument_value"),
    ("3 $approx wants a number", expect(call("book_flight", {**BOOK, "price": {"$approx": {"value": 100, "abs": 1}}})),
     {"calls": [C("book_flight", **BOOK, price="100")]}, "expectedCalls", "wrong_argument_type"),
    ("3 JSON integers: 5.0 is 5", expect(call("book_flight", {**BOOK, "count": 5})),
     {"calls": [C("book_flight", **BOOK, count=5.0)]}, "expectedCalls", "ok"),
    ("3 strict integers: 5.0 is not 5", {**expect(call("book_flight", {**BOOK, "count": 5})), "strictIntegers": True},
     {"calls": [C("book_flight", **BOOK, count=5.0)]}, "expectedCalls", "wrong_argument_type"),
    ("3 strict integers: an int for a float", {**expect(call("book_flight", {**BOOK, "price": 5.0})), "strictIntegers": True},
     {"calls": [C("book_flight", **BOOK, price=5)]}, "expectedCalls", "ok"),
    ("3 strict integers survive $normalize", {**expect(call("book_flight", {**BOOK, "traveller": {"$eq": {"age": 5}, "$normalize": ["case"]}})),
                                              "strictIntegers": True},
     {"calls": [C("book_flight", **BOOK, traveller={"age": 5.0})]}, "expectedCalls", "wrong_argument_type"),
    ("3 $never: any value fails", expect(call("book_flight", {**BOOK, "note": {"$never": True, "$optional": True}})),
     {"calls": [C("book_flight", **BOOK, note="window please")]}, "expectedCalls", "wrong_argument_value"),
    ("3 $never with $optional: absent passes", expect(call("book_flight", {**BOOK, "note": {"$never": True, "$optional": True}})),
     {"calls": [C("book_flight", **BOOK)]}, "expectedCalls", "ok"),
    ("3 $never alone: absent is missing", expect(call("book_flight", {**BOOK, "note": {"$never": True}})),
     {"calls": [C("book_flight", **BOOK)]}, "expectedCalls", "missing_argument"),
    ("3 $eq takes $ keys literally", expect(call("book_flight", {**BOOK, "traveller": {"$eq": {"$ref": "x"}}})),
     {"calls": [C("book_flight", **BOOK, traveller={"$ref": "x"})]}, "expectedCalls", "ok"),

    # 4. Tool schemas: checked on every call, even arguments the case does not spell out.
    ("4 valid call", {}, {"calls": [C("search_flights", **SEARCH, passengers=2)]}, "toolSchema", "ok"),
    ("4 unknown argument", {}, {"calls": [C("search_flights", **SEARCH, currency="EUR")]}, "toolSchema", "unknown_argument"),
    ("4 required argument missing", {}, {"calls": [C("search_flights", origin="BER", destination="LIS")]},
     "toolSchema", "missing_argument"),
    ("4 wrong type", {}, {"calls": [C("search_flights", **SEARCH, passengers="2")]}, "toolSchema", "wrong_argument_type"),
    ("4 outside the enum", {}, {"calls": [C("search_flights", **SEARCH, cabin="first")]}, "toolSchema",
     "wrong_argument_value"),
    ("4 pattern broken", {}, {"calls": [C("search_flights", origin="berlin", destination="LIS", date="2026-05-01")]},
     "toolSchema", "wrong_argument_value"),
    ("4 below the minimum", {}, {"calls": [C("search_flights", **SEARCH, passengers=0)]}, "toolSchema",
     "wrong_argument_value"),
    ("4 integer for a number", {}, {"calls": [C("search_flights", **SEARCH, maxPrice=100)]}, "toolSchema", "ok"),
    ("4 array item of the wrong type", {}, {"calls": [C("book_flight", flightId="LH1", passengers=[1])]},
     "toolSchema", "wrong_argument_type"),
    ("4 2.0 is an integer (JSON Schema)", {}, {"calls": [C("search_flights", **SEARCH, passengers=2.0)]},
     "toolSchema", "ok"),
    ("4 strict integers: 2.0 is not", {"strictIntegers": True}, {"calls": [C("search_flights", **SEARCH, passengers=2.0)]},
     "toolSchema", "wrong_argument_type"),
    ("4 unknown tool", {}, {"calls": [C("book_hotel", hotelId="H1")]}, "toolSchema", "unknown_tool"),
    ("4 parameters not declared: any", {}, {"calls": [C("get_weather", city="Lisbon", days=3)]}, "toolSchema", "ok"),
    ("4 additionalProperties true", {}, {"calls": [C("log_note", anything="goes")]}, "toolSchema", "ok"),
    ("4 schema checks calls the case never names", expect(call("get_booking", {"bookingId": "BK1"})),
     {"calls": [C("get_booking", bookingId="BK1"), C("search_flights", **SEARCH, passengers="two")]},
     "toolSchema", "wrong_argument_type"),

    # 5. String normalisation, declared; the default is exact.
    ("5 exact by default", expect(call("get_booking", {"bookingId": "bk1"})),
     {"calls": [C("get_booking", bookingId="BK1")]}, "expectedCalls", "wrong_argument_value"),
    ("5 case folding for the case", {**expect(call("get_booking", {"bookingId": "bk1"})), "normalize": ["case"]},
     {"calls": [C("get_booking", bookingId="BK1")]}, "expectedCalls", "ok"),
    ("5 whitespace per argument", expect(call("get_booking", {"bookingId": {"$eq": "BK1", "$normalize": ["whitespace"]}})),
     {"calls": [C("get_booking", bookingId="  BK1 ")]}, "expectedCalls", "ok"),
    ("5 punctuation", expect(call("get_weather", {"city": {"$eq": "St Louis", "$normalize": ["punctuation"]}})),
     {"calls": [C("get_weather", city="St. Louis")]}, "expectedCalls", "ok"),
    ("5 unicode NFKC", expect(call("get_weather", {"city": {"$eq": "LIS", "$normalize": ["unicode"]}})),
     {"calls": [C("get_weather", city="ＬＩＳ")]}, "expectedCalls", "ok"),
    ("5 per-argument exact beats the case", {**expect(call("get_booking", {"bookingId": {"$eq": "bk1", "$normalize": []}})),
                                            "normalize": ["case"]},
     {"calls": [C("get_booking", bookingId="BK1")]}, "expectedCalls", "wrong_argument_value"),
    ("5 numbers in text", expect(call("get_weather", {"city": {"$eq": "zone 1000", "$normalize": ["numbers"]}})),
     {"calls": [C("get_weather", city="zone 1,000")]}, "expectedCalls", "ok"),
    ("5 spaces removed", expect(call("get_weather", {"city": {"$eq": "NewYork", "$normalize": ["spaces"]}})),
     {"calls": [C("get_weather", city="New York")]}, "expectedCalls", "ok"),
    ("5 spaces removed in a formula", expect(call("book_flight", {**BOOK, "note": {"$eq": "3x**2+2x-1", "$normalize": ["spaces"]}})),
     {"calls": [C("book_flight", **BOOK, note="3x**2 + 2x - 1")]}, "expectedCalls", "ok"),
    ("5 spaces removed, other text still differs", expect(call("get_weather", {"city": {"$eq": "NewYork", "$normalize": ["spaces"]}})),
     {"calls": [C("get_weather", city="New-York")]}, "expectedCalls", "wrong_argument_value"),
    ("5 declared separators removed", expect(call("get_booking", {"bookingId": {"$eq": "BK1001", "$normalize": [{"remove": "-_ "}]}})),
     {"calls": [C("get_booking", bookingId="BK-1001")]}, "expectedCalls", "ok"),
    ("5 an undeclared separator stays", expect(call("get_booking", {"bookingId": {"$eq": "BK1001", "$normalize": [{"remove": "-_ "}]}})),
     {"calls": [C("get_booking", bookingId="BK.1001")]}, "expectedCalls", "wrong_argument_value"),
    ("5 normalisation does not fix a type", {**expect(call("book_flight", {**BOOK, "count": 2})), "normalize": ["case"]},
     {"calls": [C("book_flight", **BOOK, count="2")]}, "expectedCalls", "wrong_argument_type"),

    # 6. Several expected calls (a multiset), counts, order, parallel calls.
    ("6 two calls of one tool", expect(call("book_flight", BOOK), call("book_flight", {"flightId": "LH2", "passengers": ["Ana"]})),
     {"calls": [C("book_flight", flightId="LH2", passengers=["Ana"]), C("book_flight", **BOOK)]}, "expectedCalls", "ok"),
    ("6 one call cannot meet two", expect(call("book_flight", BOOK), call("book_flight", BOOK)),
     {"calls": [C("book_flight", **BOOK)]}, "expectedCalls", "missing_call"),
    ("6 second of two has a wrong argument", expect(call("book_flight", BOOK), call("book_flight", {"flightId": "LH2", "passengers": ["Ana"]})),
     {"calls": [C("book_flight", **BOOK), C("book_flight", flightId="LH3", passengers=["Ana"])]},
     "expectedCalls", "wrong_argument_value"),
    ("6 at least: another search is fine", expect(call("search_flights", SEARCH)),
     {"calls": [C("search_flights", **SEARCH), C("search_flights", **{**SEARCH, "date": "2026-05-02"})]},
     "unexpectedCalls", "ok"),
    ("6 exactly: one search too many", expect(call("search_flights", SEARCH), count="exactly"),
     {"calls": [C("search_flights", **SEARCH), C("search_flights", **{**SEARCH, "date": "2026-05-02"})]},
     "unexpectedCalls", "call_count"),
    ("6 exactly: a repeat is one too many", expect(call("search_flights", SEARCH), count="exactly"),
     {"calls": [C("search_flights", **SEARCH), C("search_flights", **SEARCH)]}, "unexpectedCalls", "call_count"),
    ("6 exactly: other reads stay free", expect(call("book_flight", BOOK), count="exactly"),
     {"calls": [C("get_booking", bookingId="BK1"), C("book_flight", **BOOK)]}, "unexpectedCalls", "ok"),
    ("6 in order", expect(call("search_flights", SEARCH), call("book_flight", BOOK), order="inOrder"),
     {"calls": [C("search_flights", **SEARCH), C("get_booking", bookingId="BK1"), C("book_flight", **BOOK)]},
     "callOrder", "ok"),
    ("6 out of order", expect(call("search_flights", SEARCH), call("book_flight", BOOK), order="inOrder"),
     {"calls": [C("book_flight", **BOOK), C("search_flights", **SEARCH)]}, "callOrder", "order"),
    ("6 any order is not checked", expect(call("search_flights", SEARCH), call("book_flight", BOOK)),
     {"calls": [C("book_flight", **BOOK), C("search_flights", **SEARCH)]}, "callOrder", None),
    ("6 one round is simultaneous", expect(call("search_flights", SEARCH), call("search_flights", {**SEARCH, "date": "2026-05-08"}), order="inOrder"),
     {"calls": [C("search_flights", round=0, **{**SEARCH, "date": "2026-05-08"}), C("search_flights", round=0, **SEARCH)]},
     "callOrder", "ok"),
    ("6 after: in a later round", expect(call("book_flight", BOOK, id="book"),
                                         call("cancel_booking", {"bookingId": "BK1"}, after=["book"])),
     {"calls": [C("book_flight", round=0, **BOOK), C("cancel_booking", round=1, bookingId="BK1")]}, "callOrder", "ok"),
    ("6 after: the pair the wrong way", expect(call("book_flight", BOOK, id="book"),
                                             call("cancel_booking", {"bookingId": "BK1"}, after=["book"])),
     {"calls": [C("cancel_booking", bookingId="BK1"), C("book_flight", **BOOK)]}, "callOrder", "order"),
    ("6 after: one round is not after", expect(call("book_flight", BOOK, id="book"),
                                             call("cancel_booking", {"bookingId": "BK1"}, after=["book"])),
     {"calls": [C("book_flight", round=0, **BOOK), C("cancel_booking", round=0, bookingId="BK1")]}, "callOrder", "order"),
    ("6 after: the others anywhere", expect(call("book_flight", BOOK, id="b1"),
                                          call("book_flight", {"flightId": "LH2", "passengers": ["Ana"]}, id="b2", after=["b1"]),
                                          call("cancel_booking", {"bookingId": "BK9"})),
     {"calls": [C("cancel_booking", bookingId="BK9"), C("book_flight", **BOOK),
                C("book_flight", flightId="LH2", passengers=["Ana"])]}, "callOrder", "ok"),
    ("6 after: a chain broken in the middle", expect(call("book_flight", BOOK, id="b1"),
                                                   call("book_flight", {"flightId": "LH2", "passengers": ["Ana"]}, id="b2", after=["b1"]),
                                                   call("book_flight", {"flightId": "LH3", "passengers": ["Ana"]}, after=["b2"])),
     {"calls": [C("book_flight", **BOOK), C("book_flight", flightId="LH3", passengers=["Ana"]),
                C("book_flight", flightId="LH2", passengers=["Ana"])]}, "callOrder", "order"),
    ("6 after: a missing call is not judged here", expect(call("book_flight", BOOK, id="book"),
                                                        call("cancel_booking", {"bookingId": "BK1"}, after=["book"])),
     {"calls": [C("cancel_booking", bookingId="BK1")]}, "callOrder", "ok"),
    ("6 parallel group in one round", expect(call("search_flights", SEARCH, parallel="out-and-back"),
                                             call("search_flights", {**SEARCH, "date": "2026-05-08"}, parallel="out-and-back")),
     {"calls": [C("search_flights", round=1, **SEARCH), C("search_flights", round=1, **{**SEARCH, "date": "2026-05-08"})]},
     "callOrder", "ok"),
    ("6 parallel group in two rounds", expect(call("search_flights", SEARCH, parallel="out-and-back"),
                                              call("search_flights", {**SEARCH, "date": "2026-05-08"}, parallel="out-and-back")),
     {"calls": [C("search_flights", round=1, **SEARCH), C("search_flights", round=2, **{**SEARCH, "date": "2026-05-08"})]},
     "callOrder", "not_parallel"),

    # 7. Reads and writes.
    ("7 reading before acting", expect(call("book_flight", BOOK)),
     {"calls": [C("search_flights", **SEARCH), C("get_booking", bookingId="BK1"), C("book_flight", **BOOK)]},
     "unexpectedCalls", "ok"),
    ("7 reading before acting passes toolChoice's place", expect(call("book_flight", BOOK)),
     {"calls": [C("search_flights", **SEARCH), C("book_flight", **BOOK)]}, "toolChoice", None),
    ("7 no write: reads allowed", expect(), {"calls": [C("get_booking", bookingId="BK1")]}, "unexpectedCalls", "ok"),
    ("7 no write: a write fails", expect(), {"calls": [C("get_booking", bookingId="BK1"), C("cancel_booking", bookingId="BK1")]},
     "unexpectedCalls", "unexpected_write"),
    ("7 an extra write beside the expected one", expect(call("book_flight", BOOK)),
     {"calls": [C("book_flight", **BOOK), C("cancel_booking", bookingId="BK1")]}, "unexpectedCalls", "unexpected_write"),
    ("7 no other call at all", expect(call("book_flight", BOOK), others="none"),
     {"calls": [C("get_booking", bookingId="BK1"), C("book_flight", **BOOK)]}, "unexpectedCalls", "unexpected_call"),
    ("7 anything else allowed", expect(call("book_flight", BOOK), others="any"),
     {"calls": [C("cancel_booking", bookingId="BK1"), C("book_flight", **BOOK)]}, "unexpectedCalls", "ok"),
    ("7 an undeclared tool may write", expect(), {"calls": [C("delete_account")]}, "unexpectedCalls", "unexpected_call"),
    ("7 reading twice is no duplicate", {}, {"calls": [C("get_booking", bookingId="BK1"), C("get_booking", bookingId="BK1")]},
     "duplicateCalls", "ok"),
    ("7 writing twice is", {}, {"calls": [C("cancel_booking", bookingId="BK1"), C("cancel_booking", bookingId="BK1")]},
     "duplicateCalls", "duplicate_call"),
    ("7 duplicates of every call, per case", {"calls": {"duplicates": "all"}},
     {"calls": [C("get_booking", bookingId="BK1"), C("get_booking", bookingId="BK1")]}, "duplicateCalls", "duplicate_call"),
    ("7 duplicates off", {"calls": {"duplicates": "off"}},
     {"calls": [C("cancel_booking", bookingId="BK1"), C("cancel_booking", bookingId="BK1")]}, "duplicateCalls", None),
    ("7 approval reads the writes from the dataset", {"requiresApproval": True},
     {"calls": [C("book_flight", **BOOK)]}, "approval", "approval_bypassed"),
    ("7 approval: the write waits", {"requiresApproval": True},
     {"calls": [C("search_flights", **SEARCH), C("book_flight", status="needs_approval", **BOOK)]}, "approval", "ok"),

    # 8. Only calls that took effect count, unless the case counts attempts.
    ("8 a failed write does not meet the expectation", expect(call("book_flight", BOOK)),
     {"calls": [C("book_flight", status="error", **BOOK)]}, "expectedCalls", "missing_call"),
    ("8 a denied write does not either", expect(call("cancel_booking", {"bookingId": "BK1"})),
     {"calls": [C("cancel_booking", status="denied", bookingId="BK1")]}, "expectedCalls", "missing_call"),
    ("8 an expected failure by its status", expect(call("book_flight", BOOK, status=["error"])),
     {"calls": [C("book_flight", status="error", **BOOK)]}, "expectedCalls", "ok"),
    ("8 a status not expected", expect(call("book_flight", BOOK, status=["needs_approval"])),
     {"calls": [C("book_flight", status="ok", **BOOK)]}, "expectedCalls", "wrong_status"),
    ("8 a denied write is no unexpected write", expect(), {"calls": [C("cancel_booking", status="denied", bookingId="BK2")]},
     "unexpectedCalls", "ok"),
    ("8 counting attempts: it is", expect(counted="attempted"),
     {"calls": [C("cancel_booking", status="denied", bookingId="BK2")]}, "unexpectedCalls", "unexpected_write"),
    ("8 counting attempts: a failed call meets", expect(call("book_flight", BOOK), counted="attempted"),
     {"calls": [C("book_flight", status="error", **BOOK)]}, "expectedCalls", "ok"),
    ("8 forbidden call that failed", {"calls": {"forbidden": [call("cancel_booking", {"bookingId": "BK2"})]}},
     {"calls": [C("cancel_booking", status="error", bookingId="BK2")]}, "forbiddenCalls", "ok"),
    ("8 forbidden call that took effect", {"calls": {"forbidden": [call("cancel_booking", {"bookingId": "BK2"})]}},
     {"calls": [C("cancel_booking", bookingId="BK2", refundTo="voucher")]}, "forbiddenCalls", "forbidden_call"),
    ("8 forbidden on other arguments is allowed", {"calls": {"forbidden": [call("cancel_booking", {"bookingId": "BK2"})]}},
     {"calls": [C("cancel_booking", bookingId="BK1")]}, "forbiddenCalls", "ok"),
    ("8 forbidden attempt, counting attempts", {"calls": {"forbidden": [call("cancel_booking")], "counted": "attempted"}},
     {"calls": [C("cancel_booking", status="denied", bookingId="BK2")]}, "forbiddenCalls", "forbidden_call"),
    ("8 a retry after a failure is no duplicate", {},
     {"calls": [C("cancel_booking", status="error", bookingId="BK1"), C("cancel_booking", bookingId="BK1")]},
     "duplicateCalls", "ok"),

    # 9. Expected effects: the final state.
    ("9 state as expected", {"state": {"bookings": [{"flightId": "LH1", "status": "confirmed"}]}},
     {"state": {"bookings": [{"flightId": "LH1", "status": "confirmed"}], "customer": "C-1"}}, "expectedState", "ok"),
    ("9 state value wrong", {"state": {"bookings": [{"flightId": "LH1", "status": "confirmed"}]}},
     {"state": {"bookings": [{"flightId": "LH1", "status": "cancelled"}]}}, "expectedState", "wrong_state_value"),
    ("9 state key missing", {"state": {"hotel": {"$any": True}}}, {"state": {"bookings": []}}, "expectedState",
     "missing_state"),
    ("9 state of the wrong type", {"state": {"seats": 2}}, {"state": {"seats": "2"}}, "expectedState", "wrong_state_type"),
    ("9 state list as a set", {"state": {"bookings": {"$unordered": [{"flightId": "LH1"}, {"flightId": "LH2"}]}}},
     {"state": {"bookings": [{"flightId": "LH2"}, {"flightId": "LH1"}]}}, "expectedState", "ok"),
    ("9 state list with an extra item", {"state": {"bookings": {"$unordered": [{"flightId": "LH1"}]}}},
     {"state": {"bookings": [{"flightId": "LH1"}, {"flightId": "LH2"}]}}, "expectedState", "wrong_state_value"),
    ("9 state $has: a key wrong", {"state": {"bookings": {"$contains": [{"$has": {"id": "BK1", "status": "cancelled"}}]}}},
     {"state": {"bookings": [{"id": "BK1", "status": "confirmed", "flightId": "LH1"}]}}, "expectedState", "wrong_state_value"),
    ("9 state $has: right, other keys free", {"state": {"bookings": {"$contains": [{"$has": {"id": "BK1", "status": "cancelled"}}]}}},
     {"state": {"bookings": [{"id": "BK1", "status": "cancelled", "flightId": "LH1"}]}}, "expectedState", "ok"),
    ("9 state object literal: a key too many", {"state": {"customer": {"id": "C-1"}}},
     {"state": {"customer": {"id": "C-1", "tier": "gold"}}}, "expectedState", "unexpected_state"),
    ("9 no state reported", {"state": {"bookings": []}}, {}, "expectedState", "no_state"),

    # 10. Multi-turn conversations.
    ("10 call after the right message", expect(call("book_flight", BOOK, turn=2)),
     {"calls": [C("search_flights", turn=1, **SEARCH), C("book_flight", turn=2, **BOOK)], "turns": TWO_TURNS},
     "expectedCalls", "ok"),
    ("10 call after the wrong message", expect(call("book_flight", BOOK, turn=2)),
     {"calls": [C("book_flight", turn=1, **BOOK)], "turns": TWO_TURNS}, "expectedCalls", "wrong_turn"),
    ("10 answer in any turn", {"answer": {"include": ["1,000 EUR"], "turn": "any"}},
     {"turns": TWO_TURNS, "answer": "Booked LH1."}, "answerText", "ok"),
    ("10 answer only in the final turn", {"answer": {"include": ["1,000 EUR"]}},
     {"turns": TWO_TURNS, "answer": "Booked LH1."}, "answerText", "missing_text"),
    ("10 answer to message 2", {"answer": {"include": ["booked"], "turn": 2}},
     {"turns": TWO_TURNS, "answer": "Booked LH1."}, "answerText", "ok"),
    ("10 no answer to message 3", {"answer": {"include": ["booked"], "turn": 3}},
     {"turns": TWO_TURNS, "answer": "Booked LH1."}, "answerText", "missing_turn"),

    # 11. Answer checks with normalisation.
    ("11 thousands separator", {"answer": {"include": [{"$number": 1000}]}}, {"answer": "It costs 1,000 EUR."},
     "answerText", "ok"),
    ("11 decimal comma", {"answer": {"include": [{"$number": 1000}]}}, {"answer": "Es kostet 1.000,00 EUR."},
     "answerText", "ok"),
    ("11 number absent", {"answer": {"include": [{"$number": 1000}]}}, {"answer": "It costs 100 EUR."},
     "answerText", "missing_text"),
    ("11 an id is not a number", {"answer": {"include": [{"$number": 103}]}}, {"answer": "ORD-103 is late."},
     "answerText", "missing_text"),
    ("11 currency symbol", {"answer": {"include": [{"$money": {"amount": 1250, "currency": "EUR"}}]}},
     {"answer": "The total is €1,250.00."}, "answerText", "ok"),
    ("11 other currency", {"answer": {"include": [{"$money": {"amount": 1250, "currency": "EUR"}}]}},
     {"answer": "The total is $1,250."}, "answerText", "missing_text"),
    ("11 date written out", {"answer": {"include": [{"$date": "2026-05-01"}]}}, {"answer": "You fly on May 1, 2026."},
     "answerText", "ok"),
    ("11 date day first", {"answer": {"include": [{"$date": "2026-05-01"}]}}, {"answer": "Abflug am 01.05.2026."},
     "answerText", "ok"),
    ("11 other date", {"answer": {"include": [{"$date": "2026-05-01"}]}}, {"answer": "You fly on 2026-05-02."},
     "answerText", "missing_text"),
    ("11 excluded number present", {"answer": {"exclude": [{"$number": 45}]}}, {"answer": "Delivered 45 days ago."},
     "answerText", "leaked_text"),
    ("11 case-insensitive by default", {"answer": {"include": ["Return Window"]}}, {"answer": "inside the return window"},
     "answerText", "ok"),

    # 13. Unstated means unchecked; "no tool" and "no write" are said explicitly.
    # Handoffs (docs/trajectory.md, "Handoffs"): one event, never an undeclared call.
    ("7 a handoff is no unexpected write", {"calls": {"expected": [], "handoffs": {"expected": ["Cancellations"]}}},
     {"calls": [ToolCall(name="transfer_to_cancellations", handoff="Cancellations")]}, "unexpectedCalls", "ok"),
    ("7 the expected handoff made", {"calls": {"handoffs": {"expected": ["Cancellations"]}}},
     {"calls": [ToolCall(name="transfer_to_cancellations", handoff="Cancellations")]}, "handoffs", "ok"),
    ("7 the expected handoff missing", {"calls": {"handoffs": {"expected": ["Cancellations"]}}},
     {"calls": [C("get_booking", bookingId="BK1")]}, "handoffs", "missing_handoff"),
    ("7 a forbidden handoff made", {"calls": {"handoffs": {"forbidden": ["*"]}}},
     {"calls": [ToolCall(name="handoff", arguments={"to_agent": "Refunds"}, handoff="Refunds")]}, "handoffs",
     "forbidden_handoff"),
    # The benchmark's expectedArguments gate toolArgument.
    ("1 expectedArguments met", {"expectedTool": "cancel_booking", "expectedArguments": {"bookingId": "BK1"}},
     {"calls": [C("cancel_booking", bookingId="BK1")]}, "toolArgument", "ok"),
    ("1 expectedArguments not met", {"expectedTool": "cancel_booking", "expectedArguments": {"bookingId": "BK1"}},
     {"calls": [C("cancel_booking", bookingId="BK2")]}, "toolArgument", "wrong_argument"),
    ("13 nothing stated: a read is not judged", {}, {"calls": [C("get_booking", bookingId="BK1")]}, "toolChoice", None),
    ("13 nothing stated: no call check at all", {}, {"calls": [C("cancel_booking", bookingId="BK1")]}, "unexpectedCalls", None),
    ("13 the seed's expectedTool null: no tool", {"expectedTool": None}, {"calls": [C("get_booking", bookingId="BK1")]},
     "toolChoice", "unexpected_tool"),
    ("13 the seed's expectedTool null, no call", {"expectedTool": None}, {}, "toolChoice", "ok"),
    ("13 no tool at all, explicitly", expect(others="none"), {"calls": [C("get_booking", bookingId="BK1")]},
     "unexpectedCalls", "unexpected_call"),
    ("13 no tool at all, and none called", expect(others="none"), {}, "unexpectedCalls", "ok"),
    ("13 no write, explicitly: a read passes", expect(), {"calls": [C("get_booking", bookingId="BK1")]},
     "unexpectedCalls", "ok"),
    ("13 no write, explicitly: a write fails", expect(), {"calls": [C("cancel_booking", bookingId="BK1")]},
     "unexpectedCalls", "unexpected_write"),

    # The decision (issue 12): the wrong decision fails without the judge.
    ("12 wrong decision", {"answer": {"decision": {"expect": "no", "options": NO_OPTIONS}}},
     {"answer": "You can return ORD-103. It was delivered 45 days ago."}, "answerDecision", "wrong_decision"),
    ("12 right decision", {"answer": {"decision": {"expect": "no", "options": NO_OPTIONS}}},
     {"answer": "No. ORD-103 was delivered 45 days ago."}, "answerDecision", "ok"),
    ("12 negative phrase is not the positive one", {"answer": {"decision": {"expect": "no", "options": NO_OPTIONS}}},
     {"answer": "Sorry, you cannot return ORD-103 any more."}, "answerDecision", "ok"),
    ("12 both decisions", {"answer": {"decision": {"expect": "no", "options": NO_OPTIONS}}},
     {"answer": "Yes, you can return it. Actually you cannot return it."}, "answerDecision", "ambiguous_decision"),
    ("12 no decision, required", {"answer": {"decision": {"expect": "no", "options": NO_OPTIONS, "required": True}}},
     {"answer": "It was delivered 45 days ago."}, "answerDecision", "no_decision"),
    ("12 no decision, not required", {"answer": {"decision": {"expect": "no", "options": NO_OPTIONS}}},
     {"answer": "It was delivered 45 days ago."}, "answerDecision", "ok"),
    ("12 negated status is not stated", {"answer": {"decision": {"expect": "shipped", "options": STATUS_OPTIONS}}},
     {"answer": "ORD-101 has shipped and has not been delivered yet."}, "answerDecision", "ok"),
    ("12 the wrong status", {"answer": {"decision": {"expect": "shipped", "options": STATUS_OPTIONS}}},
     {"answer": "ORD-101 was delivered yesterday."}, "answerDecision", "wrong_decision"),
]


def reply_of(fields: dict[str, Any]) -> Reply:
    return Reply(answer=fields.get("answer", "An answer."), tool_calls=tuple(fields.get("calls", ())),
                 turns=tuple(fields.get("turns", ())), state=fields.get("state"))


def test_the_table_has_at_least_80_rows_and_covers_every_rule():
    assert len(ROWS) >= 80
    assert {row[0].split()[0] for row in ROWS} == {str(n) for n in range(1, 14)}
    # Every rule has an accepting and a rejecting row.
    for rule in {row[0].split()[0] for row in ROWS}:
        verdicts = {row[4] for row in ROWS if row[0].split()[0] == rule}
        assert "ok" in verdicts and verdicts - {"ok", None}, rule


def test_every_failure_code_of_the_docs_table_is_produced_by_a_row():
    """docs/trajectory.md's failure-code table, for the trajectory checks: each code
    is some row's verdict, so a check that stopped producing it fails a row."""
    table = ROOT.joinpath("docs", "trajectory.md").read_text(encoding="utf-8")
    section = table.split("## Failure codes", 1)[1].split("\n\n", 2)[1]
    codes = set(re.findall(r"`([a-z_]+)`", "".join(line.split("|")[2] for line in section.splitlines()[2:])))
    produced = {row[4] for row in ROWS}
    assert len(codes) > 25 and codes <= produced, sorted(codes - produced)


@pytest.mark.parametrize(("rule", "fields", "reply", "check", "verdict"), ROWS, ids=[row[0] for row in ROWS])
def test_row(rule, fields, reply, check, verdict):
    golden = build(fields)
    checker = next(c for c in BUILTIN_CHECKS if c.name == check)
    if verdict is None:
        assert not checker.applies(golden) and check not in [c.name for c in checks_for(golden)]
        return
    assert checker.applies(golden), f"{check} does not apply to the case"
    [result] = run_checks(golden, reply_of(reply), [checker])  # as the runner asks it (a handoff is no tool call)
    assert (result.passed, result.code) == (verdict == "ok", verdict), result.detail
    if verdict != "ok":
        assert result.detail  # every failure says why
