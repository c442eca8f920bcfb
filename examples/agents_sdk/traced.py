"""The library desk instrumented with OpenInference, as a team that already
traces its agent would have it: tracegrade grades it from those spans.

    tracegrade run examples/agents_sdk/dataset.json --target examples.agents_sdk.traced:answer \\
        --capture otel --checks-only

With ``TRACES_FILE=traces.jsonl`` set, its spans are also written there as OTLP
JSON (what a collector would keep), to grade later without the agent:
``tracegrade grade traces.jsonl --dataset examples/agents_sdk/dataset.json``.
"""

from __future__ import annotations

from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

from examples.agents_sdk.agent import answer
from examples.tracing import tracer_provider

OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider())

__all__ = ["answer"]
