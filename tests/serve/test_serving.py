"""Both servers against hostile clients: foreign Host names and origins (DNS
rebinding), idle and slow connections, a flood of sockets. Real uvicorn, real sockets."""

from __future__ import annotations

import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from fastapi import FastAPI

from support import serving
from tracegrade.serve.hardening import HostGuard, Limits, allowed_hosts_for, host_name

FAST = Limits(header_timeout_s=0.5, body_timeout_s=0.8, keep_alive_s=0.3, max_connections=40)


def small_app() -> FastAPI:
    app = FastAPI()

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok"}

    @app.post("/echo")
    async def echo(body: dict) -> dict:
        return body

    app.add_middleware(HostGuard, allowed=allowed_hosts_for("127.0.0.1"))
    return app


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def connect(url: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port_of(url)), timeout=5)


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    sock.settimeout(within_s)
    try:
        return sock.recv(1024) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


# --- issue 15.4: the Host header ------------------------------------------------------


@pytest.mark.parametrize("header, name", [
    ("127.0.0.1:8000", "127.0.0.1"), ("[::1]:8000", "::1"), ("LocalHost.", "localhost"), ("::1", "::1"),
    ("attacker.example:80", "attacker.example"),
])
def test_host_names_are_parsed(header, name):
    assert host_name(header) == name


def test_a_foreign_host_or_origin_is_refused():
    with serving(small_app()) as url:
        port = port_of(url)
        rebinding = httpx.get(f"{url}/health", headers={"Host": f"attacker.example:{port}"})
        cross_site = httpx.post(f"{url}/echo", json={"a": 1}, headers={"Origin": "http://attacker.example"})
        null_origin = httpx.post(f"{url}/echo", json={"a": 1}, headers={"Origin": "null"})
        local = [httpx.get(f"{url}/health", headers={"Host": f"{name}:{port}"}) for name in ("localhost", "[::1]")]
        same_origin = httpx.post(f"{url}/echo", json={"a": 1}, headers={"Origin": f"http://localhost:{port}"})
    assert rebinding.status_code == 400 and "'attacker.example" in rebinding.json()["problems"][0]
    assert (cross_site.status_code, null_origin.status_code) == (403, 403)
    assert [r.status_code for r in local] == [200, 200] and same_origin.json() == {"a": 1}


def test_the_bound_names_are_allowed_by_default_and_more_can_be_added():
    assert allowed_hosts_for("10.0.0.5") == ("localhost", "127.0.0.1", "::1", "10.0.0.5")
    assert "shop.example" in allowed_hosts_for("0.0.0.0", ["shop.example"])
    assert socket.gethostname().lower() in allowed_hosts_for("0.0.0.0")


# --- issue 15.6: idle, slow and many connections ---------------------------------------


def test_an_idle_connection_is_closed_after_the_header_timeout():
    with serving(small_app(), FAST) as url:
        idle = connect(url)
        assert closed_by_server(idle, within_s=5)


def test_a_header_sent_a_byte_at_a_time_is_cut_off():
    with serving(small_app(), FAST) as url:
        slow = connect(url)
        try:
            for byte in b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 200:
                slow.send(bytes([byte]))
                time.sleep(0.05)
            closed = closed_by_server(slow, within_s=5)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
        # The whole header takes 12 s to trickle in; the 0.5 s header deadline cuts it off first.
        assert closed


def test_a_slow_body_is_cut_off_after_the_body_timeout():
    with serving(small_app(), FAST) as url:
        slow = connect(url)
        slow.send(b"POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"a\": ")
        assert closed_by_server(slow, within_s=5)


def test_a_keep_alive_connection_idle_after_a_request_is_closed():
    with serving(small_app(), FAST) as url:
        sock = connect(url)
        sock.send(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        response = b""
        while b'{"status":"ok"}' not in response:  # headers and body may come in two segments
            response += sock.recv(4096)
        assert b"200 OK" in response
        sock.send(b"GET /hea")  # a second request that never finishes: the header deadline again
        assert closed_by_server(sock, within_s=5)


def response_to(url: str, request: bytes) -> bytes:
    """What the server answers to ``request`` sent in one write, up to its close."""
    with connect(url) as sock:
        sock.sendall(request)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    return answer


@pytest.mark.parametrize("request_bytes", [
    b"GET /health?q=" + b"a" * 120_000 + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 60_000 + b"\r\nConnection: close\r\n\r\n",
    b"GET /health HTTP/1.1\r\nHost: localhost\r\n" + b"X-Many: aaaaaaaaaa\r\n" * 2000 + b"Connection: close\r\n\r\n",
    b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Unfinished: " + b"a" * 60_000,  # h11's bound: a head still arriving
])
def test_a_request_head_over_the_limit_in_one_write_is_refused(request_bytes):
    with serving(small_app(), FAST) as url:
        refused = response_to(url, request_bytes)
        fine = response_to(url, b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Ok: " + b"a" * 8000
                           + b"\r\nConnection: close\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 431 "), refused[:200]
    assert b"over 16384 bytes" in refused
    assert fine.startswith(b"HTTP/1.1 200 ")


def test_a_flood_of_idle_connections_never_locks_out_a_real_request():
    """Three times the connection limit, all idle: the server keeps answering,
    by closing the oldest idle ones, and never holds more than its limit."""
    slow_timeouts = Limits(header_timeout_s=30, body_timeout_s=30, keep_alive_s=5, max_connections=40)
    with serving(small_app(), slow_timeouts) as url:
        flood = [connect(url) for _ in range(120)]
        time.sleep(0.3)
        answers = [httpx.get(f"{url}/health", timeout=5).status_code for _ in range(5)]
        # WHY polled up to a generous bound: a loaded machine closes the evicted sockets
        # later, not fewer of them; a server that never evicts keeps 120 open and fails.
        closed: set[int] = set()
        deadline = time.monotonic() + 30
        while len(flood) - len(closed) > 40 and time.monotonic() < deadline:
            closed |= {i for i, s in enumerate(flood) if i not in closed and closed_by_server(s, within_s=0.01)}
        still_open = len(flood) - len(closed)
        for s in flood:
            s.close()
    assert answers == [200] * 5
    assert still_open <= 40


@pytest.mark.parametrize("command, env_var", [("monitor", "TRACEGRADE_MONITOR_TOKEN"), ("view", "TRACEGRADE_VIEW_TOKEN"),
                                              ("serve-model", "TRACEGRADE_MODEL_TOKEN")])
def test_serving_beyond_loopback_without_a_token_is_refused_before_anything_starts(command, env_var, monkeypatch,
                                                                                  capsys):
    from tracegrade.cli import main

    monkeypatch.delenv(env_var, raising=False)
    assert main([command, "--host", "0.0.0.0", "--port", "1"]) == 2
    assert f"--host 0.0.0.0 serves beyond this machine: set {env_var} first" in capsys.readouterr().err


# --- issue 34: the URL printed for --host 0.0.0.0 answers ----------------------------


def stderr_lines(process: subprocess.Popen) -> queue.Queue:
    """The lines the process writes to stderr, as they come (read on a thread: a line
    that never comes must fail the test, not hang it)."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stderr], daemon=True).start()
    return lines


def next_line(lines: queue.Queue, containing: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        if containing in line:
            return line
    raise AssertionError(f"no line with {containing!r} printed")


@pytest.mark.parametrize("command, env_var, path, marker", [
    ("view", "TRACEGRADE_VIEW_TOKEN", "/login", "tracegrade view: http"),
    ("serve-model", "TRACEGRADE_MODEL_TOKEN", "/v1/models", " at http"),
])
def test_the_url_printed_for_every_address_is_answered_and_other_names_are_explained(command, env_var, path, marker,
                                                                                    tmp_path):
    port = free_port()
    env = {**os.environ, env_var: "t0ken-for-the-test", "OPENAI_API_KEY": "unused"}
    extra = ["--model", "openai:gpt-4o-mini"] if command == "serve-model" else ["--db", f"sqlite:///{tmp_path}/r.db"]
    server = subprocess.Popen([sys.executable, "-m", "tracegrade.cli", command, "--host", "0.0.0.0", "--port", str(port),
                               *extra], cwd=tmp_path, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        lines = stderr_lines(server)
        url = re.search(r"http://\S+?(?=[/ ]|$)", next_line(lines, marker)).group(0)
        host = url.removeprefix("http://")
        assert not host.startswith("0.0.0.0")
        for _ in range(100):
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}{path}", headers={"Host": host,
                                   "Authorization": "Bearer t0ken-for-the-test"})
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert answer.status_code == 200, answer.text  # not 400 "host ... is not served here"
        hint = next_line(lines, "--allowed-hosts")
        assert "_ALLOWED_HOSTS" in hint
    finally:
        server.terminate()
        server.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
