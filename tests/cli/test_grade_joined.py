"""`tracegrade grade` on what collectors really write: what belongs together is joined
(a trace rotated over two files, a conversation's per-turn traces, fragments with one
conversation id), what is ambiguous is not graded (two runs of a case, fragments with
nothing to join them, a turn apart), and JSON Lines break at "\\n" only."""

from __future__ import annotations

import json
from pathlib import Path


from places import TESTS
from tracegrade.cli import main
from tracegrade.core.from_otel import otel_traces

FIXTURES = TESTS / "fixtures" / "otel"
QUESTION = "Is my booking BK-7 refundable?"
FOLLOW_UP = "Then cancel it, please."
DATASET = [{"id": "refund", "question": QUESTION, "calls": {"forbidden": [{"tool": "cancel_booking"}]}},
           {"id": "other", "question": "What time is breakfast?", "answerMustInclude": ["7"]}]


def _span(trace: str, span: str, start: int, attributes: dict, parent: str = "", name: str = "s") -> dict:
    return {"traceId": trace, "spanId": span, "parentSpanId": parent, "name": name, "startTimeUnixNano": start,
            "endTimeUnixNano": start + 5, "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()]}


def _value(v):
    return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v if isinstance(v, str) else json.dumps(v)}


def _line(spans: list[dict]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, ensure_ascii=False)


def _agent(trace: str, start: int, question: str, answer: str, **more) -> dict:
    return _span(trace, f"{trace}a", start, {"openinference.span.kind": "AGENT", "input.value": question,
                                             "output.value": answer, **more}, name="agent")


def _chat(trace: str, n: int, start: int, call: tuple[str, str, dict] | None, **more) -> dict:
    out = {"llm.output_messages.0.message.role": "assistant"}
    if call:
        out.update({"llm.output_messages.0.message.tool_calls.0.tool_call.id": call[0],
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": call[1],
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": json.dumps(call[2])})
    else:
        out["llm.output_messages.0.message.content"] = "Done."
    return _span(trace, f"{trace}m{n}", start, {"openinference.span.kind": "LLM", **out, **more}, f"{trace}a", "llm")


def _tool(trace: str, n: int, start: int, call_id: str, name: str, arguments: dict, **more) -> dict:
    return _span(trace, f"{trace}t{n}", start, {"openinference.span.kind": "TOOL", "tool.name": name,
                                                "tool_call.id": call_id, "input.value": json.dumps(arguments),
                                                "output.value": "ok", **more}, f"{trace}a", name)


def _grade(tmp_path: Path, *files: Path, dataset: list | None = None, flags: tuple[str, ...] = ()) -> tuple[int, dict]:
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps(dataset or DATASET))
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    code = main(["grade", *map(str, files), "--dataset", str(ds), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path}/r.db", "--out", str(out), *flags])
    results = next(out.rglob("results.json"), None)
    return code, {r["case_id"]: r["status"] for r in json.loads(results.read_text())["results"]} if results else {}


def _breakfast(trace: str = "b0") -> str:
    return _line([_agent(trace, 1, "What time is breakfast?", "From 7 am."), _chat(trace, 0, 2, None)])


def test_a_trace_rotated_over_two_files_is_one_trace_and_its_forbidden_call_counts(tmp_path):
    """Spans are exported as they end: the call's spans went to the file before the rotation,
    the agent's root span (which ends last) to the one after."""
    (tmp_path / "a.jsonl").write_text(_line([_chat("t1", 0, 11, ("c1", "cancel_booking", {"id": "BK-7"})),
                                             _tool("t1", 0, 12, "c1", "cancel_booking", {"id": "BK-7"})]) + "\n")
    (tmp_path / "b.jsonl").write_text(_line([_chat("t1", 1, 13, None), _agent("t1", 10, QUESTION, "Yes.")]) + "\n"
                                      + _breakfast() + "\n")
    code, statuses = _grade(tmp_path, tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    assert statuses["refund"] == "fail" and code == 1  # the part in a.jsonl was an orphan, and this passed


def test_two_runs_of_a_case_are_not_graded_naming_both_and_latest_picks_the_later(tmp_path, capsys):
    yesterday = _line([_agent("old", 10, QUESTION, "Yes."), _chat("old", 0, 11, None)])
    today = _line([_agent("new", 50, QUESTION, "Yes."), _chat("new", 0, 51, ("c9", "cancel_booking", {"id": "BK-7"})),
                   _tool("new", 0, 52, "c9", "cancel_booking", {"id": "BK-7"})])
    for order, name in (((yesterday, today), "one.jsonl"), ((today, yesterday), "two.jsonl")):
        (tmp_path / name).write_text("\n".join([*order, _breakfast()]) + "\n")
        code, statuses = _grade(tmp_path, tmp_path / name)
        err = capsys.readouterr().err
        assert statuses["refund"] == "unscored" and code == 2, (name, statuses)  # the first was graded: PASS or FAIL by order
        assert "case refund: traces of 2 runs" in err and "trace old" in err and "trace new" in err
        code, statuses = _grade(tmp_path, tmp_path / name, flags=("--latest",))
        assert statuses["refund"] == "fail" and code == 1


def test_fragments_with_no_root_are_never_graded_as_the_case(tmp_path, capsys):
    """OpenLLMetry with no span of the agent's own: every model call a trace of its own."""
    dataset = [{"id": "desk", "question": "Please cancel my booking BK-1001.", "answerMustInclude": ["cancelled"]},
               DATASET[1]]
    lines = (FIXTURES / "openllmetry.jsonl").read_text() + _breakfast() + "\n"
    (tmp_path / "t.jsonl").write_text(lines)
    code, statuses = _grade(tmp_path, tmp_path / "t.jsonl", dataset=dataset)
    assert statuses["desk"] == "unscored" and code == 2, statuses  # its first fragment was graded: empty_answer FAIL
    assert "case desk: only fragments of its trace" in capsys.readouterr().err

    span_attributes = '"attributes":[{"key":"gen_ai.operation.name"'
    joined = lines.replace(span_attributes, '"attributes":[{"key":"gen_ai.conversation.id","value":'
                           '{"stringValue":"conv-1"}},{"key":"gen_ai.operation.name"')
    (tmp_path / "joined.jsonl").write_text(joined)
    code, statuses = _grade(tmp_path, tmp_path / "joined.jsonl", dataset=dataset)
    assert statuses == {"desk": "pass", "other": "pass"} and code == 0


def _turns(session: bool) -> str:
    more = {"session.id": "s-1"} if session else {}
    turn_1 = [_agent("u1", 10, QUESTION, "Yes, it is.", **more),
              _chat("u1", 0, 11, ("g1", "get_booking", {"id": "BK-7"}), **more),
              _tool("u1", 0, 12, "g1", "get_booking", {"id": "BK-7"}, **more)]
    # turn 2's model span replays turn 1's call from memory (its input): not a new call
    replay = {"llm.input_messages.1.message.role": "assistant",
              "llm.input_messages.1.message.tool_calls.0.tool_call.id": "g1",
              "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "get_booking"}
    turn_2 = [_agent("u2", 50, FOLLOW_UP, "Cancelled.", **more),
              _chat("u2", 0, 51, ("x1", "cancel_booking", {"id": "BK-7"}), **more, **replay),
              _tool("u2", 0, 52, "x1", "cancel_booking", {"id": "BK-7"}, **more)]
    return _line(turn_1) + "\n" + _line(turn_2) + "\n" + _breakfast() + "\n"


CONVERSATION = [{"id": "refund", "question": QUESTION, "followUps": [FOLLOW_UP],
                 "calls": {"expected": [{"tool": "get_booking"}, {"tool": "cancel_booking"}]}}, DATASET[1]]


def test_per_turn_traces_of_one_session_are_one_conversation(tmp_path):
    (tmp_path / "t.jsonl").write_text(_turns(session=True))
    code, statuses = _grade(tmp_path, tmp_path / "t.jsonl", dataset=CONVERSATION)
    assert statuses == {"refund": "pass", "other": "pass"} and code == 0  # turn 1 alone was graded: FAIL
    reply = json.loads(next((tmp_path / "out0").rglob("results.json")).read_text())["results"]
    calls = next(r for r in reply if r["case_id"] == "refund")["reply"]["toolCalls"]
    assert [(c["name"], c["turn"]) for c in calls] == [("get_booking", 1), ("cancel_booking", 2)]


def test_a_turn_with_nothing_joining_it_leaves_the_case_not_graded(tmp_path, capsys):
    (tmp_path / "t.jsonl").write_text(_turns(session=False))
    code, statuses = _grade(tmp_path, tmp_path / "t.jsonl", dataset=CONVERSATION)
    assert statuses["refund"] == "unscored" and code == 2
    assert "turn 2 in" in capsys.readouterr().err


def test_one_call_id_claimed_by_two_tools_names_both():
    spans = [_agent("d", 1, QUESTION, "Here."), _tool("d", 0, 2, "c1", "get_booking", {"id": "BK-7"}),
             _tool("d", 1, 3, "c1", "cancel_booking", {"id": "BK-7"})]
    doc = json.loads(_line(spans))
    from tracegrade.core.spans import spans_of_otlp_json

    [found] = otel_traces(spans_of_otlp_json(doc))
    problem = found.wire["provenance"]["problem"]
    assert "'get_booking' and 'cancel_booking'" in problem  # the second was dropped, silently


def test_json_lines_break_at_newline_only(tmp_path):
    """U+2028, U+0085 and a form feed inside a string are text, not line ends (str.splitlines breaks there)."""
    answer = "From 7 am.\u2028Lunch\u0085at noon\x0c."
    line = _line([_agent("b", 1, "What time is breakfast?", answer), _chat("b", 0, 2, None)])
    (tmp_path / "t.jsonl").write_text(line + "\n" + _line([_agent("c", 9, QUESTION, "Yes."),
                                                           _chat("c", 0, 10, None)]) + "\n", encoding="utf-8")
    code, statuses = _grade(tmp_path, tmp_path / "t.jsonl")
    assert statuses == {"refund": "pass", "other": "pass"} and code == 0


def test_genai_span_events_and_traceloop_tool_spans_are_read():
    """The older GenAI event form on the span (gen_ai.content.prompt / gen_ai.completion events, and
    per-message events with gen_ai.event.content), and a traceloop tool span (its input wraps kwargs)."""
    from tracegrade.core.spans import json_span

    choice = {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "cancel_booking", "arguments": '{"id": "BK-7"}'}}]}}
    chat = {"traceId": "e", "spanId": "m", "parentSpanId": "a", "name": "chat", "startTimeUnixNano": 2,
            "endTimeUnixNano": 3, "attributes": {"gen_ai.operation.name": "chat"},
            "events": [{"name": "gen_ai.user.message", "attributes": [{"key": "gen_ai.event.content", "value": {
                "stringValue": json.dumps({"content": QUESTION})}}]},
                {"name": "gen_ai.choice", "attributes": [{"key": "gen_ai.event.content",
                                                          "value": {"stringValue": json.dumps(choice)}}]}]}
    legacy = {**chat, "spanId": "m2", "startTimeUnixNano": 6, "endTimeUnixNano": 7, "events": [
        {"name": "gen_ai.content.completion", "attributes": [{"key": "gen_ai.completion", "value": {
            "stringValue": json.dumps([{"role": "assistant", "content": "Cancelled."}])}}]}]}
    tool = {"traceId": "e", "spanId": "t", "parentSpanId": "a", "name": "cancel_booking.tool",
            "startTimeUnixNano": 4, "endTimeUnixNano": 5, "attributes": {
                "traceloop.span.kind": "tool", "traceloop.entity.name": "cancel_booking",
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"id": "BK-7"}}),
                "traceloop.entity.output": json.dumps("cancelled")}}
    agent = {"traceId": "e", "spanId": "a", "name": "desk.workflow", "startTimeUnixNano": 1, "endTimeUnixNano": 9,
             "attributes": {"traceloop.span.kind": "workflow"}}
    [found] = otel_traces([json_span(s) for s in (agent, chat, tool, legacy)])
    assert [(c["name"], c["arguments"], c["result"], c["id"]) for c in found.wire["toolCalls"]] == [
        ("cancel_booking", {"id": "BK-7"}, "cancelled", "c1")]
    assert found.question == QUESTION and found.wire["answer"] == "Cancelled."
    assert found.wire["provenance"]["problem"] == ""


def test_a_bad_log_record_is_a_named_error(tmp_path, capsys):
    (tmp_path / "t.jsonl").write_text(_breakfast() + "\n" + json.dumps({"resourceLogs": [{"scopeLogs": [
        {"logRecords": [{"traceId": 7, "spanId": "m"}]}]}]}) + "\n")
    assert _grade(tmp_path, tmp_path / "t.jsonl")[0] == 2
    assert "t.jsonl:2 resourceLogs[0].scopeLogs[0].logRecords[0].traceId: not a string" in capsys.readouterr().err


def test_a_case_whose_call_id_two_tools_claim_is_unscored_when_graded(tmp_path):
    spans = [_agent("d", 1, QUESTION, "Here."), _tool("d", 0, 2, "c1", "get_booking", {"id": "BK-7"}),
             _tool("d", 1, 3, "c1", "cancel_booking", {"id": "BK-7"})]
    (tmp_path / "t.jsonl").write_text(_line(spans) + "\n" + _breakfast() + "\n")
    code, statuses = _grade(tmp_path, tmp_path / "t.jsonl", dataset=[
        {"id": "refund", "question": QUESTION, "calls": {"expected": [{"tool": "get_booking"}]}}, DATASET[1]])
    assert statuses["refund"] == "unscored" and code == 2  # PASS, exit 0, before: the cancel dropped


def test_one_session_id_for_every_conversation_still_tells_the_cases_apart(tmp_path):
    """An agent that keeps one session id for all its conversations (a constant): each case's
    question starts its own conversation."""
    breakfast = _line([_agent("b1", 100, "What time is breakfast?", "From 7 am.", **{"session.id": "s-1"}),
                       _chat("b1", 0, 101, None)])
    (tmp_path / "t.jsonl").write_text(_turns(session=True).replace(_breakfast() + "\n", "") + breakfast + "\n")
    code, statuses = _grade(tmp_path, tmp_path / "t.jsonl", dataset=CONVERSATION)
    assert statuses == {"refund": "pass", "other": "pass"} and code == 0


def test_a_span_a_collector_wrote_twice_is_one_span(tmp_path):
    """At-least-once delivery: the same export line twice. One call, its tokens once."""
    line = _line([_agent("r", 1, QUESTION, "Yes."), {**_chat("r", 0, 2, ("c1", "get_booking", {"id": "BK-7"})),
                  "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
                                 {"key": "llm.token_count.prompt", "value": {"intValue": "30"}}]},
                  _tool("r", 0, 3, "c1", "get_booking", {"id": "BK-7"})])
    from tracegrade.core.spans import spans_of_otlp_json

    [found] = otel_traces(spans_of_otlp_json(json.loads(line)) * 2)
    assert len(found.wire["toolCalls"]) == 1 and found.wire["usage"]["inputTokens"] == 30
