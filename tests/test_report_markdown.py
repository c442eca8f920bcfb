"""summary.md, the pull-request comment: agent-controlled text stays text."""

from __future__ import annotations

from runs_support import result, run
from tracegrade.core.results import CheckResult
from tracegrade.report.markdown import to_markdown

HOSTILE_TOOL = "<img src=x onerror=alert(document.cookie)>"


def test_agent_controlled_html_and_markdown_are_escaped():
    check = CheckResult("expectedTool", False, detail=f"expected getOrderStatus, got {HOSTILE_TOOL}")
    bad = result("tool-01", "fail", checks=(check,))
    errored = result("rag-01`<b>x</b>", "error")
    errored = type(errored)(**{**errored.__dict__, "error": "agent said ![t](https://tracker.example/p.png) | col\nnew row"})
    markdown = to_markdown(run([bad, errored]))
    assert "<img" not in markdown
    assert "&lt;img src=x onerror=alert(document.cookie)&gt;" in markdown
    assert "![t](" not in markdown and "\\!\\[t\\](" in markdown
    # One table row per case: a newline or a pipe in the text cannot add a row or a column.
    rows = [line for line in markdown.splitlines() if line.startswith("| `")]
    assert len(rows) == 2 and all(row.count(" | ") == 2 for row in rows)
    assert "`rag-01'<b>x</b>`" in markdown  # inside a code span, where nothing renders
