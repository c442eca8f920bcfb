"""The console report: one block per case, then the final report."""

from __future__ import annotations

from typing import Sequence

from tracegrade.core.results import CaseResult, MetricScore, Run
from tracegrade.stats.tally import RunTally, tally
from tracegrade.outputs.labels import dataset_label

RULE = "=" * 60
# WHY caps: the final report is read by a person; a run of 100,000 failed cases printed
# every id on one line. results.json and `tracegrade view` list them all.
SHOWN_IDS = 20
SHOWN_REASONS = 5


def case_block(result: CaseResult) -> str:
    lines = [RULE, f"{result.case_id:<24} {result.status.upper()}", f"  question   {result.question}"]
    if result.reply is not None:
        lines.append(f"  answer     {result.reply.answer}")
    if result.checks:
        lines.append("  checks     " + "  ".join(f"{c.name} {'PASS' if c.passed else 'FAIL'}" for c in result.checks))
        # WHY the code: it is what results.json, pytest and the view's filter name the failure by
        lines += [f"             {c.name}: {c.code}: {c.detail}" for c in result.failed_checks()]
    if result.metrics:
        lines += metric_lines(result.metrics)
    elif result.scores:  # a result stored before metrics carried their source
        lines.append("  scores     " + "  ".join(f"{m} {v:g}" for m, v in result.scores.items()))
    if result.judge_reason:
        lines.append(f"  judge      {result.judge_reason}")
    if result.replay is not None:
        lines.append(f"  replay     {result.replay.describe()}")
    if result.error:
        lines.append(f"  reason     {result.error}")
    return "\n".join(lines)


def metric_lines(metrics: tuple[MetricScore, ...]) -> list[str]:
    """One line per judge metric: value, source (probability, json, code), verdict at its threshold, why."""
    width = max(len(m.name) for m in metrics)
    lines = []
    for index, m in enumerate(metrics):
        if m.scored:
            verdict = ("pass" if m.passed else "FAIL") if m.gates else "info"
            text = f"{m.name:<{width}} {m.value:5.2f} {m.source:<11} {verdict:<4} (>= {m.threshold:g})"
        else:
            # WHY its own word: n/a (no evidence to judge against) is not a judge that failed to answer.
            status = "n/a" if m.detail.startswith("n/a") else "not scored"
            text = f"{m.name:<{width}} {'-':>5} {m.source:<11} {status}"
        detail = m.detail.removeprefix("not scored: ") if m.source != "json" or not m.scored else ""
        if not m.gates:
            detail = f"{detail}; not allowed to gate" if detail else "not allowed to gate"
        lines.append(f"  {'scores' if index == 0 else '':<10} {text}" + (f"  {detail}" if detail else ""))
    return lines


def final_report(run: Run, summary: RunTally | None = None) -> str:
    """The run in a few lines; ``summary``: the run's tally when the caller has it already."""
    manifest, summary = run.manifest, summary or tally(run.results)
    counts, cases = summary.statuses, summary.cases
    lines = [
        RULE,
        "FINAL REPORT",
        f"  {'dataset':<9} {dataset_label(manifest)}  version {manifest.dataset_version}  {cases} cases",
        f"  {'agent':<9} {manifest.agent_model}   judge {manifest.judge_model or '(skipped: checks only)'}",
        f"  cases {cases}   passed {counts['pass']}   failed {counts['fail'] + counts['error']}   unscored {counts['unscored']}",
    ]
    lines += _id_lines("failed", summary.failed)
    lines += _unscored_lines(summary.unscored)
    averages = summary.score_averages()
    if averages:
        lines.append(f"  {'average':<9} " + "  ".join(f"{m} {v:.2f}" for m, v in averages.items()))
    missing = summary.not_scored
    if missing:
        lines.append(f"  {'not scored':<9} " + "  ".join(f"{m} in {n} case(s)" for m, n in missing.items()))
    agent_retries, judge_retries = summary.retries
    if agent_retries or judge_retries:  # a run that only got through thanks to retries should say so
        lines.append(f"  {'retries':<9} agent {agent_retries}   judge {judge_retries}   "
                     "(429, 5xx, timeouts, dropped connections that a retry got past)")
    return "\n".join(lines)


def _id_lines(label: str, names: Sequence[str]) -> list[str]:
    return [f"  {label:<9} {_ids(names)}"] if names else []


def _ids(names: Sequence[str]) -> str:
    more = len(names) - SHOWN_IDS
    return ", ".join(names[:SHOWN_IDS]) + (f" (+{more} more: results.json lists them all)" if more > 0 else "")


def _unscored_lines(unscored: Sequence[tuple[str, str]]) -> list[str]:
    """The unscored cases a line per reason: WHY grouped, a run without --capture gave
    every case the same three-line reason, repeated once per case on one line."""
    by_reason: dict[str, list[str]] = {}
    for case_id, why in unscored:
        by_reason.setdefault(why, []).append(case_id)
    lines: list[str] = []
    for why, ids in list(by_reason.items())[:SHOWN_REASONS]:
        label = "" if lines else "unscored"
        cases = f"{len(ids)} case{'s' if len(ids) > 1 else ''} ({_ids(ids)})"
        lines.append(f"  {label:<9} {cases}" + (f": {why}" if why else ""))
    if len(by_reason) > SHOWN_REASONS:
        lines.append(f"  {'':<9} and {len(by_reason) - SHOWN_REASONS} other reasons (each case's block says why)")
    return lines


def render(run: Run) -> str:
    return "\n".join([*(case_block(r) for r in run.results), final_report(run)])
