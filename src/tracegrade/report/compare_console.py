"""The comparison as a console table."""

from __future__ import annotations

from typing import Sequence

from tracegrade.compare.comparison import Comparison
from tracegrade.compare.gate import Verdict
from tracegrade.report import compare_table as cells


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
    def line(row: Sequence[str]) -> str:
        return "  " + "  ".join(f"{c:<{w}}" if i == 0 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(row, widths)))

    return [line(headers), "  " + "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def render(comparison: Comparison, verdict: Verdict, alpha: float) -> str:
    c = comparison
    lines = [
        "COMPARE",
        f"  baseline   {cells.run_label(c.baseline)}",
        f"  candidate  {cells.run_label(c.candidate)}",
        f"  dataset    {c.candidate.dataset} version {c.candidate.dataset_version}   {len(c.case_ids)} cases compared",
        *(f"  note       {note}" for note in c.notes),
        "",
        *table(cells.METRIC_HEADERS, [cells.metric_cells(row) for row in c.metrics]),
        "",
        "  latency    " + "   ".join(f"{q} {b:.2f} s -> {a:.2f} s" for q, (b, a) in c.latency.items()),
        f"  cost       per case ${c.cost_per_case[0]:.4f} -> ${c.cost_per_case[1]:.4f}",
        "",
        *table(cells.GROUP_HEADERS, [cells.group_cells(g) for g in c.groups]),
        "",
        f"  newly failing  {', '.join(c.newly_failing) or '-'}",
        f"  newly passing  {', '.join(c.newly_passing) or '-'}",
        "",
        "FINDINGS" if verdict.findings else "FINDINGS: none",
        *(f"  {f.level.upper():<5}  {f.rule}: {f.message}" for f in verdict.findings),
        cells.significance_sentence(c, alpha),
        cells.verdict_line(verdict),
    ]
    return "\n".join(lines)
