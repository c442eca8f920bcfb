"""The cost and latency block of a run report: tokens, USD (agent, judge and a
simulated user's model apart), latency percentiles, and the cases the flaky policy caught."""

from __future__ import annotations

from tracegrade.stats.tally import RunTally, tally
from tracegrade.core.results import Run


def usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def render(run: Run, summary: RunTally | None = None) -> str:
    """The block; ``summary``: the run's tally when the caller has it already."""
    summary = summary or tally(run.results)
    spent, used, times = summary.cost(), summary.tokens(), summary.latency()
    lines = [
        "COST AND LATENCY",
        f"  tokens   agent {used['agent'][0]:,} in / {used['agent'][1]:,} out   "
        f"judge {used['judge'][0]:,} in / {used['judge'][1]:,} out"
        + (f"   user {used['user'][0]:,} in / {used['user'][1]:,} out" if "user" in used else ""),
        f"  cost     agent {usd(spent['agentUsd'])}   judge {usd(spent['judgeUsd'])}"
        + (f"   user {usd(spent['userUsd'])}" if "userUsd" in spent else "") + f"   total {usd(spent['totalUsd'])}"
        f"   per case {usd(spent['perCaseUsd'])}   per successful task {usd(spent['perSuccessUsd'])}",
        f"  latency  p50 {times['p50']:.2f} s   p95 {times['p95']:.2f} s   p99 {times['p99']:.2f} s"
        "   (wall per case, waiting for a shared model included)",
    ]
    if service := summary.service_latency():
        lines.append(f"  service  p50 {service['p50']:.2f} s   p95 {service['p95']:.2f} s   p99 {service['p99']:.2f} s"
                     "   (the agent's own timed steps, no queueing)")
    if summary.flaky:
        lines.append("  flaky    " + ", ".join(f"{case_id} ({', '.join(attempts)} -> {status})"
                                               for case_id, attempts, status in summary.flaky))
    unpriced = run.manifest.totals.get("unpricedModels")
    if unpriced:
        lines.append(f"  unpriced {', '.join(unpriced)} (no price in the table: counted as $0)")
    return "\n".join(lines)
