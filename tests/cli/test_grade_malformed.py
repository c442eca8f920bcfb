"""`tracegrade grade` takes any file without crashing: every malformed shape is a named
error (file, line, field), exit 2, with secrets and personal data redacted; the size
cap holds for devices, FIFOs and pipes, the span cap for the whole file."""

from __future__ import annotations

import copy
import json
import os
import random
import threading

import pytest

import tracegrade.agent.recorded as recorded
from tracegrade.agent.recorded import load_recorded
from tracegrade.cli import main
from tracegrade.core.errors import DatasetError

KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
TOKEN = "ghp_" + "x7Yb2Qw9Lm4Np6Rt8Vz1Ks3Hd5Fg0Jc2Ae4Mu"
MAIL = "ann.lee@example.com"
DATASET = [{"id": "dune", "question": "Is Dune available?", "calls": {"forbidden": [{"tool": "cancel_hold"}]}}]


def a_line() -> dict:
    """A valid OTLP JSON export of one small GenAI trace answering the dataset's case."""
    def kv(key, value):
        return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}
    return {"resourceSpans": [{"resource": {"attributes": [kv("service.name", "library")]}, "scopeSpans": [{
        "scope": {"name": "library-agent"}, "spans": [
            {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "a1", "name": "invoke_agent",
             "startTimeUnixNano": "1000", "endTimeUnixNano": "9000", "status": {"code": 1},
             "attributes": [kv("gen_ai.operation.name", "invoke_agent"), kv("input.value", "Is Dune available?")]},
            {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "c1", "parentSpanId": "a1", "name": "chat",
             "startTimeUnixNano": "2000", "endTimeUnixNano": "3000",
             "attributes": [kv("gen_ai.operation.name", "chat"), kv("gen_ai.usage.input_tokens", 12),
                            kv("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [
                                {"type": "text", "content": "Dune is on the shelf."}]}]))]}]}]}]}


def _span(doc: dict, n: int = 1) -> dict:
    return doc["resourceSpans"][0]["scopeSpans"][0]["spans"][n]


def _set(path: str, value):
    """A mutation of a_line(): the value at ``path`` (keys and indexes, dotted) replaced."""
    def mutate(doc: dict) -> dict:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        at = doc
        for key in parents:
            at = at[key]
        at[last] = value
        return doc
    return mutate


SPAN = "resourceSpans.0.scopeSpans.0.spans.1"
SHAPES = {
    "a string in startTimeUnixNano": (_set(f"{SPAN}.startTimeUnixNano", TOKEN), "startTimeUnixNano"),
    "attributes: [1]": (_set(f"{SPAN}.attributes", [1]), "attributes[0]"),
    'status: "ERROR"': (_set(f"{SPAN}.status", "ERROR"), "status"),
    'resourceSpans: "x"': (_set("resourceSpans", KEY), "resourceSpans"),
    "a non-numeric intValue": (_set(f"{SPAN}.attributes.1.value", {"intValue": KEY}), "intValue"),
    "a non-numeric token count": (_set(f"{SPAN}.attributes.1.value", {"stringValue": MAIL}),
                                  "gen_ai.usage.input_tokens"),
    "scopeSpans as an object": (_set("resourceSpans.0.scopeSpans", {"spans": []}), "scopeSpans"),
    "a span that is null": (_set("resourceSpans.0.scopeSpans.0.spans.0", None), "spans[0]"),
    "a number for traceId": (_set(f"{SPAN}.traceId", 12), "traceId"),
    "an attribute value that is text": (_set(f"{SPAN}.attributes.0.value", TOKEN), "attributes[gen_ai.operation"),
    "a key that is a number": (_set(f"{SPAN}.attributes.0.key", 5), "key"),
    "a negative time": (_set(f"{SPAN}.endTimeUnixNano", "-5"), "endTimeUnixNano"),
    "a time past 64 bits": (_set(f"{SPAN}.endTimeUnixNano", "9" * 22), "endTimeUnixNano"),
    "a float time with a fraction": (_set(f"{SPAN}.startTimeUnixNano", 1.5), "startTimeUnixNano"),
    "a doubleValue that is a word": (_set(f"{SPAN}.attributes.1.value", {"doubleValue": KEY}), "doubleValue"),
    "a boolValue that is a word": (_set(f"{SPAN}.attributes.1.value", {"boolValue": "yes"}), "boolValue"),
    "a kvlist nested 40 deep": (_set(f"{SPAN}.attributes.1.value", json.loads(
        '{"kvlistValue": {"values": [{"key": "k", "value": ' * 40 + "{}" + "}]}}" * 40)), "nested deeper"),
    "a resource that is a number": (_set("resourceSpans.0", 7), "resourceSpans[0]"),
    "spans: a string": (_set("resourceSpans.0.scopeSpans.0.spans", TOKEN), "spans"),
    "a secret as a key, its value bad": (_set(f"{SPAN}.attributes.1", {"key": TOKEN, "value": {"intValue": "x"}}),
                                         "intValue"),
}


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(DATASET))
    return path


def _grade(tmp_path, dataset, traces) -> int:
    return main(["grade", str(traces), "--dataset", str(dataset), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path}/r.db", "--out", str(tmp_path / "out")])


@pytest.mark.parametrize("shape", SHAPES)
def test_each_malformed_shape_is_a_named_redacted_error(tmp_path, dataset, capsys, shape):
    mutate, field = SHAPES[shape]
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(a_line()) + "\n" + json.dumps(mutate(a_line())) + "\n")
    assert _grade(tmp_path, dataset, traces) == 2
    err = capsys.readouterr().err
    assert f"{traces}:2" in err and field in err, err
    assert KEY not in err and TOKEN not in err and MAIL not in err and "Traceback" not in err


@pytest.mark.parametrize("line, said", [
    ("[" * 100_000 + "]" * 100_000, "JSON nested too deep"),
    (json.dumps({"caseId": "dune", "answer": KEY, "toolCalls": KEY}), "not a Reply"),
    (json.dumps({"caseId": "dune", "answer": "x", "state": json.loads('{"a":' * 300 + "1" + "}" * 300)}),
     "nested deeper"),
    ("5", "expected a JSON object"),
], ids=["a line nested 100,000 deep", "toolCalls a key", "state nested 300 deep", "a number"])
def test_a_bad_line_of_replies_is_named_and_redacted(tmp_path, dataset, capsys, line, said):
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps({"caseId": "dune", "answer": "ok"}) + "\n" + line + "\n")
    assert _grade(tmp_path, dataset, traces) == 2
    err = capsys.readouterr().err
    assert f"{traces}:2: {said}" in err and KEY not in err, err


def test_arguments_nested_thousands_deep_are_kept_raw(tmp_path, dataset):
    doc = a_line()
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    _span(doc)["attributes"][2]["value"]["stringValue"] = json.dumps([{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "cancel_hold", "arguments": deep}]}])
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(doc) + "\n")
    [found] = load_recorded([traces])
    assert found.reply.tool_calls[0].arguments == {"_raw": deep}
    assert _grade(tmp_path, dataset, traces) == 1  # graded: the forbidden call was made


def test_an_unmatched_trace_prints_its_question_and_id_redacted(tmp_path, dataset, capsys):
    doc = a_line()
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][1]["value"]["stringValue"] = (
        f"use {KEY} and {TOKEN}, mail {MAIL}")
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["traceId"] = TOKEN  # a trace id is the file's text too
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(doc) + "\n" + json.dumps({"caseId": "dune", "answer": "ok"}) + "\n")
    _grade(tmp_path, dataset, traces)
    err = capsys.readouterr().err
    assert "not graded" in err and "is not in the dataset" in err
    assert KEY not in err and TOKEN not in err and MAIL not in err, err


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "pipe"])
def test_the_size_cap_holds_for_devices_fifos_and_pipes(tmp_path, monkeypatch, kind):
    monkeypatch.setattr(recorded, "MAX_FILE_BYTES", 4096)
    if kind == "/dev/zero":
        path = "/dev/zero"
    else:
        if kind == "fifo":
            path = str(tmp_path / "fifo")
            os.mkfifo(path)
            opened = lambda: open(path, "wb")  # noqa: E731 (blocks until the reader opens it)
        else:
            read, write = os.pipe()
            path = f"/dev/fd/{read}"
            opened = lambda: os.fdopen(write, "wb")  # noqa: E731

        def endless() -> None:
            try:
                with opened() as out:
                    for _ in range(1000):
                        out.write(b"x" * 1024)
            except BrokenPipeError:  # the reader stopped at the cap, as it should
                pass
        threading.Thread(target=endless, daemon=True).start()
    with pytest.raises(DatasetError, match="larger than 4,096 bytes"):
        load_recorded([path])


def test_the_span_cap_holds_for_the_file_not_each_line(tmp_path, monkeypatch):
    monkeypatch.setattr(recorded, "MAX_SPANS", 5)
    traces = tmp_path / "t.jsonl"
    traces.write_text("\n".join(json.dumps(a_line()) for _ in range(3)) + "\n")  # 2 spans a line
    with pytest.raises(DatasetError, match=r"t.jsonl:3 .*more than .* spans in one file"):
        load_recorded([traces])


def _mutations(rng: random.Random, doc, depth: int = 0):
    """Every node of ``doc`` replaced, one at a time, by a value of another shape."""
    odd = [None, True, -1, 2**70, 1.5, "", "x" * 3, KEY, [], [None], {}, {"intValue": "z"}, [[[]]]]
    if isinstance(doc, dict):
        for key in list(doc):
            for value in rng.sample(odd, 3):
                yield {**doc, key: value}
            for changed in _mutations(rng, doc[key], depth + 1):
                yield {**doc, key: changed}
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            for changed in _mutations(rng, item, depth + 1):
                yield [*doc[:i], changed, *doc[i + 1:]]


def test_fuzzed_shapes_never_crash(tmp_path):
    """Every node of a valid export swapped for another shape: read, or a DatasetError; never another error."""
    rng = random.Random(33)
    traces = tmp_path / "t.jsonl"
    tried = 0
    for mutated in _mutations(rng, a_line()):
        traces.write_text(json.dumps(copy.deepcopy(mutated)) + "\n")
        try:
            load_recorded([traces])
        except DatasetError as exc:
            assert KEY not in str(exc)
        tried += 1
    assert tried > 100


def test_many_traces_not_graded_are_counted_past_the_first_twenty(tmp_path, dataset, capsys):
    traces = tmp_path / "t.jsonl"
    traces.write_text("\n".join(json.dumps({"caseId": f"other-{n}", "answer": "x"}) for n in range(25))
                      + "\n" + json.dumps({"caseId": "dune", "answer": "ok"}) + "\n")
    _grade(tmp_path, dataset, traces)
    err = capsys.readouterr().err
    assert err.count("is not in the dataset") == 20 and "not graded: 5 more trace(s)" in err


def test_logs_and_metrics_beside_the_spans_are_passed_over(tmp_path):
    """A collector's file exporter may write every signal to one file."""
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps({"resourceLogs": [{"scopeLogs": []}]}) + "\n" + json.dumps(a_line()) + "\n"
                      + json.dumps({"resourceMetrics": []}) + "\n")
    [found] = load_recorded([traces])
    assert found.question == "Is Dune available?"
