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
from typing import TextIO

from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.core.verdict import failing_metrics
from tracegrade.outputs import streamed
from tracegrade.outputs.labels import dataset_label
from tracegrade.stats.tally import RunTally


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|!~])")


def text(value: object) -> str:
    """``value`` as inert Markdown text on one line: HTML escaped, Markdown syntax backslash-escaped."""
    flat = " ".join(str(value).split())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(flat, quote=False))


def code(value: object) -> str:
    """``value`` in a code span: no Markdown or HTML renders inside one, but a backtick would end it."""
    return "`" + " ".join(str(value).split()).replace("`", "'") + "`"


_PIPE = re.compile(r"(\\*)\|")


def code_cell(value: object) -> str:
    """``value`` in a code span inside a table cell: as ``code``, each ``|`` escaped too
    (``text`` escapes it already).

    WHY: a table splits its cells before it reads code spans, so a ``|`` in a case id
    ended the span and the cell, and what followed rendered as HTML. WHY the
    backslashes before it doubled: renderers disagree on whether ``\\|`` escapes the
    pipe; with an odd count before it every one reads it as escaped."""
    return _PIPE.sub(lambda m: m.group(1) * 2 + "\\|", code(value))


def to_markdown(run: Run, summary: RunTally | None = None) -> str:
    return streamed.to_text(Writer, run, summary)


def write(run: Run, path: Path, summary: RunTally | None = None) -> Path:
    return streamed.to_file(Writer, run, path, summary)


class Writer:
    """The summary fed one case at a time (``add``: a table row per case that did
    not pass), written whole by ``finish``: the header from the run's tally, then the rows."""

    def __init__(self, manifest: Manifest) -> None:
        self._rows = streamed.Rows()

    def add(self, r: CaseResult) -> None:
        if r.passed:
            return
        why = ("; ".join(f"{c.name}: {c.detail}" for c in r.failed_checks())
               or "; ".join(f"{m.name} {m.value:.2f} < {m.threshold:g} ({m.source}) {m.detail}".strip()
                            for m in failing_metrics(r.metrics))
               or r.error or r.judge_reason)
        self._rows.write(f"| {code_cell(r.case_id)} | {text(r.status)} | {text(why)} |\n")

    def finish(self, ending: streamed.Ending, out: TextIO) -> None:
        m, summary = ending.manifest, ending.summary
        counts, cases = summary.statuses, summary.cases
        lines = [
            f"### tracegrade: {text(dataset_label(m))} (version {code(m.dataset_version)})",
            "",
            f"**{counts['pass']}/{cases} passed** · failed {counts['fail'] + counts['error']} · unscored {counts['unscored']}"
            f" · agent {code(m.agent_model)} · judge {code(m.judge_model or 'none')}",
            "",
        ]
        averages = summary.score_averages()
        if averages:
            lines += ["| " + " | ".join(text(name) for name in averages) + " |", "|" + "---:|" * len(averages),
                      "| " + " | ".join(f"{v:.2f}" for v in averages.values()) + " |", ""]
        if summary.passed < cases:
            lines += ["| case | status | why |", "|---|---|---|"]
        out.write("".join(line + "\n" for line in lines))
        self._rows.copy_to(out)
