"""The history report: the last runs, then today's aggregates next to yesterday's."""

from __future__ import annotations

from typing import Sequence

from tracegrade.stats.aggregate import cost, latency, quality_metrics
from tracegrade.stats.tally import tally
from tracegrade.report.compare_console import table
from tracegrade.report.compare_table import delta, value
from tracegrade.core.results import Run
from tracegrade.store.runstore import RunInfo

RUN_HEADERS = ("run", "started", "dataset", "version", "agent", "prompt", "cases", "passed", "cost", "status")


def run_row(info: RunInfo) -> list[str]:
    m, totals = info.manifest, info.manifest.totals
    status = "interrupted?" if info.status == "running" else info.status  # a live run looks the same
    passed = str(totals["passed"]) if "passed" in totals else "-"
    spent = f"${totals['costUsd']['totalUsd']:.4f}" if "costUsd" in totals else "-"
    return [info.run_id, info.started_at.replace("+00:00", "Z"), m.dataset, m.dataset_version, m.agent_model,
            m.prompt_version or "-", f"{info.cases_done}/{m.case_count * m.settings.get('repeat', 1)}", passed, spent, status]


def runs_table(infos: Sequence[RunInfo], store_url: str) -> str:
    if not infos:
        return f"no runs in {store_url}"
    return "\n".join([f"RUNS (newest first, store {store_url})", *table(RUN_HEADERS, [run_row(i) for i in infos])])


def latest_vs_previous(latest: Run, previous: Run) -> str:
    now, before = _numbers(latest), _numbers(previous)
    rows = [[name, _fmt(name, before.get(name)), _fmt(name, now.get(name)), _delta(name, before.get(name), now.get(name))]
            for name in dict.fromkeys([*before, *now])]
    lines = [f"LATEST vs PREVIOUS on {latest.manifest.dataset}",
             f"  latest    {latest.manifest.run_id} (prompt {latest.manifest.prompt_version or '-'}, {latest.manifest.agent_model})",
             f"  previous  {previous.manifest.run_id} (prompt {previous.manifest.prompt_version or '-'}, {previous.manifest.agent_model})"]
    if latest.manifest.dataset_version != previous.manifest.dataset_version:
        lines.append(f"  note      dataset version changed {previous.manifest.dataset_version} -> "
                     f"{latest.manifest.dataset_version}: not the same cases")
    return "\n".join([*lines, *table(("metric", "previous", "latest", "delta"), rows)])


def _numbers(run: Run) -> dict[str, float | None]:
    numbers: dict[str, float | None] = dict(quality_metrics(run.results))
    numbers.update({f"latency {q} (s)": v for q, v in latency(run.results).items()})
    spent = cost(run.results)
    numbers["cost per case (USD)"] = spent["perCaseUsd"]
    numbers["cost per success (USD)"] = spent["perSuccessUsd"]
    counted = tally(run.results)
    if len(counted.repeats) > 1:  # WHY only then: pass^1 of one trial per case is taskSuccess again
        numbers.update({f"pass^{k}": v for k, v in counted.pass_hat().items()})
        # WHY beside pass^k: an unscored trial counts there as not passed, and the reader should see how many
        numbers[UNSCORED_TRIALS] = float(sum(counted.unscored_trials().values()))
    return numbers


UNSCORED_TRIALS = "unscored trials (in pass^k)"


def _fmt(name: str, number: float | None) -> str:
    if number is not None and "USD" in name:
        return f"{number:.4f}"
    if number is not None and name == UNSCORED_TRIALS:
        return f"{number:.0f}"
    return value(name, number)


def _delta(name: str, before: float | None, now: float | None) -> str:
    if before is None or now is None:
        return "-"
    return f"{now - before:+.4f}" if "USD" in name else delta(name, now - before)
