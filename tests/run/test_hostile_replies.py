"""Issue 23, as a property: whatever JSON-like replies a target sends (lone
surrogates, NaN and Infinity, deep nesting, huge integers, a configured secret in
keys and values), a checks-only ``tracegrade run`` finishes, reports every case,
reads back and reports again, and the secret is in no file, store or output.

The target is in-process (``test_hostile_replies:scripted``): it answers each
case with the reply the example drew."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from tracegrade.cli import main
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase
from tracegrade.store.runstore import open_store

SECRET = "tg-prop-Secret-55831z"
PERSONAL = ("ann@example.com", "4111 1111 1111 1111")
REPLIES: dict[str, Any] = {}  # case id -> the wire reply the current example drew


def scripted(case: GoldenCase) -> Reply:
    wire = REPLIES[case.id]
    return wire if isinstance(wire, Reply) else Reply.from_wire(wire)


# --- what a hostile agent may send -----------------------------------------------------------

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
texts = st.one_of(
    st.text(st.one_of(st.characters(), surrogates), max_size=30),
    st.sampled_from([SECRET, f"token {SECRET} here", f"https://bob:{SECRET}@docs.example/a.md", *PERSONAL]),
)
numbers = st.one_of(st.integers(), st.integers(min_value=2 ** 64, max_value=10 ** 400), st.floats())  # NaN, inf
keys = st.one_of(texts, st.sampled_from(["name", "code", "kind", "model", "route", "retrievedSources"]))


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"d": [value]}
    return value


json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=20,
) | st.integers(min_value=40, max_value=400).map(nested)

tool_calls = st.fixed_dictionaries({
    "name": texts, "arguments": st.dictionaries(keys, json_like, max_size=4), "result": texts,
})
replies = st.fixed_dictionaries(
    {"answer": texts},
    optional={
        "toolCalls": st.lists(tool_calls, max_size=3),
        "retrievedSources": st.lists(texts, max_size=3),
        "retrievalScores": st.lists(st.floats(), max_size=3),
        "usage": st.fixed_dictionaries({"costUsd": st.floats()}),
        "model": texts, "route": texts, "context": texts,
        "state": st.dictionaries(keys, json_like, max_size=3),
    },
)


# --- the property ---------------------------------------------------------------------------

@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn=st.lists(replies, min_size=1, max_size=4))
def test_any_reply_gives_a_finished_run_that_reports_and_never_shows_the_secret(drawn, monkeypatch, capsys):
    monkeypatch.setenv("HOSTILE_PROP_TOKEN", SECRET)
    REPLIES.clear()
    REPLIES.update({f"case-{i}": reply for i, reply in enumerate(drawn)})
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        dataset = tmp / "d.json"
        dataset.write_text(json.dumps({"name": "d", "cases": [{"id": i, "question": "q"} for i in REPLIES]}))
        db = f"sqlite:///{tmp / 'runs.db'}"
        code = main(["run", str(dataset), "--target", "test_hostile_replies:scripted", "--checks-only",
                     "--db", db, "--out", str(tmp / "out"), "--timeout", "30"])
        assert code in (0, 1)  # the agent's verdict; 2 would be a broken run
        run_id = next((tmp / "out").iterdir()).name
        with open_store(db) as store:
            assert store.info(run_id).status == "finished"
            assert [r.case_id for r in store.load_run(run_id).results] == list(REPLIES)
        assert main(["report", run_id, "--db", db]) == 0
        assert main(["report", run_id, "--db", db, "--html", "-o", str(tmp / "r.html")]) == 0
        written = b"".join(p.read_bytes() for p in tmp.rglob("*") if p.is_file())
        printed = capsys.readouterr()
    assert SECRET.encode() not in written
    assert SECRET not in printed.out + printed.err
    for personal in PERSONAL:  # personal data is redacted in the files and the live console alike
        assert personal.encode() not in written and personal not in printed.out

