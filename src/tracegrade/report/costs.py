"""The cost and latency block of a run report: tokens, USD (agent and judge
apart), latency percentiles, and the cases the flaky policy caught."""

from __future__ import annotations

from tracegrade.stats.aggregate import cost, latency, service_latency, tokens
from tracegrade.core.results import Run


def usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def render(run: Run) -> str:
    results = run.results
    spent, used, times = cost(results), tokens(results), latency(results)
    lines = [
        "COST AND LATENCY",
        f"  tokens   agent {used['agent'][0]:,} in / {used['agent'][1]:,} out   "
        f"judge {used['judge'][0]:,} in / {used['judge'][1]:,} out",
        f"  cost     agent {usd(spent['agentUsd'])}   judge {usd(spent['judgeUsd'])}   total {usd(spent['totalUsd'])}"
        f"   per case {usd(spent['perCaseUsd'])}   per successful task {usd(spent['perSuccessUsd'])}",
        f"  latency  p50 {times['p50']:.2f} s   p95 {times['p95']:.2f} s   p99 {times['p99']:.2f} s"
        "   (wall per case, waiting for a shared model included)",
    ]
    if service := service_latency(results):
        lines.append(f"  service  p50 {service['p50']:.2f} s   p95 {service['p95']:.2f} s   p99 {service['p99']:.2f} s"
                     "   (the agent's own timed steps, no queueing)")
    flaky = [r for r in results if r.flaky]
    if flaky:
        lines.append("  flaky    " + ", ".join(f"{r.case_id} ({', '.join(r.attempts)} -> {r.status})" for r in flaky))
    unpriced = run.manifest.totals.get("unpricedModels")
    if unpriced:
        lines.append(f"  unpriced {', '.join(unpriced)} (no price in the table: counted as $0)")
    return "\n".join(lines)
