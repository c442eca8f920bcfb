"""The value language, operator by operator: for each, a value that passes and
values that fail with the right kind (value | type | missing | unexpected),
written from the rules in argmatch's docstring and docs/trajectory.md."""

from __future__ import annotations

from typing import Any

import pytest

from tracegrade.case.argmatch import MISSING, OPERATORS, STRICT_INTEGERS, check, compile_spec

MONEY = {"$money": {"amount": 1250, "currency": "EUR"}}

# (operator, spec, value, the kinds of the mismatches: [] = accepted)
ROWS: list[tuple[str, Any, Any, list[str]]] = [
    ("literal", "LH1", "LH1", []),
    ("literal", "LH1", "LH2", ["value"]),
    ("literal", 10, "10", ["type"]),
    ("literal", 1617262800000, 1617262800007, ["value"]),
    ("literal", 0.3, 0.1 + 0.2, ["value"]),
    ("literal", [1, 2], [2, 1], ["value", "value"]),
    ("literal", [1, 2], [1, 2, 3], ["value"]),
    ("literal", {"a": 1}, {"a": 1, "b": 2}, ["unexpected"]),
    ("literal", {"a": 1, "b": 2}, {"a": 1}, ["missing"]),
    ("$eq", {"$eq": {"$ref": "x"}}, {"$ref": "x"}, []),
    ("$eq", {"$eq": {"$ref": "x"}}, {"$ref": "y"}, ["value"]),
    ("$eq", {"$eq": {"$ref": "x"}}, {"$ref": "x", "more": 1}, ["unexpected"]),
    ("$anyOf", {"$anyOf": ["aisle", "window"]}, "window", []),
    ("$anyOf", {"$anyOf": ["aisle", "window"]}, "middle", ["value"]),
    ("$anyOf", {"$anyOf": ["aisle", "window"]}, 3, ["type"]),
    ("$anyOf", {"$anyOf": ["aisle", "window"]}, MISSING, ["missing"]),
    ("$optional", {"$anyOf": ["aisle"], "$optional": True}, MISSING, []),
    ("$optional", {"$anyOf": ["aisle"], "$optional": True}, "window", ["value"]),
    ("$optional", {"$optional": True}, "anything", []),
    ("$any", {"$any": True}, None, []),
    ("$any", {"$any": True}, MISSING, ["missing"]),
    ("$never", {"$never": True}, "x", ["value"]),
    ("$never", {"$never": True}, None, ["value"]),
    ("$never", {"$never": True, "$optional": True}, MISSING, []),
    ("$unordered", {"$unordered": ["a", "b"]}, ["b", "a"], []),
    ("$unordered", {"$unordered": ["a", "b"]}, ["b", "a", "c"], ["value"]),  # an extra item
    ("$unordered", {"$unordered": ["a", "b"]}, ["a", "a", "b"], ["value"]),  # an extra repeat
    ("$unordered", {"$unordered": ["a", "b"]}, ["a"], ["value"]),
    ("$unordered", {"$unordered": ["a", "a"]}, ["a", "b"], ["value"]),  # a multiset
    ("$unordered", {"$unordered": ["a"]}, "a", ["type"]),
    ("$contains", {"$contains": ["a"]}, ["b", "a", "c"], []),
    ("$contains", {"$contains": ["a", "a"]}, ["a", "b"], ["value"]),  # each spec its own item
    ("$contains", {"$contains": ["a"]}, ["b"], ["value"]),
    ("$contains", {"$contains": ["a"]}, {"a": 1}, ["type"]),
    ("$has", {"$has": {"id": "BK1"}}, {"id": "BK1", "status": "ok"}, []),
    ("$has", {"$has": {"id": "BK1"}}, {"id": "BK2", "status": "ok"}, ["value"]),
    ("$has", {"$has": {"id": "BK1", "status": "ok"}}, {"id": "BK1"}, ["missing"]),
    ("$has", {"$has": {"id": "BK1"}}, ["BK1"], ["type"]),
    ("$has", {"$has": {"n": 2}}, {"n": "2"}, ["type"]),
    ("$has", {"$has": {"gone": {"$never": True, "$optional": True}}}, {"id": 1, "gone": 0}, ["value"]),
    ("$normalize", {"$eq": "new york", "$normalize": ["case", "whitespace"]}, " New  York ", []),
    ("$normalize", {"$eq": "new york", "$normalize": ["case"]}, "New  York", ["value"]),
    ("$normalize", {"$eq": "NewYork", "$normalize": ["spaces"]}, "New York", []),
    ("$normalize", {"$eq": "NewYork", "$normalize": ["spaces"]}, "New-York", ["value"]),
    ("$normalize", {"$eq": "BK1001", "$normalize": [{"remove": "-"}]}, "BK-1001", []),
    ("$normalize", {"$eq": "BK1001", "$normalize": [{"remove": "-"}]}, "BK_1001", ["value"]),
    ("$normalize", {"$eq": "2", "$normalize": ["numbers"]}, 2, ["type"]),  # never changes a type
    ("$regex", {"$regex": "^LH\\d+$"}, "LH100", []),
    ("$regex", {"$regex": "^LH\\d+$"}, "BA100", ["value"]),
    ("$regex", {"$regex": "^LH\\d+$"}, 100, ["type"]),
    ("$number", {"$number": 1000}, "1,000", []),
    ("$number", {"$number": 1000}, 1000.0, []),
    ("$number", {"$number": 1000}, "1,001", ["value"]),
    ("$number", {"$number": 1617262800000}, 1617262800007, ["value"]),
    ("$number", {"$number": 1000}, "a thousand", ["value"]),
    ("$number", {"$number": 1}, True, ["type"]),
    ("$approx", {"$approx": {"value": 0.3, "abs": 1e-9}}, 0.1 + 0.2, []),
    ("$approx", {"$approx": {"value": 100, "rel": 0.01}}, 101, []),
    ("$approx", {"$approx": {"value": 100, "rel": 0.01}}, 102, ["value"]),
    ("$approx", {"$approx": {"value": 100, "abs": 1}}, "100", ["type"]),
    ("$approx", {"$approx": {"value": 1, "abs": 1}}, True, ["type"]),
    ("$money", MONEY, "€1,250.00", []),
    ("$money", MONEY, "1.250,00 EUR", []),
    ("$money", MONEY, "$1,250.00", ["value"]),  # another currency
    ("$money", MONEY, "1,250.00", ["value"]),  # no currency at all
    ("$money", MONEY, "€1,251.00", ["value"]),
    ("$money", MONEY, 1250, ["type"]),
    ("$date", {"$date": "2026-05-01"}, "May 1, 2026", []),
    ("$date", {"$date": "2026-05-01"}, "01.05.2026", []),
    ("$date", {"$date": "2026-05-01"}, "2026-05-02", ["value"]),
    ("$date", {"$date": "2026-05-01"}, "soon", ["value"]),
    ("$date", {"$date": "2026-05-01"}, 20260501, ["type"]),
]


@pytest.mark.parametrize(("operator", "spec", "value", "kinds"), ROWS,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)])
def test_row(operator, spec, value, kinds):
    mismatches = check(compile_spec(spec), value)
    assert [m.kind for m in mismatches] == kinds
    for m in mismatches:
        assert m.describe()  # every failure says why


def test_every_operator_has_a_passing_and_a_failing_row():
    for operator in OPERATORS:
        verdicts = {not kinds for op, _, _, kinds in ROWS if op == operator}
        assert verdicts == {True, False}, operator


def test_strict_integers_is_a_mode_that_an_own_normalize_keeps():
    spec = compile_spec({"$eq": {"n": 5}, "$normalize": ["case"]})
    assert check(spec, {"n": 5.0}) == []
    assert [m.kind for m in check(spec, {"n": 5.0}, steps=(STRICT_INTEGERS,))] == ["type"]
    assert check(compile_spec(5.0), 5, steps=(STRICT_INTEGERS,)) == []  # a float parameter takes an integer
