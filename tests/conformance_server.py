"""A scripted OpenAI-compatible model on a real socket, for the framework conformance matrix.

It speaks what the frameworks send: chat completions (plain and streamed, with usage)
and the Responses API. Its model is a hotel desk that decides from the conversation
alone, whatever framework wrote it: what the newest user message asks, which tools
are offered, and what was called since that message. Call ids are new on every
response, as a real provider's are.

- "cancel BK-n": ``cancel_booking``; when the tool is not offered but a handoff is
  (an Agents SDK ``transfer_to_*`` tool, LlamaIndex's ``handoff``), it hands off first;
- a message naming bookings ("BK-1 and BK-2"): one ``get_booking`` each, in one response;
- otherwise it asks for the booking reference;
- once the asked-for calls have results, it answers with them ("Done: ..."), through
  ``final_answer`` when that tool is offered (smolagents).
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

BOOKING = re.compile(r"BK-\d+")
_ids = itertools.count(1)


@dataclass
class Talk:
    """A request's conversation, the same for chat completions and Responses items."""

    user: str = ""  # the newest user message
    called: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # since it: (tool, arguments)
    results: list[str] = field(default_factory=list)  # since it: each tool result
    tools: list[str] = field(default_factory=list)

    def said(self, text: str) -> None:
        self.user, self.called, self.results = text, [], []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return ""


def chat_talk(body: dict[str, Any]) -> Talk:
    talk = Talk(tools=[t.get("function", {}).get("name", "") for t in body.get("tools") or []])
    for message in body.get("messages") or []:
        role, text = message.get("role"), _text(message.get("content"))
        if role == "user":
            _user(talk, text)
        elif role == "assistant":
            for call in message.get("tool_calls") or _smolagents_calls(text):
                arguments = call["function"]["arguments"]
                talk.called.append((call["function"]["name"],
                                    arguments if isinstance(arguments, dict) else json.loads(arguments or "{}")))
        elif role == "tool":
            talk.results.append(text)
    return talk


# smolagents writes its history as text (a model reads it as such): "Calling tools:\n[...]" for the
# calls, "Observation:\n..." for a result, "Error executing tool 'x' ..." for a failed one.
def _smolagents_calls(text: str) -> list[dict[str, Any]]:
    return ast.literal_eval(text[len("Calling tools:\n"):]) if text.startswith("Calling tools:\n[") else []


def _user(talk: Talk, text: str) -> None:
    if text.startswith("Observation:\n"):  # smolagents joins the next task to the last observation
        result, _, task = text.partition("\nNew task:\n")
        talk.results.append(result)
        if task:
            talk.said(task)
        return
    failed = text.find("Error executing tool '")
    if failed < 0:
        talk.said(text.removeprefix("New task:\n"))
        return
    if failed > len("Error:\n") and not text.startswith("Error"):
        talk.said(text[:failed].removeprefix("New task:\n").removesuffix("Error:\n"))
    name = text[failed:].split("'")[1]
    talk.called.append((name, {}))
    talk.results.append(text[failed:])


def responses_talk(body: dict[str, Any]) -> Talk:
    talk = Talk(tools=[t.get("name", "") for t in body.get("tools") or []])
    given = body.get("input")
    for item in [{"role": "user", "content": given}] if isinstance(given, str) else given or []:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "user":
            talk.said(_text(item.get("content")))
        elif kind == "function_call":
            talk.called.append((item["name"], json.loads(item.get("arguments") or "{}")))
        elif kind == "function_call_output":
            talk.results.append(_text(item.get("output")))
    return talk


def decide(talk: Talk) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The desk's next move: (answer text, []) or ("", the calls to make)."""
    bookings = BOOKING.findall(talk.user)
    wanted: list[tuple[str, dict[str, Any]]] = []
    if "cancel" in talk.user.lower() and bookings:
        wanted = [("cancel_booking", {"booking_id": bookings[0]})]
    elif bookings:
        wanted = [("get_booking", {"booking_id": b}) for b in dict.fromkeys(bookings)]
    done = {name for name, _ in talk.called}
    made = [json.dumps(call, sort_keys=True) for call in talk.called]
    if not wanted:
        return "Happy to help with your stay. What is your booking reference?", []
    # WHY a failed call counts as made: its report names the tool alone (smolagents)
    left = [w for w in wanted if json.dumps(list(w), sort_keys=True) not in made and (w[0], {}) not in talk.called]
    if not left:
        return "Done: " + "; ".join(talk.results[-len(wanted):]), []
    if wanted[0][0] not in talk.tools:
        handoff = _handoff(talk)
        if handoff is not None and handoff[0] not in done:
            return "", [handoff]
        return "I cannot do that here.", []
    return "", left


def _handoff(talk: Talk) -> tuple[str, dict[str, Any]] | None:
    for name in talk.tools:
        if name.startswith("transfer_to_"):
            return name, {}
        if name == "handoff":
            return name, {"to_agent": "CancellationsAgent", "reason": "the guest wants to cancel"}
    return None


def _final(text: str, calls: list[tuple[str, dict[str, Any]]], talk: Talk) -> list[tuple[str, dict[str, Any]]]:
    """smolagents answers only through its final_answer tool."""
    return [("final_answer", {"answer": text})] if text and "final_answer" in talk.tools else calls


# -- chat completions ---------------------------------------------------------------

def _chat_message(text: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    if not calls:
        return {"role": "assistant", "content": text}
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{next(_ids)}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for n, a in calls]}


USAGE = {"prompt_tokens": 40, "completion_tokens": 8, "total_tokens": 48}


async def chat(request: Request) -> Response:
    body = await request.json()
    talk = chat_talk(body)
    text, calls = decide(talk)
    message = _chat_message(text, _final(text, calls, talk))
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    head = {"id": f"chatcmpl-{next(_ids)}", "created": 0, "model": body.get("model") or "desk-1"}
    if not body.get("stream"):
        return JSONResponse({**head, "object": "chat.completion", "usage": USAGE,
                             "choices": [{"index": 0, "finish_reason": finish, "message": message}]})
    return StreamingResponse(_chunks(head, message, finish, body), media_type="text/event-stream")


async def _chunks(head: dict[str, Any], message: dict[str, Any], finish: str, body: dict[str, Any]) -> Any:
    chunk = {**head, "object": "chat.completion.chunk"}
    # WHY a chunk per call: that is how OpenAI streams parallel calls, and how clients parse them
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": message.get("content") or ""}]
    deltas += [{"tool_calls": [{**call, "index": i}]} for i, call in enumerate(message.get("tool_calls") or [])]
    for delta in deltas:
        yield f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': delta, 'finish_reason': None}]})}\n\n"
    yield f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': finish}]})}\n\n"
    if (body.get("stream_options") or {}).get("include_usage"):
        yield f"data: {json.dumps({**chunk, 'choices': [], 'usage': USAGE})}\n\n"
    yield "data: [DONE]\n\n"


# -- the Responses API ----------------------------------------------------------------

async def responses(request: Request) -> Response:
    body = await request.json()
    talk = responses_talk(body)
    text, calls = decide(talk)
    output: list[dict[str, Any]] = [
        {"type": "function_call", "id": f"fc_{next(_ids)}", "call_id": f"call_{next(_ids)}", "name": n,
         "arguments": json.dumps(a), "status": "completed"} for n, a in _final(text, calls, talk)]
    if not output:
        output = [{"type": "message", "id": f"msg_{next(_ids)}", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]}]
    return JSONResponse({
        "id": f"resp_{next(_ids)}", "object": "response", "created_at": 0, "status": "completed",
        "model": body.get("model") or "desk-1", "output": output, "parallel_tool_calls": True,
        "tool_choice": "auto", "tools": [], "text": {"format": {"type": "text"}},
        "usage": {"input_tokens": 40, "output_tokens": 8, "total_tokens": 48,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}})


async def models(request: Request) -> Response:
    return JSONResponse({"object": "list", "data": [{"id": "desk-1", "object": "model", "created": 0,
                                                     "owned_by": "tests"}]})


def desk_app() -> Starlette:
    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                             Route("/v1/responses", responses, methods=["POST"]),
                             Route("/v1/models", models, methods=["GET"])])
