"""One hotel desk written with each framework the way its users write it, for the
conformance matrix (tests/e2e/test_conformance.py). Each knows nothing of tracegrade
beyond the case it is given: it keys its memory (a checkpointer's thread, a
session, a message history) by ``case.trial``, as docs/agents.md tells users to.

The model is OpenAI-compatible at ``OPENAI_BASE_URL`` (tests/conformance_server.py).
With ``CONFORMANCE_OTEL`` set, the framework's usual instrumentation is installed at
import, as a user's ``traced.py`` does: ``openinference`` (LangChain, smolagents,
the Agents SDK, the openai SDK), ``openllmetry`` or ``genai`` (the openai SDK),
``pydantic-ai`` (its own spans).
"""

from __future__ import annotations

import os
import threading
from typing import Any

MODEL = "desk-1"
_memory: dict[str, Any] = {}
_lock = threading.Lock()


def get_booking(booking_id: str) -> str:
    """Look up a booking by its reference.

    Args:
        booking_id: the booking's reference, BK-...
    """
    return f"{booking_id}: 12 May, refundable"


def cancel_booking(booking_id: str) -> str:
    """Cancel a booking by its reference.

    Args:
        booking_id: the booking's reference, BK-...
    """
    if booking_id == "BK-1005":
        raise ValueError(f"{booking_id} is not refundable")
    return f"{booking_id} cancelled"


def _remembered(trial: str, make: Any) -> Any:
    with _lock:
        if trial not in _memory:
            _memory[trial] = make()
        return _memory[trial]


# -- LangGraph: a StateGraph with a checkpointer and ToolNode(handle_tool_errors=True) --

def _langgraph_app(streaming: bool = False) -> Any:
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    model = ChatOpenAI(model=MODEL, streaming=streaming).bind_tools([get_booking, cancel_booking])

    def call_model(state):  # WHY unannotated: LangGraph reads hints in module scope, and these are local
        return {"messages": [model.invoke(state["messages"])]}

    def route(state):
        return "tools" if state["messages"][-1].tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", call_model)
    graph.add_node("tools", ToolNode([get_booking, cancel_booking], handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=MemorySaver())


def langgraph(case: Any) -> str:
    app = _remembered("langgraph-app", _langgraph_app)
    state = app.invoke({"messages": [("user", case.question)]}, {"configurable": {"thread_id": case.trial}})
    return str(state["messages"][-1].content)


async def langgraph_async_streamed(case: Any) -> str:
    """The same graph awaited, its model streaming (``ChatOpenAI(streaming=True)``)."""
    app = _remembered("langgraph-streamed-app", lambda: _langgraph_app(streaming=True))
    state = await app.ainvoke({"messages": [("user", case.question)]}, {"configurable": {"thread_id": case.trial}})
    return str(state["messages"][-1].content)


# -- LangChain's create_agent with a checkpointer --

def _create_agent_app() -> Any:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    return create_agent(model=ChatOpenAI(model=MODEL), tools=[get_booking, cancel_booking],
                        checkpointer=InMemorySaver())


def create_agent(case: Any) -> str:
    app = _remembered("create-agent-app", _create_agent_app)
    state = app.invoke({"messages": [{"role": "user", "content": case.question}]},
                       {"configurable": {"thread_id": case.trial}})
    return str(state["messages"][-1].content)


# -- smolagents: a ToolCallingAgent per trial, run with reset=False on a follow-up --

def _smolagents_agent() -> Any:
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    model = OpenAIServerModel(model_id=MODEL, api_base=os.environ["OPENAI_BASE_URL"], api_key="local")
    return ToolCallingAgent(tools=[tool(get_booking), tool(cancel_booking)], model=model, max_steps=4,
                            verbosity_level=0)


def smolagents(case: Any) -> str:
    agent = _remembered(f"smol/{case.trial}", _smolagents_agent)
    return str(agent.run(case.question, reset=not agent.memory.steps))


# -- the OpenAI Agents SDK: a triage agent handing off, a SQLiteSession per trial --

def _agents_sdk_desk(api: str) -> Any:
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, function_tool
    from openai import AsyncOpenAI

    if not os.environ.get("CONFORMANCE_OTEL"):  # WHY: the SDK's own trace export needs the internet
        from agents import set_tracing_disabled

        set_tracing_disabled(True)

    client = AsyncOpenAI()
    model = (OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel)(MODEL, client)
    cancellations = Agent(name="Cancellations desk", instructions="Cancel bookings.", model=model,
                          tools=[function_tool(cancel_booking)])
    return Agent(name="Hotel desk", instructions="Answer about bookings; hand cancellations over.", model=model,
                 tools=[function_tool(get_booking)], handoffs=[cancellations])


async def _agents_sdk(case: Any, api: str) -> str:
    from agents import Runner, SQLiteSession

    desk = _remembered(f"agents-sdk-{api}", lambda: _agents_sdk_desk(api))
    session = _remembered(f"session/{case.trial}", lambda: SQLiteSession(case.trial))
    result = await Runner.run(desk, case.question, session=session)
    return str(result.final_output)


async def agents_sdk_chat(case: Any) -> str:
    return await _agents_sdk(case, "chat")


async def agents_sdk_responses(case: Any) -> str:
    return await _agents_sdk(case, "responses")


# -- pydantic-ai: message_history kept per trial --

def _pydantic_agent(api: str) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"], api_key="local")
    model = (OpenAIResponsesModel if api == "responses" else OpenAIChatModel)(MODEL, provider=provider)
    return Agent(model, tools=[get_booking, cancel_booking])


async def _pydantic_ai(case: Any, api: str) -> str:
    agent = _remembered(f"pydantic-{api}", lambda: _pydantic_agent(api))
    history = _memory.get(f"history/{case.trial}")
    result = await agent.run(case.question, message_history=history)
    _memory[f"history/{case.trial}"] = result.all_messages()
    return str(result.output)


async def pydantic_ai_chat(case: Any) -> str:
    return await _pydantic_ai(case, "chat")


async def pydantic_ai_responses(case: Any) -> str:
    return await _pydantic_ai(case, "responses")


# -- LlamaIndex: a FunctionAgent with Memory, and an AgentWorkflow that hands off --
# (it wants openai<3, so it runs in a virtualenv of its own: tests/e2e/test_conformance_llamaindex.py)

def _llamaindex_llm() -> Any:
    from llama_index.llms.openai import OpenAI

    # WHY a known model name: the client looks its context window up by name; the server ignores it
    return OpenAI(model="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"], api_key="local")


def _llamaindex_agent() -> Any:
    from llama_index.core.agent.workflow import FunctionAgent

    return FunctionAgent(tools=[get_booking, cancel_booking], llm=_llamaindex_llm(),
                         system_prompt="You answer about hotel bookings.")


def _llamaindex_workflow() -> Any:
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent

    desk = FunctionAgent(name="HotelDesk", description="Answers about bookings.", tools=[get_booking],
                         llm=_llamaindex_llm(), can_handoff_to=["CancellationsAgent"])
    cancellations = FunctionAgent(name="CancellationsAgent", description="Cancels bookings.", tools=[cancel_booking],
                                  llm=_llamaindex_llm())
    return AgentWorkflow(agents=[desk, cancellations], root_agent="HotelDesk")


async def _llamaindex(case: Any, make: Any, name: str) -> str:
    from llama_index.core.memory import Memory

    agent = _remembered(name, make)
    memory = _remembered(f"memory/{case.trial}", lambda: Memory.from_defaults(session_id=case.trial))
    return str(await agent.run(user_msg=case.question, memory=memory))


async def llamaindex_function(case: Any) -> str:
    return await _llamaindex(case, _llamaindex_agent, "llamaindex-function")


async def llamaindex_workflow(case: Any) -> str:
    return await _llamaindex(case, _llamaindex_workflow, "llamaindex-workflow")


# -- a plain openai-SDK loop keeping its messages per trial --

OPENAI_TOOLS = [{"type": "function", "function": {
    "name": f.__name__, "description": f.__doc__,
    "parameters": {"type": "object", "properties": {"booking_id": {"type": "string"}}, "required": ["booking_id"]}}}
    for f in (get_booking, cancel_booking)]


def openai_loop(case: Any) -> str:
    import json

    from openai import OpenAI

    client = _remembered("openai-client", OpenAI)
    messages = _remembered(f"messages/{case.trial}", list)
    messages.append({"role": "user", "content": case.question})
    for _ in range(4):
        message = client.chat.completions.create(model=MODEL, messages=messages, tools=OPENAI_TOOLS).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return str(message.content)
        for call in message.tool_calls:
            tool = {"get_booking": get_booking, "cancel_booking": cancel_booking}[call.function.name]
            try:
                result = tool(**json.loads(call.function.arguments))
            except ValueError as exc:
                result = f"Error: {exc}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "out of rounds"


# -- instrumentation, installed at import as a user's traced.py does --

def _instrument(kind: str) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    framework = os.environ.get("CONFORMANCE_FRAMEWORK", "")
    if kind == "openinference" and framework.startswith("llamaindex"):
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        LlamaIndexInstrumentor().instrument()
    elif kind == "openinference":
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor

        framework = "agents_sdk" if framework.startswith("agents_sdk") else framework
        chosen = {"langgraph": LangChainInstrumentor, "langgraph_async_streamed": LangChainInstrumentor,
                  "create_agent": LangChainInstrumentor,
                  "smolagents": SmolagentsInstrumentor, "agents_sdk": OpenAIAgentsInstrumentor}.get(framework,
                                                                                                    OpenAIInstrumentor)
        if framework == "agents_sdk":  # WHY: the SDK's own exporter needs the internet; OpenInference's stays
            from agents import set_trace_processors

            set_trace_processors([])
        chosen().instrument()
    elif kind == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Traceloop

        Traceloop().instrument()
    elif kind == "genai":
        os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as GenAI

        GenAI().instrument()


if os.environ.get("CONFORMANCE_OTEL") and os.environ["CONFORMANCE_OTEL"] != "pydantic-ai":
    _instrument(os.environ["CONFORMANCE_OTEL"])
elif os.environ.get("CONFORMANCE_OTEL") == "pydantic-ai":  # its own GenAI spans, on the global provider
    _instrument("none")
    from pydantic_ai import Agent as _Agent

    _Agent.instrument_all()


def langgraph_shared(case: Any) -> str:
    """The same desk with its checkpointer keyed by the case, not the trial: trials share memory."""
    app = _remembered("langgraph-app", _langgraph_app)
    state = app.invoke({"messages": [("user", case.question)]}, {"configurable": {"thread_id": case.id}})
    return str(state["messages"][-1].content)
