"""What it costs to put a trace together, against its size: the growth shows whether it is linear.

    python bench/capture_cost.py --part spans [--sizes 1000,2000,4000,8000,16000]

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
keeps the last column flat as N doubles. Parts for other kinds of capture can be
added beside ``spans_part`` as functions of their own.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from tracegrade.capture.recorded import load_recorded

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


PARTS = {"spans": spans_part}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=sorted(PARTS), default="spans", help="what to measure (default spans)")
    parser.add_argument("--sizes", default="1000,2000,4000,8000,16000", help="N, comma-separated")
    args = parser.parse_args()
    PARTS[args.part]([int(n) for n in args.sizes.split(",")])


if __name__ == "__main__":
    main()
