"""A library desk written with the OpenAI Agents SDK.

Nothing in it knows tracegrade. Grade it with its model calls captured:

    tracegrade serve-model &
    tracegrade run examples/agents_sdk/dataset.json --target examples.agents_sdk.agent:answer \\
        --capture openai --checks-only

The SDK's chat-completions model runs on whatever ``OPENAI_BASE_URL`` serves.
"""

from __future__ import annotations

import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
from openai import AsyncOpenAI

# WHY: the SDK sends its traces to OpenAI's servers by default; offline, nothing is sent. Its
# tracing stays on, so an OpenTelemetry instrumentor installed after this import (OpenInference's
# OpenAIAgentsInstrumentor) still sees every run: `--capture otel` grades it from those spans.
set_trace_processors([])

SHELF = {"dune": "2 copies on the shelf, aisle 4", "emma": "on loan until 12 December",
         "beloved": "1 copy on the shelf, aisle 2"}


@function_tool
def check_availability(title: str) -> str:
    """Whether the library has a book on its shelf now.

    Args:
        title: the book's title
    """
    return SHELF.get(title.strip().lower(), f"{title} is not in the catalogue")


def library_agent() -> Agent:
    client = AsyncOpenAI(base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8300/v1"),
                         api_key=os.environ.get("OPENAI_API_KEY", "local"))
    model = OpenAIChatCompletionsModel(model=os.environ.get("EXAMPLE_MODEL", "local"), openai_client=client)
    return Agent(name="library desk", model=model, tools=[check_availability],
                 instructions="You answer questions about the library's books. You do not know what is on the "
                 "shelf: for any book, first call check_availability with its title. Then answer in one "
                 "sentence that repeats exactly what check_availability returned (copies, aisle, loan date).")


async def answer(question: str) -> str:
    result = await Runner.run(library_agent(), question, max_turns=4)
    return str(result.final_output)
