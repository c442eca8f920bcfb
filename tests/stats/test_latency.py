"""Latency under concurrency: wall time per case (queueing included) is reported
apart from the agent's own service time (its trace's timed steps)."""

from __future__ import annotations

import numpy as np
import pytest

from tracegrade.core.results import CaseResult
from tracegrade.core.trace import Reply, Step
from tracegrade.stats.aggregate import latency, service_latency
from tracegrade.stats.summary import percentile


def case(seconds: float, *step_ms: float) -> CaseResult:
    steps = tuple(Step(kind="model", name=f"round {i}", duration_ms=ms) for i, ms in enumerate(step_ms))
    return CaseResult("c", "pass", reply=Reply(answer="x", steps=steps), seconds=seconds)


def test_service_time_leaves_out_the_wait_for_a_shared_model():
    results = [case(400.0, 2000, 1000), case(380.0, 4000)]  # 400 s at the queue's end, 3 s of work
    assert latency(results)["p50"] == 380.0
    assert service_latency(results) == {"p50": 3.0, "p95": 4.0, "p99": 4.0}


def test_no_steps_no_service_time():
    assert service_latency([CaseResult("c", "pass", reply=Reply(answer="x"), seconds=1.0)]) is None


@pytest.mark.parametrize("q", [1, 5, 25, 50, 75, 90, 95, 99, 100])
@pytest.mark.parametrize("n", [1, 2, 3, 6, 12, 20, 101])
def test_the_percentile_is_numpys_nearest_rank(n, q):
    values = [float((i * 7919) % 97) for i in range(n)]  # unordered, with ties
    assert percentile(values, q) == np.percentile(values, q, method="inverted_cdf")


def test_the_issue_examples():
    assert percentile([1, 2, 3, 4, 5, 6], 50) == 3
    assert percentile(range(1, 21), 95) == 19


def test_step_times_are_rounded_to_the_microsecond():
    step = Step(kind="tool", name="t", start_ms=1.0000000001, duration_ms=0.19999999999708962)
    assert (step.start_ms, step.duration_ms) == (1.0, 0.2)
    assert Reply.from_wire({"answer": "x", "steps": [{"kind": "tool", "name": "t", "durationMs": 2.0004999}]}
                           ).steps[0].duration_ms == 2.0
