"""Broken dataset and label files through the CLI: a clear error naming the
file, the case (or item) and the field, exit 2, and nothing written to the run
store or the output folder."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from places import ROOT
from tracegrade.cli import main

GOOD = {"id": "ok-01", "question": "Where is ORD-101?", "expectedTool": "getOrderStatus",
        "expectedToolArgument": "ORD-101"}
LABELS = json.loads((ROOT / "src" / "tracegrade" / "defaults" / "human-labels.json").read_text())


def case(**changes) -> dict:
    return {**GOOD, "id": "bad-02", **changes}


# name: (file name, content, what the error must say after the file's path)
DATASETS = {
    "wrong type": ("cases.json", [GOOD, case(maxSteps="many")],
                   "case 'bad-02': field 'maxSteps': Input should be a valid integer"),
    "bool for a string": ("cases.json", [GOOD, case(expectedTool=True)],
                          "case 'bad-02': field 'expectedTool': Input should be a valid string"),
    "unknown field": ("cases.json", [GOOD, case(expectedTools=["getOrderStatus"])],
                      "case 'bad-02': field 'expectedTools': unknown key (did you mean 'expectedTool'?)"),
    "snake_case typo": ("cases.yaml", [GOOD, case(expected_tool_args="ORD-101")],
                        "case 'bad-02': field 'expected_tool_args': unknown key (did you mean 'expectedToolArgument'?)"),
    "nested field": ("cases.json", [GOOD, case(toolOrder={"mode": "sideways", "tools": []})],
                     "case 'bad-02': field 'toolOrder.mode': Input should be"),
    "id missing": ("cases.jsonl", [GOOD, {"question": "q"}], "case #2: field 'id': required, but missing"),
    "id not a string": ("cases.json", [GOOD, case(id=7)], "case #2: field 'id': Input should be a valid string"),
    "duplicate id": ("cases.json", [GOOD, GOOD], "case 'ok-01' appears twice"),
    "duplicate id, other content": ("cases.json", [GOOD, {**GOOD, "question": "Other?"}],
                                    "case 'ok-01' appears twice with different contents"),
    "not a case": ("cases.json", [GOOD, "Where is ORD-101?"], "case #2: expected an object, got str"),
    "no cases": ("cases.json", [], "no cases"),
    "a JSONL line": ("cases.jsonl", b'{"id": "a", "question": "q"}\n{"id": "b",\n', "line 2: cannot parse"),
    "Latin-1 bytes": ("cases.json", json.dumps([case(question="Où est ORD-101?")], ensure_ascii=False).encode("latin-1"),
                      "not UTF-8 text (byte"),
    "UTF-16": ("cases.json", json.dumps([GOOD]).encode("utf-16"), "not UTF-8 text (byte 0)"),
    "nested too deep": ("cases.json", b"[" * 100_000 + b"]" * 100_000, "cannot parse: nested too deeply"),
}


def write(folder: Path, name: str, content) -> Path:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(record) for record in content))
    elif name.endswith(".yaml"):
        import yaml

        path.write_text(yaml.safe_dump(content))
    else:
        path.write_text(json.dumps(content))
    return path


def stored_rows(db: Path) -> int:
    """Rows in every table of the store but its migration log (0 if there is no store)."""
    if not db.exists():
        return 0
    with sqlite3.connect(db) as connection:
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return sum(connection.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
                   for t in tables if "migration" not in t)


@pytest.mark.parametrize("name", DATASETS)
def test_a_broken_dataset_is_a_clear_error_and_writes_nothing(tmp_path, capsys, name):
    file_name, content, message = DATASETS[name]
    path = write(tmp_path, file_name, content)
    db, out = tmp_path / "runs.db", tmp_path / "out"
    code = main(["run", str(path), "--target", "support:golden_reply_async", "--checks-only",
                 "--db", f"sqlite:///{db}", "--out", str(out)])
    error = capsys.readouterr().err
    assert code == 2
    assert f"tracegrade: error: {path}: {message}" in error, error
    assert "Traceback" not in error
    assert stored_rows(db) == 0 and not out.exists()


def test_the_store_check_sees_a_run_that_was_written(tmp_path, capsys):
    """The control: the same command on a good file does write to the store and the output folder."""
    path = write(tmp_path, "cases.json", [GOOD])
    db, out = tmp_path / "runs.db", tmp_path / "out"
    assert main(["run", str(path), "--target", "support:golden_reply_async", "--checks-only",
                 "--db", f"sqlite:///{db}", "--out", str(out)]) in (0, 1)
    assert stored_rows(db) >= 2 and any(out.rglob("results.json"))  # the run and its case


def broken_labels(change) -> dict:
    data = json.loads(json.dumps(LABELS))
    change(data["items"][3])
    return data


LABEL_FILES = {
    "wrong type": (broken_labels(lambda item: item["labels"][0]["scores"].update(correctness="5")),
                   f"item {LABELS['items'][3]['id']!r}: field 'items.3.labels.0.scores.correctness': must be an integer 1..5 "
                   "or \"good\"/\"bad\", got '5'"),
    "bool score": (broken_labels(lambda item: item["labels"][0]["scores"].update(relevance=True)),
                   f"item {LABELS['items'][3]['id']!r}: field 'items.3.labels.0.scores.relevance'"),
    "unknown field": (broken_labels(lambda item: item.update(answr="x")),
                      f"item {LABELS['items'][3]['id']!r}: field 'items.3.answr': Extra inputs are not permitted"),
    "duplicate id": (broken_labels(lambda item: item.update(id=LABELS["items"][2]["id"])),
                     f"item ids must be unique; repeated: {LABELS['items'][2]['id']}"),
    "Latin-1 bytes": (json.dumps({"description": "café", "items": []}, ensure_ascii=False).encode("latin-1"),
                      "cannot parse: Invalid JSON: invalid unicode code point"),
}


@pytest.mark.parametrize("name", LABEL_FILES)
def test_a_broken_label_file_is_a_clear_error_and_writes_nothing(tmp_path, capsys, name):
    content, message = LABEL_FILES[name]
    path = write(tmp_path, "labels.json", content)
    db = tmp_path / "runs.db"
    code = main(["calibrate", "--labels", str(path), "--judge-model", "openai:judge", "--db", f"sqlite:///{db}"])
    error = capsys.readouterr().err
    assert code == 2
    assert f"tracegrade: error: {path}: {message}" in error, error
    assert stored_rows(db) == 0


# --- issue 15.5: a YAML alias bomb -------------------------------------------------------


def alias_bomb(levels: int = 9) -> str:
    """About 424 bytes that expand ~9x per level: 9**9 nodes when followed."""
    lines = ['- id: bomb-01', '  question: "Where is ORD-101?"', "  expectedArguments:", '    l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"    l{i}: &l{i} [*l{i-1},*l{i-1},*l{i-1},*l{i-1},*l{i-1},*l{i-1},*l{i-1},*l{i-1},*l{i-1}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_at_once_naming_the_file(tmp_path):
    # Three levels, not nine: without the fix nine levels hang the loader (the
    # issue's 424 bytes), three load 729 values, so the test fails rather than hangs.
    from tracegrade.core.errors import DatasetError
    from tracegrade.case.dataset import load_dataset

    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(levels=3))
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert f"{path}: line 4: YAML anchors and aliases (&l0 / *l0) are not accepted" in str(caught.value)


def test_a_single_alias_is_refused_too(tmp_path):
    from tracegrade.core.errors import DatasetError
    from tracegrade.case.dataset import load_dataset

    path = tmp_path / "alias.yml"
    path.write_text("- &case {id: a, question: q}\n- *case\n")
    with pytest.raises(DatasetError, match="line 1: YAML anchors and aliases"):
        load_dataset(path)


# --- issue 23: configuration nested past the parsers' recursion ---------------------------

DEEP = "[" * 5000 + "]" * 5000  # tomllib and PyYAML recurse once per level


# WHY ids: the default id would be the 10,000-character content itself.
@pytest.mark.parametrize("flag, name, content, message", [
    ("--prices", "prices.toml", f"[models]\nx = {DEEP}\n", "price table {path}: nested too deeply"),
    ("--rubric", "rubric.md", f"---\nmetrics: {DEEP}\n---\nbody\n", "{path}: the front matter is nested too deeply"),
], ids=["prices", "rubric"])
def test_a_deeply_nested_run_config_is_a_named_error(tmp_path, capsys, flag, name, content, message):
    path = write(tmp_path, name, content.encode())
    dataset = write(tmp_path, "d.json", json.dumps({"name": "d", "cases": [{"id": "a", "question": "q"}]}).encode())
    code = main(["run", str(dataset), "--target", "tests.support:golden_reply", flag, str(path),
                 "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", str(tmp_path / "out")])
    error = capsys.readouterr().err
    assert code == 2 and f"tracegrade: error: {message.format(path=path)}" in error, error
    assert "Traceback" not in error


def test_a_deeply_nested_gate_file_is_a_named_error(tmp_path):
    from tracegrade.compare.gate import load_gate
    from tracegrade.core.errors import ConfigError

    path = write(tmp_path, "gate.toml", f"x = {DEEP}\n".encode())
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_gate(path)
