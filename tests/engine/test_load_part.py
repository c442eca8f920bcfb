"""A large JSONL dataset's second part read by a process of its own (engine/split_load.py):
the cases, hashes, version and errors of a load in one process, whatever happens to it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tracegrade.core.errors import DatasetError
from tracegrade.engine import split_load as load_part
from tracegrade.case.dataset import load_dataset


def _cases(n: int) -> list[dict]:
    """Cases of several shapes: plain, with tools (held as records), calls, follow-ups, big
    integers, text in other scripts; each kind again and again through the file."""
    shapes = [
        lambda i: {"id": f"plain-{i}", "question": f"Where is ORD-{i}?", "expectedTool": "getOrderStatus",
                   "expectedToolArgument": f"ORD-{i}", "tags": ["a", "b"]},
        lambda i: {"id": f"tools-{i}", "question": f"Book room {i}", "tools": [
            {"name": "book", "writes": True, "parameters": {"type": "object", "properties": {"room": {"type": "integer"}}}}],
            "calls": {"expected": [{"tool": "book", "arguments": {"room": i}}]}},
        lambda i: {"id": f"intl-{i}", "question": f"Où est ma commande {i} ? 注文 {i}", "answerMustInclude": ["€"],
                   "followUps": ["Merci", "Und jetzt?"], "category": "intl"},
        lambda i: {"id": f"big-{i}", "question": "Account?", "state": {"account": 2**70 + i}},
    ]
    return [shapes[i % len(shapes)](i) for i in range(n)]


def _write(path: Path, records: list, line_end: str = "\n") -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + line_end + ("\n" if i % 37 == 5 else "")
                            for i, r in enumerate(records)), encoding="utf-8")
    return path


@pytest.fixture
def split_always(monkeypatch):
    """Every JSONL file split, and each split's part noted with how many cases it sent."""
    monkeypatch.setattr(load_part, "PARALLEL_BYTES", 0)
    parts = []
    start = load_part.second_part

    def noted(path, reader):
        part = start(path, reader)
        parts.append(part)
        return part

    monkeypatch.setattr(load_part, "second_part", noted)
    sent = load_part.SecondPart.cases

    def counted(self):
        self.sent = 0
        for frame in sent(self):
            self.sent += 1
            yield frame

    monkeypatch.setattr(load_part.SecondPart, "cases", counted)
    return parts


def _in_one_process(path: Path, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(load_part, "PARALLEL_BYTES", 1 << 60)
        return load_dataset(path)


def _errors_alike(path: Path, monkeypatch) -> tuple[str, str]:
    with pytest.raises(DatasetError) as split:
        load_dataset(path)
    with pytest.raises(DatasetError) as alone:
        _in_one_process(path, monkeypatch)
    return str(split.value), str(alone.value)


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_a_split_load_gives_the_cases_hashes_and_version_of_one_process(tmp_path, split_always, monkeypatch, line_end):
    path = _write(tmp_path / "cases.jsonl", _cases(400), line_end)
    split = load_dataset(path)
    alone = _in_one_process(path, monkeypatch)
    part = split_always[0]  # the file was split, and the other process's cases were the ones kept
    assert 0 < part.offset < path.stat().st_size and 100 < part.sent < 300
    assert split.version == alone.version
    assert [c.id for c in split.cases] == [c.id for c in alone.cases] == [r["id"] for r in _cases(400)]
    for a, b in zip(split.cases, alone.cases):
        assert a.model_dump() == b.model_dump() and a.content_hash() == b.content_hash()
    assert split.cases[-1].state == {"account": 2**70 + 399}


def test_an_error_in_the_second_part_is_named_as_one_process_names_it(tmp_path, split_always, monkeypatch):
    records = _cases(400)
    records[350]["expectedToolArgumnt"] = "typo"
    split, alone = _errors_alike(_write(tmp_path / "cases.jsonl", records), monkeypatch)
    assert split == alone and "expectedToolArgumnt" in split


def test_a_line_that_is_not_json_in_the_second_part_names_its_line(tmp_path, split_always, monkeypatch):
    path = _write(tmp_path / "cases.jsonl", _cases(400))
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[-20] = '{"id": "broken", "question": '
    path.write_text("\n".join(lines), encoding="utf-8")
    split, alone = _errors_alike(path, monkeypatch)
    assert split == alone and f"line {len(lines) - 19}" in split


@pytest.mark.parametrize("first, again", [(10, 390), (300, 390)])  # across the parts; within the second
def test_an_id_twice_is_named_with_both_places_as_one_process_names_it(tmp_path, split_always, monkeypatch, first, again):
    records = _cases(400)
    records[again]["id"] = records[first]["id"]
    split, alone = _errors_alike(_write(tmp_path / "cases.jsonl", records), monkeypatch)
    assert split == alone and f"entry #{again + 1}" in split


def test_a_second_process_that_ends_early_leaves_the_load_to_this_one(tmp_path, split_always, monkeypatch):
    monkeypatch.setattr(load_part, "_command", lambda reader, path, offset: [sys.executable, "-c", "pass"])
    path = _write(tmp_path / "cases.jsonl", _cases(400))
    assert load_dataset(path).version == _in_one_process(path, monkeypatch).version


def test_an_error_in_the_first_part_stops_the_second_process(tmp_path, split_always):
    records = _cases(400)
    records[3]["question"] = 5
    with pytest.raises(DatasetError, match="plain-3|tools-3|intl-3|big-3"):
        load_dataset(_write(tmp_path / "cases.jsonl", records))
    assert split_always[0]._child.poll() is not None
