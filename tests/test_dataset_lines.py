"""eval/dataset.py on JSONL files, read a line at a time: what each line holds, what an error names,
and what a case read back from the compact dataset shares with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracegrade.core.errors import DatasetError
from tracegrade.eval.dataset import load_dataset


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


def test_a_case_read_again_holds_the_datasets_own_id_string(tmp_path: Path) -> None:
    # WHY it matters: a run keeps per-case numbers keyed by the id to its end; one string, not a copy a case
    cases = load_dataset(write(tmp_path, case("a"), case("b"))).cases
    assert [cases[i].id for i in range(2)] == ["a", "b"]
    assert all(cases[i].id is cases.ids[i] for i in range(2))  # type: ignore[attr-defined]
