"""A Markdown summary for a pull-request comment.

Every text that came from a run (case ids, check details, agent and judge
reasons, model and dataset names) is escaped: it is agent-controlled, and a
pull-request comment renders HTML and Markdown (a tool named
``<img src=x onerror=...>``, an answer with ``![](https://tracker/...)``).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from tracegrade.core.results import Run
from tracegrade.eval.verdict import failing_metrics
from tracegrade.stats.summary import score_averages, status_counts


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|!~])")


def text(value: object) -> str:
    """``value`` as inert Markdown text on one line: HTML escaped, Markdown syntax backslash-escaped."""
    flat = " ".join(str(value).split())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(flat, quote=False))


def code(value: object) -> str:
    """``value`` in a code span: no Markdown or HTML renders inside one, but a backtick would end it."""
    return "`" + " ".join(str(value).split()).replace("`", "'") + "`"


def to_markdown(run: Run) -> str:
    m, results = run.manifest, run.results
    counts = status_counts(results)
    lines = [
        f"### tracegrade: {text(m.dataset)} (version {code(m.dataset_version)})",
        "",
        f"**{counts['pass']}/{len(results)} passed** · failed {counts['fail'] + counts['error']} · unscored {counts['unscored']}"
        f" · agent {code(m.agent_model)} · judge {code(m.judge_model or 'none')}",
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
            lines.append(f"| {code(r.case_id)} | {text(r.status)} | {text(why)} |")
    return "\n".join(lines) + "\n"


def write(run: Run, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_markdown(run), encoding="utf-8")
    return path
