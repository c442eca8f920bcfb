"""case/dataset.py on JSONL files, read a line at a time: what each line holds, what an error names,
what a case read back from the compact dataset holds, and what the dataset keeps in memory."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path
from typing import Any, Callable

import pytest

from tracegrade.engine import packed
from tracegrade.core.errors import DatasetError
from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset


def write(tmp_path: Path, *lines: str, ending: str = "\n") -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(ending.join(lines).encode() + ending.encode())
    return path


def case(case_id: str, question: str = "Where is ORD-1?") -> str:
    return json.dumps({"id": case_id, "question": question}, ensure_ascii=False)


def test_every_line_is_a_case_in_order_blank_lines_and_crlf_endings_left_out(tmp_path: Path) -> None:
    path = write(tmp_path, case("a"), "", "   ", case("b"), case("c"), ending="\r\n")
    dataset = load_dataset(path)
    assert [c.id for c in dataset.cases] == ["a", "b", "c"]
    assert dataset.version == load_dataset(write(tmp_path, case("a"), case("b"), case("c"))).version


def test_a_line_separator_inside_a_json_string_is_the_strings_own(tmp_path: Path) -> None:
    # WHY: JSON allows U+2028 and U+0085 unescaped in a string; JSON Lines ends a line at "\n" only.
    path = write(tmp_path, case("a", "first\u2028second\x85third"), case("b"))
    assert [c.question for c in load_dataset(path).cases] == ["first\u2028second\x85third", "Where is ORD-1?"]


def test_a_lone_carriage_return_ends_a_line_and_a_bad_byte_is_named_by_its_place_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(case("a").encode() + b"\r" + case("b").encode() + b"\n")  # as when the file was read as text
    assert [c.id for c in load_dataset(path).cases] == ["a", "b"]
    second = b'{"id": "b", "question": "caf\xe9?"}\n'
    path.write_bytes(case("a").encode() + b"\n" + second)
    place = len(case("a")) + 1 + second.index(b"\xe9")
    with pytest.raises(DatasetError, match=rf"not UTF-8 text \(byte {place}\)"):
        load_dataset(path)


def test_the_files_text_is_not_held_whole_while_its_cases_load(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(packed, "SPILL_BYTES", 4096)
    # WHY long questions: what the load keeps while it runs (each id, to find one twice) stays small beside them
    path = write(tmp_path, *(case(f"case-{i:06d}", f"Where is ORD-{i}? " + "x" * 2000) for i in range(1000)))
    gc.collect()
    tracemalloc.start()
    try:
        load_dataset(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < path.stat().st_size / 2, (peak, path.stat().st_size)  # the text whole: more than its size


def test_a_line_that_does_not_parse_is_named_by_its_number_in_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, case("a"), "", '{"id": "b", "question": ', case("c"), ending="\r\n")
    with pytest.raises(DatasetError, match=r"cases\.jsonl: line 3: cannot parse"):
        load_dataset(path)


def test_a_repeated_id_says_what_differs_from_the_first_case_read_again(tmp_path: Path) -> None:
    path = write(tmp_path, case("a"), case("b"), case("a", "Where is ORD-2?"))
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    assert "case 'a' appears twice with different contents" in str(raised.value)
    assert "differing: question" in str(raised.value) and "(entry #3)" in str(raised.value)


def test_a_case_read_again_has_its_id_and_content_hash(tmp_path: Path) -> None:
    path = write(tmp_path, case("a"), case("b", "Where is ORD-2?"))
    cases = load_dataset(path).cases
    assert cases.ids() == ["a", "b"] and [cases[i].id for i in range(2)] == ["a", "b"]  # type: ignore[attr-defined]
    fresh = [GoldenCase.model_validate(json.loads(line)) for line in path.read_text().splitlines()]
    assert [c.content_hash() for c in cases] == [c.content_hash() for c in fresh]
    assert cases.find("b") == fresh[1] and cases.take([1]).ids() == ["b"]  # type: ignore[attr-defined]


def test_an_id_of_any_text_is_found_again(tmp_path: Path) -> None:
    odd = "ä ✓ 𝄞 \u2028"  # what is more than one byte in UTF-8
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": odd, "question": "q?"}) + "\n" + case("b") + "\n")
    cases = load_dataset(path).cases
    assert cases.ids() == [odd, "b"] and cases.find(odd).id == odd and cases[0].id == odd  # type: ignore[attr-defined, union-attr]


def test_a_large_dataset_holds_the_same_memory_whatever_its_size(tmp_path: Path, monkeypatch) -> None:
    # WHY: a run holds its dataset to its end; past the spill size, each case's record, id
    # and content hash are in a temporary file, and memory holds 8 bytes a batch of 64
    monkeypatch.setattr(packed, "SPILL_BYTES", 4096)
    held = {n: _held_by(load_dataset, write(tmp_path, *(case(f"case-{i:06d}", f"Where is ORD-{i}?")
                                                         for i in range(n)))) for n in (20, 1000, 4000)}
    assert held[4000] - held[1000] < 2_000, held  # ids and hashes held beside: ~300 KB
    cases = load_dataset(tmp_path / "cases.jsonl").cases
    assert cases[3999].id == "case-003999" and cases.find("case-002000").question == "Where is ORD-2000?"  # type: ignore[attr-defined, union-attr]


def _held_by(load: Callable[[Path], Any], path: Path) -> int:
    """Bytes that Python allocated while ``load(path)`` ran and that its result still holds."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = load(path)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return after - before
