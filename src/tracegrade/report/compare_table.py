"""The cells of a comparison, shared by its console and Markdown forms: one
formatting of each number, whatever the layout."""

from __future__ import annotations

import math
from typing import Any

from tracegrade.compare.comparison import Comparison, GroupRow, MetricRow
from tracegrade.compare.gate import Verdict

RATES = ("taskSuccess", "checkPassRate")
METRIC_HEADERS = ("metric", "baseline", "candidate", "delta", "change", "pairs",
                  "p paired-t", "p Wilcoxon", "p McNemar", "95% CI of diff", "significant")
GROUP_HEADERS = ("group", "cases", "baseline pass", "candidate pass", "delta", "newly failing")


def value(name: str, number: float | None) -> str:
    if number is None:
        return "-"
    return f"{number:.1%}" if name in RATES else f"{number:.2f}"


def delta(name: str, number: float | None) -> str:
    if number is None:
        return "-"
    return f"{number * 100:+.1f} pp" if name in RATES else f"{number:+.2f}"


def p_value(test: Any) -> str:
    return "-" if test is None or math.isnan(test.p_value) else f"{test.p_value:.3g}"


def metric_cells(row: MetricRow) -> list[str]:
    tests = row.tests
    ci = tests.mean_difference_ci if tests is not None else None
    ci_text = "-" if ci is None or math.isnan(ci.low) else f"[{delta(row.name, ci.low)}, {delta(row.name, ci.high)}]"
    return [
        row.name, value(row.name, row.baseline), value(row.name, row.candidate), delta(row.name, row.delta),
        "-" if row.relative is None else f"{row.relative:+.1%}",
        str(tests.pairs) if tests else "-",
        p_value(tests.t_test if tests else None), p_value(tests.wilcoxon if tests else None),
        p_value(tests.mcnemar if tests else None), ci_text,
        "-" if tests is None else ("yes" if tests.significant else "no"),
    ]


def group_cells(group: GroupRow) -> list[str]:
    return [group.key, str(group.cases), f"{group.baseline_pass:.0%}", f"{group.candidate_pass:.0%}",
            f"{(group.candidate_pass - group.baseline_pass) * 100:+.0f} pp", ", ".join(group.newly_failing) or "-"]


def significance_sentence(comparison: Comparison, alpha: float) -> str:
    significant = [row for row in comparison.metrics if row.tests is not None and row.tests.significant]
    if not significant:
        return f"No difference is statistically significant at alpha {alpha:g} ({len(comparison.case_ids)} case pairs)."
    parts = [f"{row.name} {delta(row.name, row.delta)} (p={p_value(row.tests.wilcoxon or row.tests.mcnemar)})"
             for row in significant if row.tests is not None]
    return f"Significant at alpha {alpha:g}: " + ", ".join(parts) + "."


def verdict_line(verdict: Verdict) -> str:
    return f"VERDICT: {verdict.level.upper()} (exit {verdict.exit_code})"


def run_label(manifest: Any) -> str:
    prompt = f" prompt {manifest.prompt_version}" if manifest.prompt_version else ""
    return f"{manifest.run_id} ({manifest.agent_model}{prompt}, {manifest.started_at or 'no start time'})"
