"""Helpers shared by the eval-run tests: fakes are plain functions, servers are real.

The targets here are importable as ``support:NAME``, the ``module:function`` form
``tracegrade run --target`` takes (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import uvicorn
from fastapi import FastAPI, Request

from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset
from judge_rubrics import SEED_METRICS as METRICS
from tracegrade.models import ChatOptions, ChatResponse, Message, ModelToolCall
from tracegrade.core.trace import Reply, Step, ToolCall, Usage

GOLDEN_PATH = Path(__file__).resolve().parents[1] / "evals" / "golden-dataset.json"
GOLDEN = load_dataset(GOLDEN_PATH)
BY_QUESTION = {case.question: case for case in GOLDEN.cases}
ORDER_ID = re.compile(r"ord-\s*\d+", re.IGNORECASE)


# --- agents -------------------------------------------------------------------------


def golden_reply(case: GoldenCase) -> Reply:
    """The Reply a golden case expects: its tool and argument, its source, its golden answer."""
    calls = ()
    if case.expected_tool:
        status = "needs_approval" if case.requires_approval else "ok"
        calls = (ToolCall(name=case.expected_tool, arguments={"orderId": case.expected_tool_argument},
                          argument=case.expected_tool_argument, result=f"(result) {case.golden_answer}",
                          status=status),)
    sources = (case.expected_source,) if case.expected_source else ()
    steps = [Step(kind="retrieval", name="policies"), Step(kind="model", name="round 1")]
    if calls:
        steps += [Step(kind="tool", name=calls[0].name), Step(kind="model", name="round 2")]
    return Reply(
        answer=case.golden_answer, retrieved_sources=sources, tool_calls=calls,
        context="".join(f"SOURCE: {s}\n(policy text) {case.golden_answer}" for s in sources), steps=tuple(steps),
        model="golden-agent", usage=Usage(input_tokens=100 * len(steps), output_tokens=20),
    )


async def golden_reply_async(case: GoldenCase) -> Reply:
    return golden_reply(case)


def one_wrong_argument(case: GoldenCase) -> Reply:
    """The golden reply, except that tool-status-01 looks up somebody else's order."""
    reply = golden_reply(case)
    if case.id != "tool-status-01":
        return reply
    wrong = reply.tool_calls[0].model_copy(update={"arguments": {"orderId": "ORD-102"}, "argument": "ORD-102"})
    return reply.model_copy(update={"tool_calls": (wrong,)})


def agent_that_breaks(case: GoldenCase) -> Reply:
    """The golden reply, except that the agent crashes on tool-unknown-01."""
    if case.id == "tool-unknown-01":
        raise RuntimeError("order service unreachable")
    return golden_reply(case)


def golden_wire(case: GoldenCase) -> dict[str, Any]:
    """The golden reply as the trace JSON a foreign agent would return."""
    return golden_reply(case).to_wire()


# --- judges -------------------------------------------------------------------------


def case_of(messages: Sequence[Message]) -> GoldenCase:
    """The golden case a judge prompt is about, found by its question."""
    evidence = messages[-1].content
    question = evidence.split("QUESTION:\n", 1)[1].split("\n\n", 1)[0]
    return BY_QUESTION[question]


def best_answers(options: ChatOptions) -> dict[str, Any]:
    """The best answer to every field the judge's reply schema asks for: 5 for a 1..5
    scale, "yes" for a yes/no question (whatever metrics the rubric defines)."""
    properties = (options.json_schema or {}).get("properties", {m: {"type": "integer"} for m in METRICS})
    return {name: 5 if spec.get("type") == "integer" else "yes"
            for name, spec in properties.items() if name != "reason"}


def full_marks(messages: Sequence[Message], options: ChatOptions) -> str:
    return json.dumps({**best_answers(options), "reason": "Matches the golden answer."})


def scores_by_case(table: dict[str, Any]) -> Callable[[Sequence[Message], ChatOptions], str]:
    """A judge that answers from ``table[case id]`` (a dict of answers or a raw text), else full marks."""

    def judge(messages: Sequence[Message], options: ChatOptions) -> str:
        entry = table.get(case_of(messages).id)
        if entry is None:
            return full_marks(messages, options)
        return entry if isinstance(entry, str) else json.dumps({**best_answers(options), **entry})

    return judge


def openai_compatible(judge: Callable[[Sequence[Message], ChatOptions], str]) -> FastAPI:
    """An OpenAI-compatible ``/v1/chat/completions`` whose replies ``judge`` writes."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict[str, Any]:
        body = await request.json()
        messages = [Message(m["role"], m.get("content") or "") for m in body["messages"]]
        options = ChatOptions(json_schema=(body.get("response_format") or {}).get("json_schema", {}).get("schema"),
                              temperature=body.get("temperature", 0.0), seed=body.get("seed", 0))
        return {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": judge(messages, options)}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 30, "total_tokens": 80},
        }

    return app


# --- a ShopNest model that plays the golden cases ------------------------------------


def golden_shopnest_model(messages: Sequence[Message], options: ChatOptions) -> ChatResponse:
    """For the real ShopNest agent: call the case's expected tool with the order id as
    the question writes it (" ord-101 " too, so the agent's cleaning is exercised),
    then answer with the golden answer."""
    question = next(m.content for m in reversed(messages) if m.role == "user")
    case = BY_QUESTION[question]
    if case.expected_tool and not any(m.role == "tool" for m in messages):
        arguments = {"orderId": ORDER_ID.search(question).group()}
        if case.expected_tool == "createRefundDraft":
            arguments["reason"] = "customer asked"
        return ChatResponse(tool_calls=(ModelToolCall(case.expected_tool, arguments, id="call-1"),),
                            input_tokens=300, output_tokens=15, model="golden-model")
    return ChatResponse(text=case.golden_answer, input_tokens=350, output_tokens=25, model="golden-model")


# --- servers --------------------------------------------------------------------------


class _OtlpReceiver(BaseHTTPRequestHandler):
    """Keeps every POST body (an OTLP/HTTP protobuf export) and answers 200."""

    received: list[tuple[str, bytes]]

    def do_POST(self):  # noqa: N802 (the http.server name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.path, body))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def otlp_receiver() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """A tiny OTLP/HTTP collector on loopback: yields its endpoint and the (path, body) posts it got."""
    server = HTTPServer(("127.0.0.1", 0), _OtlpReceiver)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.received  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def otlp_spans(received: Sequence[tuple[str, bytes]]) -> list[tuple[str, Any]]:
    """(service.name, span) for every span in the bodies a receiver got, decoded with opentelemetry-proto."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    spans = []
    for _, body in received:
        for resource_spans in ExportTraceServiceRequest.FromString(body).resource_spans:
            service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}["service.name"]
            spans += [(service, span) for scope in resource_spans.scope_spans for span in scope.spans]
    return spans


@contextlib.contextmanager
def serving(app, limits=None) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port in a thread; yield its URL.
    With ``limits`` (tracegrade.serve.hardening.Limits), exactly as the servers run."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    if limits is None:
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
    else:
        from tracegrade.serve.hardening import uvicorn_config

        config = uvicorn_config(app, "127.0.0.1", port, limits)
        config.lifespan = "off"
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def wait_for_run(condition: Callable[[], Any], process: Any, timeout_s: float = 120.0) -> Any:
    """``condition()``'s first truthy value while the run ``process`` (a Popen) goes on;
    AssertionError when the run ends first or ``timeout_s`` passes (the run is killed)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the run ended (exit {process.returncode}) before the condition held")
        if value := condition():
            return value
        time.sleep(0.02)
    process.kill()
    raise AssertionError("timed out waiting for the run")
