"""A currency desk written with LangGraph (a tool loop over a LangChain chat model).

Nothing in it knows tracegrade. Grade it with its model calls captured:

    tracegrade serve-model &
    tracegrade run examples/langgraph_agent/dataset.json --target examples.langgraph_agent.agent:answer \\
        --capture openai --checks-only

``ChatOpenAI`` runs on whatever ``OPENAI_BASE_URL`` serves.
"""

from __future__ import annotations

import os

from langchain_core.messages import SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

RULES = ("You convert money. Call convert_currency with the amount and the two ISO currency codes, "
         "then answer in one sentence with the converted amount.")

RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93, ("GBP", "EUR"): 1.17, ("EUR", "JPY"): 162.0}


@tool
def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money from one currency to another (ISO codes such as EUR, USD)."""
    rate = RATES.get((from_currency.upper(), to_currency.upper()))
    if rate is None:
        return f"no rate from {from_currency} to {to_currency}"
    return f"{amount:g} {from_currency.upper()} = {amount * rate:.2f} {to_currency.upper()}"


def answer(question: str) -> str:
    model = ChatOpenAI(model=os.environ.get("EXAMPLE_MODEL", "local"), temperature=0,
                       base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8300/v1"),
                       api_key=os.environ.get("OPENAI_API_KEY", "local"))
    state = tool_loop(model).invoke({"messages": [("user", question)]}, {"recursion_limit": 8})
    return str(state["messages"][-1].content)


def tool_loop(model: ChatOpenAI):  # type: ignore[no-untyped-def]
    """The model, then its tool calls, until it answers without one."""
    with_tools = model.bind_tools([convert_currency])

    def think(state: MessagesState) -> dict:
        return {"messages": [with_tools.invoke([SystemMessage(RULES), *state["messages"]])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", ToolNode([convert_currency]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()
