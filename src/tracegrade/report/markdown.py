"""A Markdown summary for a pull-request comment."""

from __future__ import annotations

from pathlib import Path

from tracegrade.core.results import Run
from tracegrade.eval.verdict import failing_metrics
from tracegrade.stats.summary import score_averages, status_counts


def to_markdown(run: Run) -> str:
    m, results = run.manifest, run.results
    counts = status_counts(results)
    lines = [
        f"### tracegrade: {m.dataset} (version `{m.dataset_version}`)",
        "",
        f"**{counts['pass']}/{len(results)} passed** · failed {counts['fail'] + counts['error']} · unscored {counts['unscored']}"
        f" · agent `{m.agent_model}` · judge `{m.judge_model or 'none'}`",
        "",
    ]
    averages = score_averages(results)
    if averages:
        lines += ["| " + " | ".join(averages) + " |", "|" + "---:|" * len(averages),
                  "| " + " | ".join(f"{v:.2f}" for v in averages.values()) + " |", ""]
    problems = [r for r in results if not r.passed]
    if problems:
        lines += ["| case | status | why |", "|---|---|---|"]
        for r in problems:
            why = ("; ".join(f"{c.name}: {c.detail}" for c in r.failed_checks())
                   or "; ".join(f"{m.name} {m.value:.2f} < {m.threshold:g} ({m.source}) {m.detail}".strip()
                                for m in failing_metrics(r.metrics))
                   or r.error or r.judge_reason)
            lines.append(f"| `{r.case_id}` | {r.status} | {why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def write(run: Run, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_markdown(run), encoding="utf-8")
    return path
