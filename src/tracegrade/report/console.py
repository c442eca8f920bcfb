"""The console report: one block per case, then the final report."""

from __future__ import annotations

from typing import Sequence

from tracegrade.judge.scoring import METRICS
from tracegrade.core.results import CaseResult, Run
from tracegrade.stats.summary import score_averages, status_counts

RULE = "=" * 60


def case_block(result: CaseResult) -> str:
    lines = [RULE, f"{result.case_id:<24} {result.status.upper()}", f"  question   {result.question}"]
    if result.reply is not None:
        lines.append(f"  answer     {result.reply.answer}")
    if result.checks:
        lines.append("  checks     " + "  ".join(f"{c.name} {'PASS' if c.passed else 'FAIL'}" for c in result.checks))
        lines += [f"             {c.name}: {c.detail}" for c in result.failed_checks()]
    if result.scores:
        lines.append("  scores     " + "  ".join(f"{m} {result.scores[m]}" for m in METRICS))
    if result.judge_reason:
        lines.append(f"  judge      {result.judge_reason}")
    if result.error:
        lines.append(f"  reason     {result.error}")
    return "\n".join(lines)


def final_report(run: Run) -> str:
    results, manifest = run.results, run.manifest
    counts = status_counts(results)
    lines = [
        RULE,
        "FINAL REPORT",
        f"  {'dataset':<9} {manifest.dataset}  version {manifest.dataset_version}  {len(results)} cases",
        f"  {'agent':<9} {manifest.agent_model}   judge {manifest.judge_model or '(skipped: checks only)'}",
        f"  cases {len(results)}   passed {counts['pass']}   failed {counts['fail'] + counts['error']}   unscored {counts['unscored']}",
    ]
    lines += _id_lines("failed", [r for r in results if r.status in ("fail", "error")], with_reason=False)
    lines += _id_lines("unscored", [r for r in results if r.status == "unscored"], with_reason=True)
    averages = score_averages(results)
    if averages:
        lines.append(f"  {'average':<9} " + "  ".join(f"{m} {averages[m]:.2f}" for m in METRICS))
    agent_retries, judge_retries = sum(r.agent_retries for r in results), sum(r.judge_retries for r in results)
    if agent_retries or judge_retries:  # a run that only got through thanks to retries should say so
        lines.append(f"  {'retries':<9} agent {agent_retries}   judge {judge_retries}   "
                     "(429, 5xx, timeouts, dropped connections that a retry got past)")
    return "\n".join(lines)


def _id_lines(label: str, results: Sequence[CaseResult], with_reason: bool) -> list[str]:
    if not results:
        return []
    names = [f"{r.case_id} ({r.error})" if with_reason else r.case_id for r in results]
    return [f"  {label:<9} " + ", ".join(names)]


def render(run: Run) -> str:
    return "\n".join([*(case_block(r) for r in run.results), final_report(run)])
