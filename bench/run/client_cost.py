"""CPU per request of the HTTP clients an OpenAI-compatible provider could use.

    python bench/run/client_cost.py [--requests 3000] [--concurrency 32] [--latency-ms 0]

Starts the mock (0 ms latency by default) and sends the same agent request, 32
at a time, through: tracegrade's lean ``OpenAIHTTPModel`` (the ``openai:``
default), its ``OpenAIModel`` (``openai-sdk:``, the openai SDK over its httpx
client), a bare ``httpx.AsyncClient`` POST, and, if the packages are installed,
the SDK over its aiohttp transport and a bare ``aiohttp`` POST; last, a floor
that is not a client: a bare asyncio protocol on pooled connections (no TLS, no
redirects, Content-Length bodies only). It prints the client process's CPU
milliseconds per request: at 2.8 requests per case, this is most of what a
`tracegrade run` over HTTP costs per case.

``--latency-ms 200`` is the regime of ``bench/run/throughput.py``: every response
then wakes the client on its own, and a request costs about twice what it does
at 0 ms, where the answers arrive in batches.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import urllib.parse
from typing import Awaitable, Callable

from throughput import MockServer

from tracegrade.models import ChatOptions, Message
from tracegrade.models.openai_compat import OpenAIModel
from tracegrade.models.openai_http import OpenAIHTTPModel


def agent_request() -> tuple[list[Message], ChatOptions, dict]:
    from shopnest.tools import TOOL_SPECS

    from tracegrade.models.openai_http import wire_message

    messages = [Message("system", "You are the support assistant. " * 50), Message("user", "Where is my order ORD-101?")]
    options = ChatOptions(tools=TOOL_SPECS, max_tokens=200)
    body = {"model": "mock", "messages": [wire_message(m) for m in messages], "max_tokens": 200, "temperature": 0.0,
            "tools": [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                        "parameters": t.parameters}} for t in TOOL_SPECS]}
    return messages, options, body


async def cpu_ms_per_request(send: Callable[[], Awaitable[object]], requests: int, concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await send()

    await one()  # connect and warm up outside the timing
    started = time.process_time()
    await asyncio.gather(*(one() for _ in range(requests)))
    return (time.process_time() - started) * 1000 / requests


async def measure(base_url: str, requests: int, concurrency: int) -> dict[str, float]:
    import httpx

    messages, options, body = agent_request()
    rows: dict[str, float] = {}
    lean = OpenAIHTTPModel("mock", base_url, "not-needed")
    rows["tracegrade OpenAIHTTPModel (lean client, the openai: default)"] = await cpu_ms_per_request(
        lambda: lean.complete(messages, options), requests, concurrency)
    model = OpenAIModel("mock", base_url, "not-needed")
    rows["tracegrade OpenAIModel (openai SDK, httpx)"] = await cpu_ms_per_request(
        lambda: model.complete(messages, options), requests, concurrency)
    async with httpx.AsyncClient(base_url=base_url) as client:
        async def bare_httpx() -> object:
            return (await client.post("/chat/completions", json=body)).json()

        rows["bare httpx POST"] = await cpu_ms_per_request(bare_httpx, requests, concurrency)
    try:
        import aiohttp
        import openai
    except ImportError:
        return rows
    sdk_aiohttp = OpenAIModel("mock", base_url, "not-needed", http_client=openai.DefaultAioHttpClient())
    rows["openai SDK over its aiohttp transport"] = await cpu_ms_per_request(
        lambda: sdk_aiohttp.complete(messages, options), requests, concurrency)
    async with aiohttp.ClientSession() as session:
        async def bare_aiohttp() -> object:
            async with session.post(base_url + "/chat/completions", json=body) as response:
                return await response.json()

        rows["bare aiohttp POST"] = await cpu_ms_per_request(bare_aiohttp, requests, concurrency)
    rows["floor: bare asyncio protocol (not a client)"] = await cpu_ms_per_request(
        _protocol_floor(base_url, body), requests, concurrency)
    return rows


class _OneResponse(asyncio.Protocol):
    """Reads one Content-Length response at a time into ``waiter``."""

    def __init__(self) -> None:
        self.buffer = b""
        self.waiter: asyncio.Future[bytes] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        head_end = self.buffer.find(b"\r\n\r\n")
        if head_end < 0 or self.waiter is None:
            return
        length = int(self.buffer[:head_end].lower().split(b"content-length:")[1].split(b"\r\n")[0])
        if len(self.buffer) >= head_end + 4 + length:
            body, self.buffer = self.buffer[head_end + 4:head_end + 4 + length], self.buffer[head_end + 4 + length:]
            self.waiter.set_result(body)


def _protocol_floor(base_url: str, body: dict) -> Callable[[], Awaitable[object]]:
    """WHY measured: what any client must spend (encode, one write, one parse, decode),
    so the gap to the aiohttp rows is what a lighter transport could still save."""
    url = urllib.parse.urlsplit(base_url)
    idle: list[_OneResponse] = []

    async def post() -> object:
        loop = asyncio.get_running_loop()
        data = json.dumps(body).encode()
        protocol = idle.pop() if idle else (await loop.create_connection(_OneResponse, url.hostname, url.port))[1]
        protocol.waiter = loop.create_future()
        head = (f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
        protocol.transport.write(head.encode() + data)  # type: ignore[attr-defined]
        answer = json.loads(await protocol.waiter)
        idle.append(protocol)
        return answer

    return post


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="the mock's latency (200: the regime of throughput.py)")
    args = parser.parse_args(argv)
    with MockServer(args.latency_ms) as mock:
        rows = asyncio.run(measure(mock.base_url, args.requests, args.concurrency))
    for name, ms in rows.items():
        print(f"{ms:6.2f} ms CPU per request  {name}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
