"""One run, four views: the console report, the HTML report, the compare gate and the
dashboard show the same p50 / p95 / p99, and they are numpy's nearest-rank ones."""

from __future__ import annotations

import re

import numpy as np

from runs_support import result, run, scores
from tracegrade.compare.comparison import compare_runs
from tracegrade.compare.gate import decide
from tracegrade.core.trace import Reply, Step
from tracegrade.view.monitor.metrics import Filters, RequestTrace, summarize
from tracegrade.view.monitor.page import render
from tracegrade.observe.spanstore import SpanStore
from tracegrade.observe.telemetry import RequestInfo, open_telemetry, record_request
from tracegrade.report import compare_console, costs, html

# 40 case latencies, 10 ms apart, unordered: nearest rank puts p50 on the 20th, p95 on
# the 38th and p99 on the 40th, where interpolating or rounding definitions differ.
MS = [(i * 17) % 40 * 10 + 100 for i in range(40)]
EXPECTED = {q: round(float(np.percentile(MS, int(q[1:]), method="inverted_cdf"))) for q in ("p50", "p95", "p99")}


def the_run():
    return run([result(f"c{i:02}", score=scores(5), seconds=ms / 1000) for i, ms in enumerate(MS)], "run-1")


def seconds_shown(text: str, pattern: str) -> dict[str, int]:
    """p50/p95/p99 found by ``pattern`` (groups: quantile, seconds) in ``text``, in ms."""
    return {q: round(float(s) * 1000) for q, s in re.findall(pattern, text)}


def test_console_html_gate_and_dashboard_show_the_same_percentiles(tmp_path):
    assert EXPECTED == {"p50": 290, "p95": 470, "p99": 490}
    this = the_run()
    console = seconds_shown(costs.render(this), r"(p\d\d) (\d+\.\d+) s")
    page = seconds_shown(html.to_html(this), r"latency (p\d\d)</div>\s*<div[^>]*>(\d+\.\d+) s")
    comparison = compare_runs(this, this, resamples=200)
    gate = seconds_shown(compare_console.render(comparison, decide(comparison), 0.05),
                         r"(p\d\d) \d+\.\d+ s -> (\d+\.\d+) s")

    # The dashboard reads production requests from the span store: the same latencies, recorded as requests.
    telemetry = open_telemetry("shopnest", spans_db=tmp_path / "spans.db", otlp_endpoint=None, secrets=())
    for i, ms in enumerate(MS):
        start = 1_700_000_000_000_000_000 + i * 10**9
        record_request(telemetry.tracer, RequestInfo(question=f"q{i}", started_ns=start, ended_ns=start + ms * 10**6),
                       Reply(answer="a", steps=(Step(kind="model", name="round 1", duration_ms=ms / 2),)))
    telemetry.shutdown()
    traces = [RequestTrace.from_spans(spans) for spans in SpanStore(tmp_path / "spans.db").requests()]
    summary = summarize(traces)
    cards = dict(re.findall(r"latency (p\d\d)</div>\s*<div[^>]*>(\d+) ms",
                            render(traces, {}, Filters(), versions=[], models=[], store="spans.db")))

    assert console == page == gate == EXPECTED
    assert {"p50": summary.p50_ms, "p95": summary.p95_ms, "p99": summary.p99_ms} == EXPECTED
    assert {q: int(v) for q, v in cards.items()} == EXPECTED
