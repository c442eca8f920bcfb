"""The currency desk instrumented with OpenInference (LangChain's instrumentor):
tracegrade grades it from those spans.

    tracegrade run examples/langgraph_agent/dataset.json --target examples.langgraph_agent.traced:answer \\
        --capture otel --checks-only

With ``TRACES_FILE=traces.jsonl`` set, its spans are also written there as OTLP
JSON, to grade later: ``tracegrade grade traces.jsonl --dataset examples/langgraph_agent/dataset.json``.
"""

from __future__ import annotations

from openinference.instrumentation.langchain import LangChainInstrumentor

from examples.langgraph_agent.agent import answer
from examples.tracing import tracer_provider

LangChainInstrumentor().instrument(tracer_provider=tracer_provider())

__all__ = ["answer"]
