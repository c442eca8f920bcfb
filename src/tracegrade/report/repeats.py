"""The repetitions block of a run report: run-level mean ± sd and pass^k, and
each case's mean (variance) per score and pass^k over its trials, with how many
of them were unscored beside it (an unscored trial counts as not passed)."""

from __future__ import annotations

from tracegrade.stats.repeats import case_spreads, run_level
from tracegrade.core.results import Run
from tracegrade.stats.tally import RunTally, tally


def wanted(run: Run, summary: RunTally | None = None) -> bool:
    return len((summary or tally(run.results)).repeats) > 1


def render(run: Run, summary: RunTally | None = None) -> str:
    """The block; ``summary``: the run's tally when the caller has it already."""
    results, summary = run.results, summary or tally(run.results)
    level = run_level(results)
    metrics = summary.metric_names
    by_case, unscored = summary.case_pass_hat(), summary.unscored_trials()
    lines = [f"REPEATS ({len(summary.repeats)} per case)",
             "  run level  " + "   ".join(f"{m} {mean:.2f} ± {sd:.2f}" for m, (mean, sd) in level.items()),
             "  pass^k     " + _pass_hat(summary.pass_hat()) + _unscored_note(sum(unscored.values())),
             f"  {'case':<26}{'runs':>5}{'pass':>7}  " + "  ".join(f"{m:>17}" for m in metrics) + "  pass^1..k"]
    for spread in case_spreads(results):
        cells = [f"{spread.means[m]:>9.2f} ({spread.variances[m]:.2f})" if m in spread.means else f"{'-':>17}"
                 for m in metrics]
        lines.append(f"  {spread.case_id:<26}{spread.runs:>5}{spread.pass_rate:>7.2f}  " + "  ".join(f"{c:>17}" for c in cells)
                     + "  " + " ".join(f"{v:.2f}" for v in by_case.get(spread.case_id, {}).values())
                     + (f"  ({unscored[spread.case_id]} unscored)" if spread.case_id in unscored else ""))
    return "\n".join(lines)


def _unscored_note(count: int) -> str:
    """Beside the run's pass^k: how many trials had no verdict, counted there as not passed."""
    if not count:
        return ""
    return f"  ({count} unscored trial{'s' if count > 1 else ''} counted as not passed)"


def _pass_hat(by_k: dict[int, float]) -> str:
    return "   ".join(f"pass^{k} {v:.2f}" for k, v in by_k.items()) or "-"
