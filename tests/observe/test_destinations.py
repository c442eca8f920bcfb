"""observe/destinations.py: whether spans can go anywhere, asked without loading OpenTelemetry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

# WHY child processes: this test process has OpenTelemetry loaded already (other tests load it).
QUIET = {k: v for k, v in os.environ.items()
         if not k.startswith(("TRACEGRADE_SPANS_DB", "OTEL_EXPORTER_OTLP", "OTEL_PYTHON_TRACER_PROVIDER"))}


def child(program: str, tmp_path: Path, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(program)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**QUIET, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_tracer_is_possible_once_opentelemetry_is_loaded_or_a_provider_is_named(tmp_path: Path) -> None:
    program = """
        from tracegrade.observe.destinations import tracer_possible
        before = tracer_possible()
        import opentelemetry.trace
        print(before, tracer_possible())
    """
    assert child(program, tmp_path) == "False True"
    assert child(program, tmp_path, OTEL_PYTHON_TRACER_PROVIDER="sdk_tracer_provider") == "True True"


CASES = """
    import sys
    import tracegrade
    from tracegrade import Reply

    async def answer(case):
        return Reply(answer="ok")

    cases = [{"id": f"c{i}", "question": "hi?"} for i in range(3)]
"""


def test_a_run_with_no_tracer_set_never_loads_opentelemetry(tmp_path: Path) -> None:
    program = CASES + """
    run = tracegrade.evaluate(cases, answer, judge=None, store=f"sqlite:///{'runs.db'}")
    print(len(run.results), sorted(m for m in sys.modules if m.startswith("opentelemetry")))
    """
    assert child(program, tmp_path) == "3 []"


def test_an_applications_own_tracer_provider_gets_each_cases_span(tmp_path: Path) -> None:
    program = CASES + """
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace.set_tracer_provider(provider)
    tracegrade.evaluate(cases, answer, judge=None, store=f"sqlite:///{'runs.db'}")
    print(sorted(s.name for s in memory.get_finished_spans() if s.name == "case"))
    """
    assert child(program, tmp_path) == "['case', 'case', 'case']"
