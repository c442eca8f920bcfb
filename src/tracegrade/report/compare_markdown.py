"""The comparison as Markdown, for a pull-request comment."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from tracegrade.compare.comparison import Comparison
from tracegrade.compare.gate import Verdict
from tracegrade.report import compare_table as cells

ICONS = {"pass": "✅", "warn": "⚠️", "block": "⛔"}


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def escape(text: object) -> str:
        return str(text).replace("|", "\\|")

    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers),
            *("| " + " | ".join(escape(x) for x in row) + " |" for row in rows)]


def to_markdown(comparison: Comparison, verdict: Verdict, alpha: float) -> str:
    c = comparison
    lines = [
        f"### tracegrade compare: {ICONS[verdict.level]} {verdict.level.upper()}",
        "",
        f"Baseline `{cells.run_label(c.baseline)}` vs candidate `{cells.run_label(c.candidate)}` "
        f"on `{c.candidate.dataset}` version `{c.candidate.dataset_version}`, {len(c.case_ids)} cases compared.",
        "",
        *(f"> {note}" for note in c.notes),
        *([""] if c.notes else []),
        f"**{cells.significance_sentence(c, alpha)}**",
        "",
        *table(cells.METRIC_HEADERS, [cells.metric_cells(row) for row in c.metrics]),
        "",
        "Latency " + ", ".join(f"{q} {b:.2f} s → {a:.2f} s" for q, (b, a) in c.latency.items())
        + f"; cost per case ${c.cost_per_case[0]:.4f} → ${c.cost_per_case[1]:.4f}.",
        "",
        *table(cells.GROUP_HEADERS, [cells.group_cells(g) for g in c.groups]),
        "",
        f"Newly failing: {', '.join(f'`{i}`' for i in c.newly_failing) or 'none'}. "
        f"Newly passing: {', '.join(f'`{i}`' for i in c.newly_passing) or 'none'}.",
        "",
        "#### Findings",
        *(f"- **{f.level.upper()}** `{f.rule}`: {f.message}" for f in verdict.findings),
        *(["- none"] if not verdict.findings else []),
    ]
    return "\n".join(lines) + "\n"


def write(comparison: Comparison, verdict: Verdict, alpha: float, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_markdown(comparison, verdict, alpha), encoding="utf-8")
    return path


def write_error(reason: str, refs: tuple[str, str], path: Path) -> Path:
    """The pull-request comment of a comparison that could not be made, saying why."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"### tracegrade compare: ❌ could not compare\n\n`{refs[0]}` vs `{refs[1]}`: {reason}\n",
                    encoding="utf-8")
    return path
