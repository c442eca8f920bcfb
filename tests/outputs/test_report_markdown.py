"""summary.md, the pull-request comment: agent-controlled text stays text."""

from __future__ import annotations

import pytest

from runs_support import result, run
from tracegrade.core.results import CheckResult
from tracegrade.outputs.markdown import to_markdown

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


def rendered(markdown: str) -> str:
    """summary.md as a previewer shows it: GitHub-flavoured tables, raw HTML on."""
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


@pytest.mark.parametrize("case_id", [
    "a|<img src=x onerror=alert(1)>|b",
    "a\\|<img src=x onerror=alert(1)>|b",  # a backslash before the pipe: some renderers read \\| as an escape
    "a`|<img src=x onerror=alert(1)>|`b",
])
def test_a_pipe_in_a_case_id_stays_in_its_code_span_and_its_cell(case_id):
    html = rendered(to_markdown(run([result(case_id, "error")])))
    assert "<img" not in html, html
    [row] = [r for r in html.split("<tr>") if "onerror" in r]
    assert row.count("<td>") == 3 and row.count("<code>") == 1, row


def test_a_metric_name_in_the_scores_table_is_escaped():
    scored = result("c-1", "fail", score={"x|<img src=x onerror=alert(1)>": 4})
    html = rendered(to_markdown(run([scored])))
    assert "<img" not in html, html
