"""Issue 23: whatever a target or a check hands back, the run finishes, stores it
and reads it back; each attack of the issue is replayed here."""

from __future__ import annotations

import asyncio
import json
import re
import math
import time
from pathlib import Path

import pytest

from places import TESTS
from support import serving
from tracegrade.cli import main
from tracegrade.core.results import CheckResult
from tracegrade.core.storable import MAX_DEPTH, storable, storable_reply
from tracegrade.core.trace import Reply, ToolCall, Usage
from tracegrade.case.schema import GoldenCase
from tracegrade.run.evaluate import evaluate
from tracegrade.run.runner import RunSettings
from tracegrade.store.runstore import open_store

SECRET = "tg-hostile-Secret-7731x"


def _self_holding() -> dict:
    loop: dict = {}
    loop["self"] = loop
    return loop


# --- the conversion, value by value -------------------------------------------------------

@pytest.mark.parametrize("value, stored, reason", [
    ("ok \udcff", "ok \ufffd", "a lone surrogate replaced by U+FFFD"),
    ("\ud83d\ude00", "\U0001F600", "a lone surrogate replaced by U+FFFD"),  # a pair held apart: joined
    (math.nan, None, "NaN stored as null"),
    (-math.inf, None, "-Infinity stored as null"),
    (object(), "[object object]", "an object of type object (not JSON) replaced by a marker"),
    (b"\xff\xfeok", "\ufffd\ufffdok", "bytes stored as their UTF-8 text"),
    (_self_holding(), {"self": "[a container inside itself]"}, "a container inside itself"),
    (int("9" * 4_200), "[integer of 13,953 bits]", "an integer of 13,953 bits replaced by a marker"),
    (2 ** 70, str(2 ** 70), "an integer beyond 64 bits stored as text"),
    ({(1, 2): "tuple key", 3: "int key"}, {"[tuple key]": "tuple key", "3": "int key"}, "a tuple key"),
], ids=["surrogate", "surrogate pair", "nan", "-inf", "object", "bytes", "cycle", "4200 digits", "2**70", "keys"])
def test_each_kind_of_unstorable_value_is_converted_with_its_reason(value, stored, reason):
    converted, reasons = storable({"v": value})
    assert converted == {"v": stored}
    assert any(reason in r for r in reasons), reasons
    json.dumps(converted, allow_nan=False).encode("utf-8")  # plain JSON, valid UTF-8


def test_plain_json_is_returned_unchanged_and_without_a_reason():
    reply = Reply(answer="ok é", tool_calls=(ToolCall(name="t", arguments={"a": [1, 2.5, None, True, {"b": "c"}]}),))
    clean, reasons, chars = storable_reply(reply)
    assert clean is reply and reasons == () and chars == len("ok é" "t" "a" "b" "c" "ok")  # texts, keys, the status


def test_nesting_is_cut_at_max_depth_so_what_is_written_reads_back():
    deep: list = []
    for _ in range(300):  # the arguments nested 300 deep (under json.loads's limit, over orjson's)
        deep = [deep]
    reply, reasons, _ = storable_reply(Reply(answer="a", tool_calls=(ToolCall(name="t", arguments={"d": deep}),)))
    assert f"nested deeper than {MAX_DEPTH} levels" in reasons[0]
    text = json.dumps(reply.to_wire())
    assert text.count("[") < MAX_DEPTH + 5 and Reply.from_wire(json.loads(text)) == reply


def test_a_typed_number_that_is_not_finite_becomes_zero_and_says_so():
    reply = Reply(answer="a", retrieval_scores=(math.nan, 0.5), usage=Usage(cost_usd=math.inf))
    clean, reasons, _ = storable_reply(reply)
    assert clean.retrieval_scores == (0.0, 0.5) and clean.usage.cost_usd == 0.0
    assert reasons == ("retrievalScores[0]: NaN stored as 0.0", "usage.costUsd: Infinity stored as 0.0")


# --- whole runs: the attacks of the issue ---------------------------------------------------

def hostile_reply(case: GoldenCase) -> Reply:
    """What the issue's targets sent, one kind per case."""
    kind = case.id
    if kind == "surrogate":
        return Reply(answer="ok \udcff")
    if kind == "foreign":
        return Reply(answer="a", tool_calls=(ToolCall(name="t", arguments={
            "o": object(), "b": b"\xff", "loop": _self_holding(), "big": 10 ** 4_400 - 1}),))
    if kind == "nan":
        return Reply(answer="a", retrieval_scores=(math.nan,), usage=Usage(cost_usd=math.inf))
    if kind == "secret":
        return Reply(answer="a", model=SECRET, route=SECRET, retrieved_sources=(f"https://bob:{SECRET}@docs.example/a",),
                     tool_calls=(ToolCall(name="t", arguments={"name": SECRET, SECRET: "as a key"}),),
                     state={"kind": {"code": SECRET}})
    return Reply(answer="plain")


KINDS = ("surrogate", "foreign", "nan", "secret", "plain")


def run_hostile(tmp_path: Path, target, checks=(), timeout_s: float = 30.0, kinds=KINDS):
    cases = [GoldenCase(id=kind, question="q") for kind in kinds]
    db = f"sqlite:///{tmp_path / 'runs.db'}"

    async def ask(case: GoldenCase) -> Reply:
        return target(case)

    run = evaluate(cases, ask, judge=None, checks=checks, settings=RunSettings(checks_only=True, timeout_s=timeout_s),
                   store=db, out=tmp_path / "out")
    return run, db


def everything_written(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_a_run_of_hostile_replies_finishes_reads_back_and_reports(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOSTILE_API_TOKEN", SECRET)
    run, db = run_hostile(tmp_path, hostile_reply)

    assert run.status == "finished" and [r.case_id for r in run.results] == list(KINDS)
    flagged = {r.case_id: c.detail for r in run.results for c in r.failed_checks() if c.name == "storableReply"}
    assert set(flagged) == {"surrogate", "foreign", "nan"}
    assert "NaN stored as 0.0" in flagged["nan"] and "container inside itself" in flagged["foreign"]
    with open_store(db) as store:
        assert len(store.load_run(run.manifest.run_id).results) == len(KINDS)
        assert store.info(run.manifest.run_id).status == "finished"
    assert main(["report", run.manifest.run_id, "--db", db]) == 0
    assert main(["report", run.manifest.run_id, "--db", db, "--html", "-o", str(tmp_path / "r.html")]) == 0
    assert main(["history", "--db", db]) == 0
    printed = capsys.readouterr()
    assert SECRET.encode() not in everything_written(tmp_path)
    assert SECRET not in printed.out + printed.err


def test_a_secret_in_a_key_a_name_or_a_url_password_is_stored_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("HOSTILE_API_TOKEN", SECRET)
    run, _ = run_hostile(tmp_path, hostile_reply, kinds=("secret",))
    reply = run.results[0].reply
    assert reply.model == reply.route == "[REDACTED_KEY]"
    assert reply.retrieved_sources == ("https://bob:[REDACTED_KEY]@docs.example/a",)
    assert reply.tool_calls[0].arguments == {"name": "[REDACTED_KEY]", "[REDACTED_KEY]": "as a key"}
    assert reply.state == {"kind": {"code": "[REDACTED_KEY]"}}


def test_a_url_password_nobody_configured_is_redacted_too(tmp_path):
    run, _ = run_hostile(tmp_path, lambda case: Reply(answer="a", retrieved_sources=("https://bob:hunter2-pass@x.example/a",)),
                         kinds=("plain",))
    assert "hunter2" not in run.results[0].reply.retrieved_sources[0]


class Garbage:
    """A check (as a plugin would be) that returns what it should not."""

    def __init__(self, name, returns):
        self.name, self.returns = name, returns

    def applies(self, case):
        return True

    def __call__(self, case, reply):
        return self.returns


def test_a_check_that_returns_garbage_is_a_failed_check_naming_it(tmp_path):
    checks = (Garbage("gives-none", None), Garbage("gives-dict", {"passed": True}),
              Garbage("gives-bad-detail", CheckResult("x", False, "c", detail=b"bytes")),  # type: ignore[arg-type]
              Garbage("gives-surrogate", CheckResult("y", True, "ok", "bad \udcff")))
    run, _ = run_hostile(tmp_path, hostile_reply, checks=checks, kinds=("plain",))

    by_name = {c.name: c for c in run.results[0].checks}
    assert by_name["gives-none"] == CheckResult("gives-none", False, "check_error",
                                                "the check returned NoneType, not a CheckResult")
    assert by_name["gives-dict"].detail == "the check returned dict, not a CheckResult"
    assert "detail is bytes" in by_name["gives-bad-detail"].detail and not by_name["gives-bad-detail"].passed
    assert by_name["y"] == CheckResult("y", True, "ok", "bad \ufffd")


def test_a_check_that_never_returns_ends_its_case_at_the_deadline_and_the_run_goes_on(tmp_path):
    class Endless(Garbage):
        def __call__(self, case, reply):
            if case.id == "surrogate":
                time.sleep(60)  # a daemon thread: left behind, it does not hold the run's end
            return CheckResult(self.name, True)

    started = time.monotonic()
    run, _ = run_hostile(tmp_path, hostile_reply, checks=(Endless("endless", None),), timeout_s=1.0)
    assert time.monotonic() - started < 50  # the run did not wait for the endless check
    stuck = next(r for r in run.results if r.case_id == "surrogate")
    assert stuck.status == "error" and "checks timed out" in stuck.error
    assert {r.status for r in run.results if r.case_id != "surrogate"} <= {"pass", "fail"}


# --- an HTTP target's body ----------------------------------------------------------------

def hostile_http_app():
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    bodies = {
        "surrogate": b'{"answer": "ok \\udcff"}',
        "nan": b'{"answer": "a", "retrievalScores": [NaN], "usage": {"costUsd": Infinity}}',
        "deep": b'{"answer": "a", "toolCalls": [{"name": "t", "arguments": {"d": ' + b"[" * 300 + b"]" * 300 + b"}}]}",
        "plain": b'{"answer": "plain"}',
    }

    async def chat(request):
        question = (await request.json())["question"]
        return Response(bodies[question], media_type="application/json")

    return Starlette(routes=[Route("/chat", chat, methods=["POST"])])


def test_an_http_reply_with_a_surrogate_nan_or_deep_nesting_is_stored(tmp_path, capsys):
    names = ("surrogate", "nan", "deep", "plain")
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps({"name": "d", "cases": [{"id": n, "question": n} for n in names]}))
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with serving(hostile_http_app()) as url:
        code = main(["run", str(dataset), "--target", url + "/chat", "--checks-only", "--db", db,
                     "--out", str(tmp_path / "out")])
    printed = capsys.readouterr()
    assert code == 1, printed.err  # cases failed (storableReply), the run did not break
    run_id = next((tmp_path / "out").iterdir()).name
    with open_store(db) as store:
        run = store.load_run(run_id)
        assert store.info(run_id).status == "finished"
    status = {r.case_id: (r.status, [c.name for c in r.failed_checks()]) for r in run.results}
    assert status == {"surrogate": ("fail", ["storableReply"]), "nan": ("fail", ["storableReply"]),
                      # its tool call is unchecked: the case states no tool expectation (issue 26)
                      "deep": ("fail", ["storableReply"]), "plain": ("pass", [])}
    assert main(["report", run_id, "--db", db]) == 0


def test_the_run_loop_is_not_blocked_while_checks_run(tmp_path):
    """Checks run on a worker thread: the loop keeps ticking during a slow one."""
    ticks = []

    class Slow(Garbage):
        def __call__(self, case, reply):
            time.sleep(0.5)
            return CheckResult(self.name, True)

    async def main_loop():
        async def ticker():
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.05)

        task = asyncio.create_task(ticker())
        from tracegrade.run.runner import evaluate_case

        await evaluate_case(GoldenCase(id="a", question="q"), _async(hostile_reply), None,
                            RunSettings(checks_only=True, checks=(Slow("slow", None),)))
        task.cancel()

    asyncio.run(main_loop())
    assert len(ticks) >= 5  # ~10 in 0.5 s; a blocked loop ticks once


def _async(function):
    async def ask(case):
        return function(case)
    return ask


# --- a hostile run killed mid-way is resumed and reported ------------------------------------

async def slow_hostile(case: GoldenCase) -> Reply:
    """``hostile_reply`` after ``TG_SLOW_S`` seconds: a run that can be killed mid-way."""
    import os

    await asyncio.sleep(float(os.environ.get("TG_SLOW_S", "0")))
    return hostile_reply(case)


def test_a_hostile_run_killed_mid_way_resumes_and_reports(tmp_path, monkeypatch, capsys):
    import os
    import subprocess
    import sys

    from test_resume import _kill_after

    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps({"name": "d", "cases": [{"id": k, "question": "q"} for k in KINDS]}))
    db = tmp_path / "runs.db"
    # this file's folder (the target, test_storable) and tests/ (support.py, which it imports)
    tests = os.pathsep.join([str(Path(__file__).resolve().parent), str(TESTS)])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]),
           "TG_SLOW_S": "0.3", "HOSTILE_API_TOKEN": SECRET, "TRACEGRADE_DB": f"sqlite:///{db}"}
    process = subprocess.Popen([sys.executable, "-m", "tracegrade.cli", "run", str(dataset), "--target",
                                "test_storable:slow_hostile", "--checks-only", "--concurrency", "1", "--out",
                                str(tmp_path / "out")], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _kill_after(process, db, cases=2)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOSTILE_API_TOKEN", SECRET)
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{db}")
    with open_store(f"sqlite:///{db}") as store:
        [info] = store.runs()
        assert info.status == "running" and 2 <= len(store.load_run(info.run_id).results) < len(KINDS)
    assert main(["run", str(dataset), "--resume", info.run_id, "--out", str(tmp_path / "out")]) == 1  # cases failed
    with open_store(f"sqlite:///{db}") as store:
        assert store.info(info.run_id).status == "finished"
        assert [r.case_id for r in store.load_run(info.run_id).results] == list(KINDS)
    assert main(["report", info.run_id]) == 0 and main(["history"]) == 0
    printed = capsys.readouterr()
    assert SECRET not in printed.out + printed.err and SECRET.encode() not in everything_written(tmp_path)


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


def test_an_exception_whose_message_cannot_be_read_is_still_a_case_error_and_a_failed_check(tmp_path):
    def raises(case):
        if case.id == "surrogate":
            raise Unprintable()
        raise ValueError("bad \udcff")

    class Raising(Garbage):
        def __call__(self, case, reply):
            raise Unprintable()

    run, _ = run_hostile(tmp_path, raises, kinds=("surrogate", "plain"))
    errors = {r.case_id: r.error for r in run.results}
    where = {k: re.search(r" \(at \S*test_storable\.py:\d+ in raises <- .*\)$", v) for k, v in errors.items()}
    assert all(where.values()), errors  # the agent's own frames, read even when its message cannot be
    assert {k: v[:where[k].start()] for k, v in errors.items()} == {
        "surrogate": "agent failed: Unprintable: (its message could not be read)",
        "plain": "agent failed: ValueError: bad \ufffd"}
    run, _ = run_hostile(tmp_path / "checks", hostile_reply, checks=(Raising("raising", None),), kinds=("plain",))
    assert CheckResult("raising", False, "check_error", "Unprintable: (its message could not be read)") \
        in run.results[0].checks


def test_a_run_stored_with_null_numbers_in_its_traces_reads_back_and_reports(tmp_path, capsys):
    # Runs stored before NaN was written as 0.0 hold null there; they failed to read.
    import sqlite3

    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps({"name": "d", "cases": [{"id": "plain", "question": "plain"}]}))
    db_file = tmp_path / "runs.db"
    with serving(hostile_http_app()) as url:
        assert main(["run", str(dataset), "--target", url + "/chat", "--checks-only", "--db", f"sqlite:///{db_file}",
                     "--out", str(tmp_path / "out")]) == 0
    run_id = next((tmp_path / "out").iterdir()).name
    with sqlite3.connect(db_file) as raw:
        [(text,)] = raw.execute("SELECT result FROM case_results").fetchall()
        result = json.loads(text)
        reply = result["reply"]
        reply["usage"] = {**reply.get("usage", {}), "costUsd": None}
        reply["retrievalScores"] = [0.5, None]
        reply["steps"] = [{"kind": "model", "name": "m", "startMs": None, "durationMs": None}]
        raw.execute("UPDATE case_results SET result = ?", (json.dumps(result),))
    capsys.readouterr()
    with open_store(f"sqlite:///{db_file}") as store:
        [stored] = store.load_run(run_id).results
    assert stored.reply.usage.cost_usd == 0.0 and stored.reply.retrieval_scores == (0.5, 0.0)
    assert (stored.reply.steps[0].start_ms, stored.reply.steps[0].duration_ms) == (0.0, 0.0)
    assert main(["report", run_id, "--db", f"sqlite:///{db_file}"]) == 0
