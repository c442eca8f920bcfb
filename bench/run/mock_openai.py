"""An OpenAI-compatible chat server on loopback with a fixed latency, for benchmarks.

    python bench/run/mock_openai.py --latency-ms 200 [--port 0]

It prints ``listening on http://127.0.0.1:PORT/v1`` once bound, then answers
``POST /v1/chat/completions`` after exactly the configured latency:

- an agent turn (the request offers ``tools``): a tool call for the order id in
  the question, then, once the request carries the tool's result, a final answer;
  a question without an order id is answered at once;
- a judge call (the request has a ``response_format``): valid JSON scores;
- any other request (a plain chat call, as a one-call agent makes): a short
  answer that quotes the question.

``GET /stats`` returns the requests counted so far, by kind, and the wall-clock
times of the first and the last.

WHY raw asyncio and no web framework: the server must never be the bottleneck
of what it measures. A request costs it one JSON parse and one write, and the
latency is a timer (``call_later``), not a sleeping task.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from typing import Any

ORDER_ID = re.compile(r"\bORD-?\s*\d+", re.IGNORECASE)


def scores(body: dict[str, Any]) -> str:
    """The best answer to every field of the judge's reply schema: 5 for a 1..5 scale,
    "yes" for a yes/no question (whatever metrics the rubric defines)."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    answers = {name: 5 if spec.get("type") == "integer" else "yes"
               for name, spec in schema.get("properties", {}).items() if name != "reason"}
    return json.dumps({**answers, "reason": "Supported by the evidence."})


def decide(question: str, tool_result: str | None) -> tuple[str, str | None, str | None]:
    """(answer text, tool, order id) for one agent round: a tool call for the
    order id in the question, then, given the tool's result, the final answer."""
    if tool_result is not None:
        return f"Here is what I found: {tool_result[:120]}", None, None
    found = ORDER_ID.search(question)
    if found is None:
        return "Our policy answers that: see the policy above.", None, None
    lowered = question.lower()
    tool = "getDeliveryDate" if "deliver" in lowered else "getRefundStatus" if "refund" in lowered else "getOrderStatus"
    return "", tool, found.group(0)


def plain_answer(body: dict[str, Any]) -> str:
    """The answer to a plain chat call: the last user message, quoted."""
    question = next((m.get("content", "") for m in reversed(body.get("messages") or [])
                     if isinstance(m, dict) and m.get("role") == "user"), "")
    return f"Here is what I found about: {str(question)[:120]}"


def agent_turn(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for one agent round of an OpenAI chat request."""
    messages = body.get("messages") or [{}]
    last = messages[-1]
    question = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    text, tool, order_id = decide(question, last.get("content", "") if last.get("role") == "tool" else None)
    if tool is None:
        return {"role": "assistant", "content": text}
    call = {"id": "call_1", "type": "function",
            "function": {"name": tool, "arguments": json.dumps({"orderId": order_id})}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def completion(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(kind, chat completion) for one request body."""
    if body.get("tools"):
        kind, message = "agent", agent_turn(body)
    elif body.get("response_format"):
        kind, message = "judge", {"role": "assistant", "content": scores(body)}
    else:
        kind, message = "chat", {"role": "assistant", "content": plain_answer(body)}
    prompt_tokens = sum(len(str(m.get("content") or "")) for m in body.get("messages", [])) // 4
    return kind, {
        "id": "chatcmpl-mock", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "mock"),
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 20, "total_tokens": prompt_tokens + 20},
    }


class Counter:
    def __init__(self) -> None:
        self.by_kind = {"agent": 0, "judge": 0, "chat": 0, "other": 0}
        self.first = self.last = 0.0  # wall-clock time of the first and the last chat request

    def count(self, kind: str) -> None:
        self.by_kind[kind] += 1
        self.last = time.time()
        self.first = self.first or self.last

    def as_json(self) -> dict[str, float]:
        return {"requests": sum(self.by_kind.values()), **self.by_kind, "first": self.first, "last": self.last}


class MockProtocol(asyncio.Protocol):
    """HTTP/1.1 with keep-alive; one request at a time per connection, as clients send them."""

    def __init__(self, latency_s: float, counter: Counter) -> None:
        self.latency_s = latency_s
        self.counter = counter
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].decode("latin-1")
            length = _content_length(head)
            end = head_end + 4 + length
            if len(self.buffer) < end:
                return
            body, self.buffer = self.buffer[head_end + 4 : end], self.buffer[end:]
            self.handle(head.split(" ", 2), body)

    def handle(self, request_line: list[str], body: bytes) -> None:
        method, path = request_line[0], request_line[1] if len(request_line) > 1 else "/"
        if method == "GET" and path == "/stats":
            self.send(200, self.counter.as_json())
        elif method == "POST" and path.endswith("/chat/completions"):
            try:
                kind, reply = completion(json.loads(body))
            except (ValueError, AttributeError) as exc:
                self.counter.by_kind["other"] += 1
                self.send(400, {"error": {"message": f"bad request: {exc}"}})
                return
            self.counter.count(kind)
            if self.latency_s > 0:
                asyncio.get_running_loop().call_later(self.latency_s, self.send, 200, reply)
            else:
                self.send(200, reply)
        else:
            self.counter.by_kind["other"] += 1
            self.send(404, {"error": {"message": f"no route {method} {path}"}})

    def send(self, status: int, payload: dict[str, Any]) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        data = json.dumps(payload).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
        self.transport.write(
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(data)}\r\n\r\n".encode() + data
        )


def _content_length(head: str) -> int:
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            return int(value.strip())
    return 0


async def serve(latency_ms: float, host: str = "127.0.0.1", port: int = 0) -> None:
    counter = Counter()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: MockProtocol(latency_ms / 1000, counter), host, port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    print(f"listening on http://{host}:{bound}/v1", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, default=0.0, help="fixed latency of every chat reply (default 0)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve(args.latency_ms, port=args.port))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
