"""A weather desk written with nothing but the openai SDK: a plain tool loop.

Nothing in it knows tracegrade. Grade it with its model calls captured:

    tracegrade serve-model &                      # the local model, OpenAI-compatible, on 127.0.0.1:8300
    tracegrade run examples/openai_loop/dataset.json --target examples.openai_loop.agent:answer \\
        --capture openai --checks-only

The model is whatever ``OPENAI_BASE_URL`` serves (default: ``tracegrade serve-model``).
"""

from __future__ import annotations

import json
import os

from openai import OpenAI

FORECASTS = {"lisbon": "18 C and sunny", "oslo": "-3 C with snow", "nairobi": "24 C with light rain"}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Today's weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "the city name"}},
                   "required": ["city"]}}}]
SYSTEM = ("You are a weather desk. For any question about the weather in a city, call get_weather with the "
          "city's name, then answer in one sentence that repeats the forecast it gave.")


def get_weather(city: str) -> str:
    return FORECASTS.get(city.strip().lower(), f"no forecast for {city}")


def client() -> OpenAI:
    return OpenAI(base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8300/v1"),
                  api_key=os.environ.get("OPENAI_API_KEY", "local"))


def answer(question: str) -> str:
    """The agent: ask the model, run the tools it asks for, until it answers."""
    openai = client()
    messages: list[dict] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    for _ in range(4):
        response = openai.chat.completions.create(model=os.environ.get("EXAMPLE_MODEL", "local"),
                                                  messages=messages, tools=TOOLS, temperature=0)
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = get_weather(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "Sorry, I could not finish."
