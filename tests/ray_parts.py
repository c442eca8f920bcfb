"""What tests/run/test_executors.py's Ray workers import by name: scripted targets, judges and
recipes. WHY a module of its own: each Ray actor is a process that imports the module its
recipe and target live in; the test module imports the CLI, the store and pytest besides
(~0.4 s of CPU more an actor, and the file starts 17 of them)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from judge_rubrics import SCALE_RUBRIC
from tracegrade.core.trace import Reply, ToolCall, Usage
from tracegrade.case.schema import GoldenCase
from tracegrade.judge.scoring import Judge
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel


def scripted_target(case: GoldenCase) -> Reply:
    """Right on most cases; wrong argument on case-03, raises on case-05, no tool on case-07."""
    number = int(case.id.split("-")[1])
    if number == 5:
        raise RuntimeError("the agent crashed")
    argument = "ORD-999" if number == 3 else case.expected_tool_argument
    calls = () if number == 7 else (ToolCall(name="getOrderStatus", arguments={"orderId": argument},
                                             argument=argument, result="SHIPPED"),)
    return Reply(answer=f"Your order {argument} shipped.", tool_calls=calls, model="scripted-agent")


def scripted_judge_reply(messages, options) -> ChatResponse:
    """Valid scores from the case number in the evidence; garbage for case ORD-109."""
    evidence = messages[-1].content
    if "ORD-109?" in evidence:
        return ChatResponse(text="I refuse to give JSON.", input_tokens=50, output_tokens=5)
    score = 5 if "ORD-10" in evidence else 3
    values = {m: score for m in ("relevance", "correctness", "faithfulness", "helpfulness", "hallucinationFree")}
    return ChatResponse(text=json.dumps({**values, "reason": f"score {score}"}), input_tokens=50, output_tokens=20)


def scripted_parts():
    """The recipe each Ray worker calls: a fresh target and judge."""
    from tracegrade.agent.targets import callable_target

    judge = Judge(ScriptedModel(scripted_judge_reply, model_id="scripted-judge"), SCALE_RUBRIC, attempts=2)
    return callable_target(f"{__name__}:scripted_target"), judge


async def pid_target(case: GoldenCase) -> Reply:
    """Each job signs in with its process id in the case's folder and waits until a
    second process has signed in. WHY a rendezvous, not a sleep: a sleep only makes
    it likely that the other worker gets a job before the first finishes them all;
    here the first worker's jobs cannot finish until the driver, which sends each
    batch to the actor with the fewest jobs, has given the other one a batch."""
    folder = Path(case.golden_answer)
    (folder / str(os.getpid())).touch()
    for _ in range(12_000):  # a bound, so a broken dispatcher fails the test instead of hanging it
        if len(list(folder.iterdir())) >= 2:
            break
        await asyncio.sleep(0.01)
    return Reply(answer=str(os.getpid()))


def pid_parts():
    return pid_target, None


def sdk_agent(question: str) -> None:
    """An agent on the openai SDK that returns nothing: its Reply comes from --capture openai.
    Its model (a mock transport) calls getOrderStatus with the question's order id, then answers."""
    import httpx
    import openai

    def model(request: httpx.Request) -> httpx.Response:
        messages = json.loads(request.content)["messages"]
        if messages[-1]["role"] == "tool":
            message = {"role": "assistant", "content": f"Your order is {messages[-1]['content']}."}
        else:
            order = messages[-1]["content"].split()[-1].rstrip("?")
            message = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
                       "function": {"name": "getOrderStatus", "arguments": json.dumps({"orderId": order})}}]}
        return httpx.Response(200, json={"id": "c", "object": "chat.completion", "created": 0, "model": "mock",
                                         "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

    client = openai.OpenAI(api_key="k", base_url="http://model.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(model)))
    messages: list = [{"role": "user", "content": question}]
    first = client.chat.completions.create(model="m", messages=messages).choices[0].message
    messages += [first.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": "call_1", "content": "SHIPPED"}]
    client.chat.completions.create(model="m", messages=messages)


SECRET = "only-the-driver-knows-4321"


async def secret_target(case: GoldenCase) -> Reply:
    return Reply(answer=f"the code is {SECRET}")


async def dying_target(case: GoldenCase) -> Reply:
    if case.id == "case-00":
        os._exit(1)  # the worker process dies in the middle of its batch
    await asyncio.sleep(0.01)
    return Reply(answer="ok")


async def costly_target(case: GoldenCase) -> Reply:
    if case.id not in ("case-00", "case-01"):
        await asyncio.sleep(120)  # still running when the budget runs out
    return Reply(answer="paid", usage=Usage(cost_usd=0.5))


def broken_parts():
    raise RuntimeError("no such model")
