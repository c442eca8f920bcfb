"""A fault-injecting OpenAI-compatible server on loopback, for reliability tests.

It answers both roles tracegrade sends it:

- an agent turn (a request with ``tools``): a ShopNest-style scripted model
  that looks up the first order id of the question with ``getOrderStatus``,
  then answers with the tool's result;
- a judge call (a request with ``response_format``): every field of the
  requested schema answered from the case by :func:`scores_for` (an integer
  3..5, or "yes"/"no"), so a test can recompute every expected score.

At configurable rates it drops the connection, answers 429 with Retry-After,
500 or 503, hangs past any client timeout, or returns a body that is not JSON.
A question can force one fault on every request that carries it:
``[[fault:http_503]]`` on agent turns, ``[[judge-fault:bad_scores]]`` on judge
calls; ``[[fault:http_503*2]]`` forces it on the first two only. Every request is logged with its role, case tag (``[case ID]`` in the
question) and fault, so a test can match what the server did against what the
results say.

    with FaultServer(FaultRates(http_503=0.1), seed=7) as server:
        os.environ["TRACEGRADE_AGENT_BASE_URL"] = server.base_url
        ...
    server.faults_by_case()  # Counter({"c001": 2, ...})

By hand: ``python -m tracegrade.testing.fault_server --rate http_503=0.1``.

WHY a raw asyncio server, not FastAPI: an ASGI app cannot drop a connection
without answering, nor send a half-written body; a transport can.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import threading
from collections import Counter
from dataclasses import dataclass, fields
from http import HTTPStatus
from typing import Any


# The faults drawn at random, by rate. Forced-only faults: bad_scores (a judge
# reply out of range) and echo_key (a 401 whose message echoes the API key, as
# some providers do).
RANDOM_FAULTS = ("drop", "rate_limit", "http_500", "http_503", "hang", "malformed")
FORCED_ONLY = ("bad_scores", "echo_key")
_STATUS = {"rate_limit": 429, "http_500": 500, "http_503": 503}
_CASE = re.compile(r"\[case ([^\]\s]+)\]")
_AGENT_FAULT = re.compile(r"\[\[fault:(\w+)(?:\*(\d+))?\]\]")
_JUDGE_FAULT = re.compile(r"\[\[judge-fault:(\w+)(?:\*(\d+))?\]\]")
_ORDER = re.compile(r"ORD-\d+", re.IGNORECASE)
# Cut inside a string: no JSON parser can read it.
_MALFORMED = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assis'


@dataclass(frozen=True)
class FaultRates:
    """Probability of each fault per request; the rest are answered normally."""

    drop: float = 0.0
    rate_limit: float = 0.0
    http_500: float = 0.0
    http_503: float = 0.0
    hang: float = 0.0
    malformed: float = 0.0

    def __post_init__(self) -> None:
        if any(r < 0 for r in self.as_dict().values()) or sum(self.as_dict().values()) > 1:
            raise ValueError(f"fault rates must be >= 0 and sum to at most 1: {self.as_dict()}")

    def as_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def draw(self, rng: random.Random) -> str:
        """A fault name, or "" for a normal answer."""
        roll = rng.random()
        for name, rate in self.as_dict().items():
            if roll < rate:
                return name
            roll -= rate
        return ""


@dataclass(frozen=True)
class Served:
    """One request as the server saw it."""

    role: str  # agent | judge | other
    case: str  # the [case ID] tag of the question, "" if none
    fault: str  # "" when answered normally


def scores_for(case: str, schema: dict[str, Any]) -> dict[str, int | str]:
    """What this server answers a judge call about a case, fixed by the case tag: per
    field of the reply ``schema`` (but the reason) an integer 3..5, or "yes" (2 in 3) or "no"."""
    digest = hashlib.sha256(case.encode()).digest()
    fields = [name for name in schema.get("properties", {}) if name != "reason"]
    return {name: (3 + digest[i] % 3) if schema["properties"][name].get("type") == "integer"
            else ("no" if digest[i] % 3 == 0 else "yes") for i, name in enumerate(fields)}


def reply_schema(payload: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema a request's ``response_format`` asks for ({} when none)."""
    return ((payload.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}


class FaultServer:
    """The server on a loopback port, in a thread of its own; a context manager."""

    def __init__(
        self, rates: FaultRates = FaultRates(), seed: int = 0, retry_after: str = "1",
        host: str = "127.0.0.1", port: int = 0, max_hang_s: float = 120.0, latency_s: float = 0.0,
    ) -> None:
        """``latency_s`` delays every answer, so that a run lasts long enough to be interrupted."""
        self.rates = rates
        self.latency_s = latency_s
        self.retry_after = retry_after
        self.host, self.port = host, port
        self.max_hang_s = max_hang_s
        self.log: list[Served] = []
        self._rng = random.Random(seed)
        self._forced: Counter[tuple[str, str, str]] = Counter()  # (role, case, marker) -> times forced so far
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def faults_by_case(self, role: str | None = None) -> Counter[str]:
        """How many faults each case tag received (of one role, or all)."""
        return Counter(s.case for s in self.log if s.fault and (role is None or s.role == role))

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> FaultServer:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="fault-server", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fault server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def _run(self, ready: threading.Event) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(asyncio.start_server(self._handle, self.host, self.port))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        loop.run_forever()
        server.close()
        # Hanging requests are still waiting: end them, then the loop.
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader)
            if request is not None:
                await self._respond(request, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away; nothing to answer
        finally:
            writer.close()

    async def _respond(self, request: tuple[str, dict[str, str], bytes], reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> None:
        path, headers, body = request
        if not path.endswith("/chat/completions"):
            writer.write(_http(404, {"error": {"message": f"no route {path}"}}))
            return
        try:
            payload = json.loads(body)
            messages = payload["messages"]
        except (ValueError, KeyError, TypeError):
            writer.write(_http(400, {"error": {"message": "body is not a chat completion request"}}))
            return
        role = "judge" if payload.get("response_format") else "agent" if payload.get("tools") else "other"
        text = _last_user_text(messages)
        case = m.group(1) if (m := _CASE.search(text)) else ""
        fault = self._forced_fault(role, case, text)
        fault = self.rates.draw(self._rng) if fault is None else fault
        self.log.append(Served(role, case, fault))
        if fault == "hang":
            # Until the client gives up and closes, which is the point.
            await asyncio.wait_for(reader.read(), self.max_hang_s)
        elif fault != "drop":
            await asyncio.sleep(self.latency_s)
            writer.write(self._answer(fault, role, case, messages, payload, headers))
            await writer.drain()

    def _forced_fault(self, role: str, case: str, text: str) -> str | None:
        """The fault the question forces on this request, "" once its count is used up, else None."""
        marker = (_JUDGE_FAULT if role == "judge" else _AGENT_FAULT).search(text)
        if marker is None:
            return None
        key = (role, case, marker.group(0))
        limit = int(marker.group(2)) if marker.group(2) else None
        if limit is not None and self._forced[key] >= limit:
            return ""
        self._forced[key] += 1
        return marker.group(1)

    def _answer(self, fault: str, role: str, case: str, messages: list[dict[str, Any]], payload: dict[str, Any],
                headers: dict[str, str]) -> bytes:
        if fault in _STATUS:
            extra = {"retry-after": self.retry_after} if fault == "rate_limit" else {}
            return _http(_STATUS[fault], {"error": {"message": f"injected {fault}"}}, extra)
        if fault == "malformed":
            return _http(200, _MALFORMED)
        if fault == "echo_key":
            key = headers.get("authorization", "").removeprefix("Bearer ")
            return _http(401, {"error": {"message": f"Incorrect API key provided: {key}.", "code": "invalid_api_key"}})
        if role == "judge":
            scores = scores_for(case or _last_user_text(messages), reply_schema(payload))
            if fault == "bad_scores":
                scores = {**scores, "correctness": 7}
            message = {"role": "assistant", "content": json.dumps({**scores, "reason": "scored by the fault server"})}
        else:
            message = _agent_turn(messages)
        return _http(200, _completion(payload.get("model", "fault"), message, len(json.dumps(messages))))


def _agent_turn(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Look the question's order up once, then answer with what the tool said."""
    question = _last_user_text(messages)
    results = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
    order = _ORDER.search(question)
    if order and not results:
        call = {"name": "getOrderStatus", "arguments": json.dumps({"orderId": order.group()})}
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": f"call-{len(messages)}", "type": "function", "function": call}]}
    answer = f"About {order.group()}: {results[-1]}" if order else "I can help with orders, returns, shipping and refunds."
    return {"role": "assistant", "content": answer}


def _completion(model: str, message: dict[str, Any], prompt_chars: int) -> dict[str, Any]:
    completion_tokens = len(json.dumps(message)) // 4 + 1
    return {
        "id": "chatcmpl-fault", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_chars // 4 + completion_tokens},
    }


def _last_user_text(messages: Any) -> str:
    users = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1] if users and isinstance(users[-1], str) else ""


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes] | None:
    head = await reader.readuntil(b"\r\n\r\n")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3:
        return None
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    return parts[1], headers, body


def _http(status: int, body: dict[str, Any] | bytes, extra: dict[str, str] | None = None) -> bytes:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "content-type: application/json",
             f"content-length: {len(content)}", "connection: close",
             *(f"{name}: {value}" for name, value in (extra or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + content


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracegrade.testing.fault_server",
                                     description="A fault-injecting OpenAI-compatible server on loopback.")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--rate", action="append", default=[], metavar="FAULT=P",
                        help=f"fault rate per request, repeatable; faults: {', '.join(RANDOM_FAULTS)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", default="1", help="Retry-After header of a 429 (default 1)")
    args = parser.parse_args(argv)
    rates = FaultRates(**{name: float(p) for name, _, p in (r.partition("=") for r in args.rate)})
    server = FaultServer(rates, args.seed, args.retry_after, port=args.port).start()
    print(f"fault server on {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
