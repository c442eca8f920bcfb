"""The run's one read made as its cases are committed (run/reading.py) gives the very files,
totals and metrics that reading the stored run back gives, whatever order the cases finish in,
whatever redaction changed in them, and when it has to leave the read to the end."""

from __future__ import annotations

import asyncio
import json
import zlib
from pathlib import Path

import pytest

from support import GOLDEN_PATH, golden_reply
from tracegrade.core.results import CaseResult
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset
from tracegrade.run import reading
from tracegrade.outputs.files import write_outputs
from tracegrade.run.evaluate import evaluate
from tracegrade.run.runner import RunSettings
from tracegrade.store.runstore import open_store

SECRET = "sk-abcdefghijklmnop1234"


def _cases() -> list[GoldenCase]:
    """The golden cases four times over, under ids of their own: several chunks of groups."""
    golden = load_dataset(GOLDEN_PATH).cases
    return [case.model_copy(update={"id": f"{case.id}-{n}"}) for n in range(4) for case in golden]


async def mixed(case: GoldenCase) -> Reply:
    """Right, wrong, failing, holding a secret or personal data, or not JSON; finishing out of order."""
    h = zlib.crc32(case.id.encode())
    await asyncio.sleep((h % 5) / 1000)
    if h % 11 == 0:
        raise RuntimeError(f"boom with {SECRET}")
    reply = golden_reply(case)
    if h % 7 == 0:
        return reply.model_copy(update={"answer": f"{reply.answer} key {SECRET}, mail ann@example.com"})
    if h % 13 == 0:
        call = ToolCall(name="getOrderStatus", arguments={"n": float("nan")}, argument="ORD-101")
        return reply.model_copy(update={"tool_calls": (*reply.tool_calls, call)})
    if h % 5 == 0:
        return reply.model_copy(update={"answer": "Sorry, I can only help with orders.", "tool_calls": ()})
    return reply


def _run_and_read_back(tmp_path: Path, cases: list[GoldenCase], settings: RunSettings) -> tuple[Path, Path]:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run = evaluate(cases, mixed, judge=None, settings=settings, store=db, out=tmp_path / "live")
    with open_store(db) as store:
        stored = store.load_run(run.manifest.run_id)
    write_outputs(stored, tmp_path / "reread", cases)
    return tmp_path / "live" / run.manifest.run_id, tmp_path / "reread" / run.manifest.run_id


def _same_files(live: Path, reread: Path) -> None:
    for name in ("junit.xml", "summary.md"):
        assert (live / name).read_text() == (reread / name).read_text(), name
    made, again = (json.loads((folder / "results.json").read_text()) for folder in (live, reread))
    # WHY the manifest apart: the stored one comes back with its keys sorted; every other part in order
    assert json.dumps(made.pop("manifest"), sort_keys=True) == json.dumps(again.pop("manifest"), sort_keys=True)
    assert json.dumps(made) == json.dumps(again)


def _finished(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many results each live read that finished had read."""
    fed: list[int] = []
    finish = reading.LiveRead.finish

    def counted(self: reading.LiveRead) -> object:
        made = finish(self)
        fed.append(self.fed)
        return made

    monkeypatch.setattr(reading.LiveRead, "finish", counted)
    return fed


def test_files_and_metrics_made_as_cases_are_committed_equal_those_read_back(tmp_path, monkeypatch):
    fed = _finished(monkeypatch)
    monkeypatch.setattr("tracegrade.metrics.CHUNK", 7)  # the sums are added chunk by chunk: cross several
    cases = _cases()
    live, reread = _run_and_read_back(tmp_path, cases, RunSettings(checks_only=True, concurrency=8))
    assert fed == [len(cases)]  # the live read was used, for every case
    _same_files(live, reread)
    written = json.loads((live / "results.json").read_text())
    statuses = {r["status"] for r in written["results"]}
    assert {"pass", "fail", "error"} <= statuses
    for name in ("results.json", "junit.xml", "summary.md"):
        assert SECRET not in (live / name).read_text(), name


def test_a_read_left_to_the_end_gives_the_same_files(tmp_path, monkeypatch):
    monkeypatch.setattr(reading.LiveRead, "WAITING", 2)  # any slow case: the read waits for the store
    fed = _finished(monkeypatch)
    live, reread = _run_and_read_back(tmp_path, _cases(), RunSettings(checks_only=True, concurrency=8))
    assert not fed
    _same_files(live, reread)


@pytest.mark.parametrize("repeat", [1, 2])
def test_results_json_is_the_store_s_rows_when_the_dataset_results_and_rows_are_held_on_disk(tmp_path, monkeypatch,
                                                                                             repeat):
    """WHY: past 1 MiB a loaded dataset, the stored run read back and each report's rows go to
    temporary files; a run of them (read live, or at the end for repeats) writes what the store holds."""
    from tracegrade.engine import packed
    from tracegrade.outputs import streamed

    monkeypatch.setattr(packed, "SPILL_BYTES", 64)
    monkeypatch.setattr(streamed.Rows, "SPILL_BYTES", 64)
    cases = _cases()
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text("".join(json.dumps(c.model_dump(mode="json", by_alias=True, exclude_defaults=True)) + "\n"
                               for c in cases))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run = evaluate(dataset, mixed, judge=None, settings=RunSettings(checks_only=True, concurrency=8, repeat=repeat),
                   store=db, out=tmp_path / "out")
    written = json.loads((tmp_path / "out" / run.manifest.run_id / "results.json").read_text())
    with open_store(db) as store:
        rows = [json.loads(text) for text in store.case_texts(run.manifest.run_id)]
    assert written["results"] == rows and len(rows) == len(cases) * repeat
    assert [r.case_id for r in run.results] == [r["case_id"] for r in rows]  # evaluate()'s Run, read from its file
    assert ("passHatK" in written["manifest"]["totals"]) == (repeat > 1)
    assert run.results._texts._file is not None  # type: ignore[attr-defined]  # what was read back was on disk


@pytest.mark.parametrize("text, same", [("Your order ORD-101 is on its way.", True),
                                        (f"key {SECRET}", False), ("mail ann@example.com", False)])
def test_a_result_is_read_as_stored(text, same):
    from tracegrade.store.runstore import stored_form

    result = CaseResult("c", "pass", reply=Reply(answer=text))
    form = stored_form(result)
    assert form.same is same
    read = reading.as_stored(result, form)
    assert (read is result) is same
    assert read == CaseResult.from_json(json.loads(form.text))


@pytest.mark.parametrize("arguments, state, scores", [
    ({"orderId": ("ORD-1", "ORD-2")}, None, None),  # a tuple reads back as a list
    ({"where": {"zip": "1", "city": "x"}}, None, None),  # keys read back sorted
    ({"orderId": "ORD-1"}, {"b": 1, "a": 2}, None),
    ({"orderId": "ORD-1"}, None, {"relevance": 4.0, "correctness": 5.0}),
    ({"orderId": "ORD-1"}, {"n": float("nan")}, None),
])
def test_a_result_whose_free_values_read_back_otherwise_is_read_from_its_text(arguments, state, scores):
    from tracegrade.store.runstore import stored_form

    call = ToolCall(name="getOrderStatus", arguments=arguments, argument="ORD-1")
    result = CaseResult("c", "pass", reply=Reply(answer="Done.", tool_calls=(call,), state=state), scores=scores)
    form = stored_form(result)
    assert not form.same
    read = reading.as_stored(result, form)
    assert read is not result and json.dumps(read.to_json(), sort_keys=False) == json.dumps(
        CaseResult.from_json(json.loads(form.text)).to_json(), sort_keys=False)
