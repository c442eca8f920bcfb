"""The one HTTP transport (``tracegrade.core.http``) against a real loopback server."""

import asyncio
import subprocess
import sys
import textwrap

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tracegrade.core.http import TooLarge, TransportFailed, post_json


async def serve(handler) -> TestServer:
    app = web.Application()
    app.router.add_post("/{tail:.*}", handler)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


async def test_the_json_body_and_headers_arrive_and_the_answer_comes_back():
    seen = {}

    async def echo(request: web.Request) -> web.Response:
        seen.update(body=await request.json(), auth=request.headers.get("Authorization"),
                    kind=request.headers.get("Content-Type"))
        return web.json_response({"got": seen["body"]["n"] + 1}, headers={"X-Thing": "1"})

    server = await serve(echo)
    try:
        response = await post_json(str(server.make_url("/chat")), {"n": 41}, {"Authorization": "Bearer t"}, 5)
    finally:
        await server.close()
    assert (response.status, response.json(), response.headers["x-thing"]) == (200, {"got": 42}, "1")
    assert seen == {"body": {"n": 41}, "auth": "Bearer t", "kind": "application/json"}


async def test_a_body_without_end_stops_at_the_limit():
    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        while True:  # never ends: only the client's limit stops it
            await response.write(b"x" * 65536)

    server = await serve(endless)
    try:
        with pytest.raises(TooLarge, match="larger than 1,000,000 bytes"):
            await post_json(str(server.make_url("/")), {}, {}, 10, max_bytes=1_000_000)
    finally:
        await server.close()


async def test_an_error_answer_keeps_only_its_first_bytes_and_is_not_too_large():
    async def big_error(request: web.Request) -> web.Response:
        return web.Response(status=500, body=b"e" * 200_000)

    server = await serve(big_error)
    try:
        response = await post_json(str(server.make_url("/")), {}, {}, 5, max_bytes=1000, error_bytes=300)
    finally:
        await server.close()
    assert (response.status, response.body) == (500, b"e" * 300)


async def test_no_answer_in_time_is_a_timed_out_transport_failure():
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.Response(text="late")

    server = await serve(slow)
    try:
        with pytest.raises(TransportFailed) as caught:
            await post_json(str(server.make_url("/")), {}, {}, 0.2)
    finally:
        await server.close()
    assert caught.value.timed_out and "0.2 s" in str(caught.value)


def test_a_process_that_used_it_exits_without_an_unclosed_session_warning(tmp_path):
    # WHY a child process: the session is closed when asyncio.run shuts its loop
    # down, and aiohttp's complaint about an unclosed one is printed at exit.
    script = textwrap.dedent("""
        import asyncio
        from aiohttp import web
        from aiohttp.test_utils import TestServer
        from tracegrade.core.http import post_json

        async def main():
            app = web.Application()
            app.router.add_post("/", lambda request: web.json_response({"ok": True}))
            server = TestServer(app, host="127.0.0.1")
            await server.start_server()
            print((await post_json(str(server.make_url("/")), {}, {}, 5)).json())
            await server.close()

        asyncio.run(main())
        import gc; gc.collect()
    """)
    done = subprocess.run([sys.executable, "-W", "always", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'ok': True}"
    assert "Unclosed" not in done.stderr, done.stderr
