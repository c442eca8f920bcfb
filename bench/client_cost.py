"""CPU per request of the HTTP clients an OpenAI-compatible provider could use.

    python bench/client_cost.py [--requests 3000] [--concurrency 32]

Starts the mock (0 ms latency) and sends the same agent request, 32 at a time,
through: tracegrade's lean ``OpenAIHTTPModel`` (the ``openai:`` default), its
``OpenAIModel`` (``openai-sdk:``, the openai SDK over its httpx client),
a bare ``httpx.AsyncClient`` POST, and, if the packages are installed, the SDK
over its aiohttp transport and a bare ``aiohttp`` POST. It prints the client
process's CPU milliseconds per request: at 2.8 requests per case, this is most
of what a `tracegrade run` over HTTP costs per case.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
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
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args(argv)
    with MockServer(0) as mock:
        rows = asyncio.run(measure(mock.base_url, args.requests, args.concurrency))
    for name, ms in rows.items():
        print(f"{ms:6.2f} ms CPU per request  {name}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
