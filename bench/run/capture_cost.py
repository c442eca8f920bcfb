"""What it costs to put a trace together, against its size: the growth shows whether it is linear.

    python bench/run/capture_cost.py --part spans [--sizes 1000,2000,4000,8000,16000]

``--part spans``: an OTLP JSON file of one trace written and read back the way
``tracegrade grade`` reads it (``load_recorded``: parse, check every field, one Reply
per trace), in four shapes:

- ``genai pairs``: an agent span, N chat spans each asking for one call
  (``gen_ai.output.messages`` with a ``tool_call`` part, the previous result sent
  back as a ``tool_call_response``) and N ``execute_tool`` spans answering them by id;
- ``openinference pairs``: the same as OpenInference writes it (flattened
  ``llm.output_messages`` / ``llm.input_messages`` on LLM spans, TOOL spans with ids);
- ``chain``: N spans, each the parent of the next;
- ``cycle``: N spans whose parent ids go round in a circle (a broken file).

Each row prints the spans, the seconds and the microseconds per span: linear cost
keeps the last column flat as N doubles.

    python bench/run/capture_cost.py --part rounds [--sizes 50,100,200]
    python bench/run/capture_cost.py --part chunks [--sizes 1,5,10,20]
    python bench/run/capture_cost.py --part overhead [--sizes 64]

``--part rounds``: one case of an openai-SDK tool loop that sends its whole history
every round, N rounds, with ``--capture openai`` (recorded and put together into a
Reply) and without; ``--part chunks``: one streamed reply whose tool arguments are
N MB sent in 1 KB chunks, captured and not. Each row prints both times and the
microseconds per round or per KB that capture adds: flat as N doubles when linear.
``--part overhead``: N cases at concurrency 8 whose model answers in 200 ms, two
calls a case, with and without capture: the wall time of each and the share
capture adds (median of three runs each).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from tracegrade.agent.recorded import load_recorded

TRACE = "5b8efff798038103d269b633813fc60c"


def _kv(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}


def _span(span_id: str, parent: str, start: int, attributes: dict[str, Any], name: str = "span") -> dict[str, Any]:
    return {"traceId": TRACE, "spanId": span_id, "parentSpanId": parent, "name": name,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1),
            "attributes": [_kv(k, v) for k, v in attributes.items()]}


def genai_pairs(n: int) -> list[dict[str, Any]]:
    spans = [_span("root", "", 0, {"gen_ai.operation.name": "invoke_agent", "input.value": "q"}, "invoke_agent")]
    for i in range(n):
        given = [{"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{i - 1}", "response": "ok"}]}]
        asked = [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{i}", "name": "look_up",
                                                  "arguments": {"n": i}}]}]
        spans.append(_span(f"m{i}", "root", 10 * i + 1, {
            "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 9,
            "gen_ai.input.messages": json.dumps(given), "gen_ai.output.messages": json.dumps(asked)}, "chat"))
        spans.append(_span(f"t{i}", "root", 10 * i + 5, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "look_up", "gen_ai.tool.call.id": f"c{i}",
            "gen_ai.tool.call.result": "ok"}, "execute_tool look_up"))
    return spans


def openinference_pairs(n: int) -> list[dict[str, Any]]:
    spans = [_span("root", "", 0, {"openinference.span.kind": "AGENT", "input.value": "q"}, "agent")]
    for i in range(n):
        call = "llm.output_messages.0.message.tool_calls.0.tool_call."
        spans.append(_span(f"m{i}", "root", 10 * i + 1, {
            "openinference.span.kind": "LLM", "llm.token_count.prompt": 9,
            "llm.input_messages.0.message.role": "tool", "llm.input_messages.0.message.tool_call_id": f"c{i - 1}",
            "llm.input_messages.0.message.content": "ok", "llm.output_messages.0.message.role": "assistant",
            call + "id": f"c{i}", call + "function.name": "look_up", call + "function.arguments": json.dumps({"n": i})},
            "ChatCompletion"))
        spans.append(_span(f"t{i}", "root", 10 * i + 5, {
            "openinference.span.kind": "TOOL", "tool.name": "look_up", "tool_call.id": f"c{i}",
            "input.value": json.dumps({"n": i}), "output.value": "ok"}, "look_up"))
    return spans


def chain(n: int) -> list[dict[str, Any]]:
    return [_span(f"s{i}", f"s{i - 1}" if i else "", i, {"input.value": "q"} if i == 0 else {}) for i in range(n)]


def cycle(n: int) -> list[dict[str, Any]]:
    return [_span(f"s{i}", f"s{(i - 1) % n}", i, {}) for i in range(n)]


SHAPES: dict[str, Callable[[int], list[dict[str, Any]]]] = {
    "genai pairs": genai_pairs, "openinference pairs": openinference_pairs, "chain": chain, "cycle": cycle}


def read_seconds(spans: list[dict[str, Any]], folder: Path) -> float:
    """Seconds to read one OTLP JSON file of ``spans`` as grade does (the file written first, untimed)."""
    path = folder / "trace.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    started = time.perf_counter()
    [found] = load_recorded([path])
    elapsed = time.perf_counter() - started
    assert found.reply.answer is not None
    return elapsed


def spans_part(sizes: list[int]) -> None:
    print(f"{'shape':<20} {'N':>7} {'spans':>7} {'seconds':>8} {'us/span':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for name, build in SHAPES.items():
            for n in sizes:
                spans = build(n)
                seconds = read_seconds(spans, Path(folder))
                print(f"{name:<20} {n:>7,} {len(spans):>7,} {seconds:>8.2f} {1e6 * seconds / len(spans):>8.1f}",
                      flush=True)


def _chat(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "bench-1",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}


def _asking(rounds: int) -> Any:
    """A model that asks one tool call a round until ``rounds`` results came back, then answers."""
    import httpx

    def handle(request: Any) -> Any:
        given = sum(1 for m in json.loads(request.content)["messages"] if m["role"] == "tool")
        if given >= rounds:
            return httpx.Response(200, json=_chat({"role": "assistant", "content": "done"}))
        call = {"id": f"c{given}", "type": "function", "function": {"name": "look_up", "arguments": '{"n": 1}'}}
        return httpx.Response(200, json=_chat({"role": "assistant", "content": None, "tool_calls": [call]}))
    return handle


def _tool_loop(client: Any) -> Callable[[str], str]:
    def answer(question: str) -> str:
        messages: list[Any] = [{"role": "user", "content": question}]
        while True:
            said = client.chat.completions.create(model="bench-1", messages=messages).choices[0].message
            if not said.tool_calls:
                return str(said.content)
            messages.append(said.model_dump(exclude_none=True))
            messages += [{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in said.tool_calls]
    return answer


def _streaming(megabytes: int) -> Any:
    """A model that streams one tool call whose arguments are ``megabytes`` MB, 1 KB a chunk."""
    import httpx

    def handle(request: Any) -> Any:
        piece = json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "bench-1",
                            "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
                                "arguments": "a" * 1024}}]}}]})
        first = json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "bench-1",
                            "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c0", "type": "function",
                                                                              "function": {"name": "store", "arguments": ""}}]}}]})
        body = "".join(f"data: {line}\n\n" for line in [first, *[piece] * (megabytes * 1024)]) + "data: [DONE]\n\n"
        return httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"})
    return handle


def _streamed_agent(client: Any) -> Callable[[str], str]:
    def answer(question: str) -> str:
        size = 0
        for chunk in client.chat.completions.create(model="bench-1", stream=True,
                                                    messages=[{"role": "user", "content": question}]):
            for choice in chunk.choices:
                size += sum(len(c.function.arguments or "") for c in choice.delta.tool_calls or [])
        return f"streamed {size} characters"
    return answer


def _one_case_seconds(agent: Callable[[str], str], capture: tuple[str, ...]) -> float:
    import asyncio

    from tracegrade.agent.capture.target import captured_target
    from tracegrade.case.schema import GoldenCase

    case = GoldenCase(id="bench", question="look it up")
    target = captured_target(agent, capture)
    started = time.perf_counter()
    asyncio.run(target(case))
    return time.perf_counter() - started


def _client(handler: Any) -> Any:
    import httpx
    import openai

    return openai.OpenAI(api_key="sk-bench", base_url="http://bench.test/v1",
                         http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def _sdk_part(sizes: list[int], unit: str, agent_of: Callable[[int], Callable[[str], str]]) -> None:
    print(f"{unit:>8} {'without s':>10} {'captured s':>10} {'added us/' + unit:>16}")
    for n in sizes:
        agent = agent_of(n)
        plain, captured = _one_case_seconds(agent, ()), _one_case_seconds(agent, ("openai",))
        per = 1e6 * (captured - plain) / (n * (1024 if unit == "MB" else 1))
        print(f"{n:>8,} {plain:>10.2f} {captured:>10.2f} {per:>16.1f}", flush=True)


def rounds_part(sizes: list[int]) -> None:
    """The agent end to end, captured and not, then capture's own work alone (no SDK, no HTTP):
    what the hook does per call (the request copied as sent: as long as the history, like the
    SDK's own encoding of it) and putting the N rounds together into the Reply."""
    _sdk_part(sizes, "rounds", lambda n: _tool_loop(_client(_asking(n))))
    from tracegrade.agent.capture.assemble import reply_of
    from tracegrade.agent.capture.recorder import Recorder, snapshot

    print(f"{'rounds':>8} {'messages sent':>14} {'record s':>9} {'us/message':>11} {'assemble s':>11} {'us/round':>9}")
    for n in sizes:
        recorder, messages, sent = Recorder(), [{"role": "user", "content": "look it up"}], 0
        record_s = 0.0
        for i in range(n + 1):
            said = ({"role": "assistant", "content": "done"} if i == n else {"role": "assistant", "content": None,
                    "tool_calls": [{"id": f"c{i}", "type": "function",
                                    "function": {"name": "look_up", "arguments": '{"n": 1}'}}]})
            started = time.perf_counter()
            recorder.finished("openai-chat", snapshot({"model": "bench-1", "messages": messages}),
                              _chat(said), started)
            record_s += time.perf_counter() - started
            sent += len(messages)
            messages = [*messages, said, {"role": "tool", "tool_call_id": f"c{i}", "content": "ok"}]
        started = time.perf_counter()
        reply = reply_of(recorder)
        assemble_s = time.perf_counter() - started
        assert reply is not None and len(reply.tool_calls) == n
        print(f"{n:>8,} {sent:>14,} {record_s:>9.3f} {1e6 * record_s / sent:>11.2f} {assemble_s:>11.3f} "
              f"{1e6 * assemble_s / n:>9.1f}", flush=True)


def chunks_part(sizes: list[int]) -> None:
    print("added us/MB is per KB chunk")
    _sdk_part(sizes, "MB", lambda n: _streamed_agent(_client(_streaming(n))))


def overhead_part(sizes: list[int]) -> None:
    """Cases whose model answers in 200 ms, captured and not: what capture adds to their wall time."""
    import asyncio
    import statistics

    import httpx
    import openai

    import tracegrade
    from tracegrade.case.schema import GoldenCase

    async def slow(request: Any) -> Any:
        await asyncio.sleep(0.2)
        return _asking(1)(request)

    def agent_for() -> Any:
        client = openai.AsyncOpenAI(api_key="sk-bench", base_url="http://bench.test/v1",
                                    http_client=httpx.AsyncClient(transport=httpx.MockTransport(slow)))

        async def answer(question: str) -> str:
            messages: list[Any] = [{"role": "user", "content": question}]
            while True:
                said = (await client.chat.completions.create(model="bench-1", messages=messages)).choices[0].message
                if not said.tool_calls:
                    return str(said.content)
                messages.append(said.model_dump(exclude_none=True))
                messages += [{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in said.tool_calls]
        return answer

    print(f"{'cases':>6} {'without s':>10} {'captured s':>10} {'added':>7}")
    for n in sizes:
        cases = [GoldenCase(id=f"c{i}", question=f"look up {i}") for i in range(n)]
        with tempfile.TemporaryDirectory() as folder:
            def wall(capture: tuple[str, ...]) -> float:
                started = time.perf_counter()
                tracegrade.evaluate(cases, agent_for(), judge=None, capture=capture, store=f"sqlite:///{folder}/r.db",
                                    settings=tracegrade.RunSettings(concurrency=8))
                return time.perf_counter() - started
            plain = statistics.median(wall(()) for _ in range(3))
            captured = statistics.median(wall(("openai",)) for _ in range(3))
        print(f"{n:>6} {plain:>10.2f} {captured:>10.2f} {100 * (captured / plain - 1):>6.1f}%", flush=True)


DEFAULT_SIZES = {"spans": "1000,2000,4000,8000,16000", "rounds": "50,100,200", "chunks": "1,5,10,20",
                 "overhead": "64"}
PARTS = {"spans": spans_part, "rounds": rounds_part, "chunks": chunks_part, "overhead": overhead_part}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=sorted(PARTS), default="spans", help="what to measure (default spans)")
    parser.add_argument("--sizes", help="N, comma-separated (default: spans 1000..16000, rounds 50,100,200, "
                                         "chunks 1,5,10,20 MB, overhead 64 cases)")
    args = parser.parse_args()
    PARTS[args.part]([int(n) for n in (args.sizes or DEFAULT_SIZES[args.part]).split(",")])


if __name__ == "__main__":
    main()
