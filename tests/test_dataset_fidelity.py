"""eval/dataset.py's fast paths held to the slow ones they replace: the canonical text is the
standard encoder's own bytes, so versions and content hashes never change with how they are made."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tracegrade.core import jsontext
from tracegrade.eval.dataset import GoldenCase, _canonical_text, load_dataset

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
    # WHY jsontext.load: read as the load reads a line (orjson reads an integer past 64 bits as a float)
    fresh = [GoldenCase.model_validate(jsontext.load(line)) for line in HOSTILE_LINES]
    texts = [json.dumps(case.canonical(), sort_keys=True, ensure_ascii=False).encode() for case in fresh]
    assert dataset.version == hashlib.sha256(b"[" + b", ".join(texts) + b"]").hexdigest()[:12]
    assert dataset.version == hashlib.sha256(json.dumps([c.canonical() for c in fresh], sort_keys=True,
                                                        ensure_ascii=False).encode()).hexdigest()[:12]
    assert [c.content_hash() for c in dataset.cases] == [hashlib.sha256(t).hexdigest() for t in texts]
    assert [c.content_hash() for c in fresh] == [hashlib.sha256(t).hexdigest() for t in texts]
