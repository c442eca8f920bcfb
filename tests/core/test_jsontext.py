"""The fast JSON of stored and written cases reads and writes what the standard library does."""

from __future__ import annotations

import json

import pytest

from tracegrade.core import jsontext

VALUES = [
    {"answer": "Grüße, ORD-101 — shipped", "scores": {"correctness": 0.75}, "tokens": [12, 3], "ok": True, "none": None},
    {"big": 2**70, "nested": [{"x": -1.5e-7}]},  # beyond 64 bits: orjson refuses, the fallback writes it
    {2: "non-string keys", 1: "b"},  # json writes them as "1", "2"
    {"lone": "\ud800 surrogate"},
]


@pytest.mark.parametrize("value", VALUES)
def test_what_is_dumped_reads_back_as_the_standard_library_would(value):
    text = jsontext.dump(value, sort_keys=True)
    assert json.loads(text) == json.loads(json.dumps(value, sort_keys=True))
    assert jsontext.load(text) == json.loads(text)
    assert jsontext.load(text.encode("utf-8", "surrogatepass")) == json.loads(text)


def test_keys_are_sorted_only_when_asked():
    assert jsontext.dump({"b": 1, "a": 2}) == '{"b":1,"a":2}'
    assert jsontext.dump({"b": 1, "a": 2}, sort_keys=True) == '{"a":2,"b":1}'


def test_rows_the_standard_library_wrote_still_read():
    old = json.dumps({"score": float("nan"), "n": 1}, sort_keys=True, ensure_ascii=False)  # NaN: not JSON, but stored
    value = jsontext.load(old.encode())
    assert value["n"] == 1 and value["score"] != value["score"]


def test_text_nested_past_what_any_reader_takes_is_a_named_value_error():
    # Issue 23: depth is bounded the same on read and write; past orjson's 1,024 levels the
    # standard library recursed into a RecursionError.
    import pytest

    from tracegrade.core import jsontext

    with pytest.raises(ValueError, match="nested too deeply"):
        jsontext.load("[" * 5_000 + "]" * 5_000)
    assert jsontext.load("[" * 200 + "]" * 200)  # what the store writes (at most ~100 levels) reads back


@pytest.mark.parametrize("number", [2**64, 2**64 + 1, -(2**63) - 1, 123456789012345678901234567890, -98765432109876543210])
def test_an_integer_past_64_bits_reads_back_exactly_not_as_a_float(number):
    """orjson reads these as floats (2**64 + 1 as 1.8446744073709552e+19): an account number in a
    dataset line or a stored tool argument would come back as another value."""
    text = jsontext.dump({"account": number, "calls": [{"arguments": {"id": number}}]})
    for form in (text, text.encode()):
        value = jsontext.load(form)
        assert value == {"account": number, "calls": [{"arguments": {"id": number}}]}
        assert type(value["account"]) is int and type(value["calls"][0]["arguments"]["id"]) is int


def test_a_long_digit_run_in_text_or_a_float_reads_as_the_standard_library_does():
    text = '{"ticket": "ORD-12345678901234567890", "ratio": 0.12345678901234567890123, "n": 9223372036854775807}'
    assert jsontext.load(text) == json.loads(text) and type(jsontext.load(text)["n"]) is int


def test_a_big_integer_beside_non_ascii_text_and_a_lone_surrogate_still_reads_exactly():
    number = 2**64 + 7
    text = '{"name": "Zoë ٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩٠١٢", "odd": "\ud800", "id": ' + str(number) + '}'
    assert jsontext.load(text)["id"] == number and type(jsontext.load(text)["id"]) is int
    arabic_digits_only = '{"name": "٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩٠١٢", "id": 5}'  # not ASCII digits: no big integer
    assert jsontext.load(arabic_digits_only) == json.loads(arabic_digits_only)
