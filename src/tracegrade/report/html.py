"""The HTML report: one self-contained file per run that opens from disk, offline.

    >>> from tracegrade.core.results import CaseResult, Manifest, Run
    >>> m = Manifest("r1", "demo.json", "abc", 1, "shopnest", "m", None, None)
    >>> "r1" in to_html(Run(m, (CaseResult("c1", "pass"),)))
    True

Summary, score distributions per metric (inline SVG), and a table of cases
filterable by split and status; a click on a case opens its trace, checks,
scores and the judge's reason. Free text is redacted on the way out: a report
is an export of traces like any other.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Iterable
from html import escape
from pathlib import Path

from tracegrade.core.redact import redact
from tracegrade.report import svg
from tracegrade.report.htmlpage import card, page
from tracegrade.outputs.labels import dataset_label
from tracegrade.core.results import CaseResult, MetricScore, Run
from tracegrade.core.verdict import failing_metrics
from tracegrade.stats.aggregate import latency
from tracegrade.stats.summary import metric_names, pass_rate, score_averages, status_counts
from tracegrade.core.trace import Reply

STATUSES = ("pass", "fail", "error", "unscored")

_SCRIPT = """
const rows = Array.from(document.querySelectorAll('tr.case'));
function applyFilters() {
  const split = document.getElementById('split').value, status = document.getElementById('status').value;
  const text = document.getElementById('search').value.toLowerCase();
  let shown = 0;
  for (const row of rows) {
    const ok = (!split || row.dataset.split === split) && (!status || row.dataset.status === status)
      && (!text || row.textContent.toLowerCase().includes(text));
    row.hidden = !ok; if (!ok) row.nextElementSibling.hidden = true; shown += ok;
  }
  document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' cases shown';
}
for (const id of ['split', 'status', 'search']) document.getElementById(id).addEventListener('input', applyFilters);
for (const row of rows) row.addEventListener('click', () => { row.nextElementSibling.hidden = !row.nextElementSibling.hidden; });
applyFilters();
"""


def to_html(run: Run) -> str:
    m = run.manifest
    header = escape(f"run {m.run_id} · dataset {dataset_label(m)} (version {m.dataset_version}) · agent {m.agent_model} · "
                    f"judge {m.judge_model or 'none (checks only)'} · prompt {m.prompt_version or '-'} · "
                    f"commit {m.git_commit or '-'} · {m.started_at} → {m.ended_at}")
    body = _summary(run) + _distributions(run.results) + _cases(run.results)
    return page(f"tracegrade report: {m.dataset}", body, _SCRIPT, header)


def write(run: Run, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_html(run), encoding="utf-8")
    return path


def _summary(run: Run) -> str:
    results = run.results
    counts = status_counts(results)
    tokens_in = sum(r.agent_tokens[0] + r.judge_tokens[0] for r in results)
    tokens_out = sum(r.agent_tokens[1] + r.judge_tokens[1] for r in results)
    cost = sum(r.agent_cost_usd + r.judge_cost_usd for r in results)
    cards = [
        card("cases", str(len(results))),
        card("passed", str(counts["pass"]), "pass"),
        card("failed", str(counts["fail"]), "fail"),
        card("errors", str(counts["error"]), "error"),
        card("unscored", str(counts["unscored"]), "unscored"),
        card("pass rate", f"{pass_rate(results):.0%}"),
        card("tokens in / out", f"{tokens_in} / {tokens_out}"),
        card("cost", f"${cost:.4f}"),
        card("agent + judge time", f"{sum(r.seconds for r in results):.1f} s"),
        *(card(f"latency {q}", f"{seconds:.2f} s") for q, seconds in latency(results).items()),
    ]
    averages = score_averages(results)
    cards += [card(f"avg {metric}", f"{value:.2f}") for metric, value in averages.items()]
    return f'<section id="summary"><h2>Summary</h2><div class="cards">{"".join(cards)}</div></section>'


def _distributions(results: tuple[CaseResult, ...]) -> str:
    scored = [r for r in results if r.scores]
    if not scored:
        return '<section id="scores"><h2>Score distributions</h2><p class="muted">No judge scores in this run.</p></section>'
    charts = [svg.bars(_bins(metric, scored), title=metric) for metric in metric_names(results)]
    return f'<section id="scores"><h2>Score distributions ({len(scored)} scored cases)</h2><div class="charts">{"".join(charts)}</div></section>'


def _bins(metric: str, results: list[CaseResult]) -> list[tuple[str, int]]:
    """A 1..5 scale by its integers; a probability or share (0..1) in five bins."""
    ranges = {(m.low, m.high) for r in results for m in r.metrics if m.name == metric}
    values = [r.scores[metric] for r in results if r.scores and metric in r.scores]
    if ranges == {(0.0, 1.0)}:
        edges = [0.2, 0.4, 0.6, 0.8]
        counts = Counter(sum(v >= e for e in edges) for v in values)
        labels = ("0-.2", ".2-.4", ".4-.6", ".6-.8", ".8-1")
        return [(label, counts.get(i, 0)) for i, label in enumerate(labels)]
    counts = Counter(round(v) for v in values)
    return [(str(v), counts.get(v, 0)) for v in range(1, 6)]


def _cases(results: tuple[CaseResult, ...]) -> str:
    splits = sorted({r.split for r in results if r.split})
    def options(values: Iterable[str]) -> str:
        return "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)

    filters = (
        '<div class="filters"><label>split <select id="split"><option value="">all</option>'
        f"{options(splits)}</select></label>"
        f'<label>status <select id="status"><option value="">all</option>{options(STATUSES)}</select></label>'
        '<label>search <input id="search" type="search" placeholder="id, question, check"></label>'
        '<span id="shown" class="muted"></span></div>'
    )
    head = "<tr><th>case</th><th>split</th><th>category</th><th>status</th><th>failed checks</th>" \
           "<th>judge</th><th>seconds</th></tr>"
    rows = "".join(_case_row(r) + _case_detail(r) for r in results)
    return f'<section id="cases"><h2>Cases</h2>{filters}<table>{head}{rows}</table></section>'


def _case_row(r: CaseResult) -> str:
    failed = ", ".join(c.name for c in r.failed_checks()) or "-"
    low = failing_metrics(r.metrics)
    lowest = escape(", ".join(m.name for m in low)) if low else ("ok" if r.scores else "-")
    repeat = f" #{r.repeat + 1}" if r.repeat else ""
    return (f'<tr class="case" data-split="{escape(r.split)}" data-status="{escape(r.status)}">'
            f"<td>{escape(r.case_id + repeat)}</td><td>{escape(r.split)}</td><td>{escape(r.category)}</td>"
            f'<td class="status {escape(r.status)}">{escape(r.status)}</td><td>{escape(failed)}</td>'
            f"<td>{lowest}</td><td>{r.seconds:.2f}</td></tr>")


def _case_detail(r: CaseResult) -> str:
    parts = [f"<h3>Question</h3><pre>{_text(r.question)}</pre>"]
    if r.reply is not None:
        parts.append(f"<h3>Answer</h3><pre>{_text(r.reply.answer)}</pre>")
        parts.append(_trace(r.reply))
    if r.checks:
        items = "".join(
            f'<tr><td>{escape(c.name)}</td><td class="status {"pass" if c.passed else "fail"}">{"pass" if c.passed else "fail"}</td>'
            f"<td>{escape(c.code)}</td><td>{_text(c.detail)}</td></tr>" for c in r.checks)
        parts.append(f"<h3>Checks</h3><table><tr><th>check</th><th>result</th><th>code</th><th>detail</th></tr>{items}</table>")
    if r.metrics:
        parts.append(_metric_table(r.metrics))
    elif r.scores:  # stored before metrics carried their source
        parts.append("<h3>Scores</h3><p>" + " · ".join(f"{escape(m)} <b>{v:g}</b>" for m, v in r.scores.items()) + "</p>")
    if r.judge_reason:
        parts.append(f"<h3>Judge reason</h3><pre>{_text(r.judge_reason)}</pre>")
    if r.error:
        parts.append(f'<h3>Error</h3><pre class="error">{_text(r.error)}</pre>')
    return f'<tr class="detail" hidden><td colspan="7">{"".join(parts)}</td></tr>'


def _metric_table(metrics: tuple[MetricScore, ...]) -> str:
    """Every judge metric with its value, source (probability, json, code), verdict and why."""
    rows = []
    for m in metrics:
        if m.scored:
            verdict = ("pass" if m.passed else "fail") if m.gates else "info"
            value = f"{m.value:.2f}"
        else:
            verdict, value = "unscored", "-"
        rows.append(f'<tr><td>{escape(m.name)}</td><td><b>{value}</b></td><td>{escape(m.source)}</td>'
                    f'<td class="status {verdict}">{"not scored" if verdict == "unscored" else verdict}</td>'
                    f"<td>&ge; {m.threshold:g}</td><td>{_text(m.detail)}</td></tr>")
    return ("<h3>Scores</h3><table><tr><th>metric</th><th>value</th><th>source</th><th>verdict</th>"
            f"<th>pass at</th><th>detail</th></tr>{''.join(rows)}</table>")


def _trace(reply: Reply) -> str:
    sources = ", ".join(f"{s} ({score:.2f})" for s, score in zip(reply.retrieved_sources, reply.retrieval_scores)) \
        or ", ".join(reply.retrieved_sources) or "none"
    calls = "".join(
        f"<tr><td>{escape(c.name)}</td><td>{_text(json.dumps(c.arguments, ensure_ascii=False))}</td>"
        f'<td class="status {"ok" if c.status == "ok" else "warn"}">{escape(c.status)}</td><td>{_text(c.result)}</td></tr>'
        for c in reply.tool_calls)
    total = max((s.start_ms + s.duration_ms for s in reply.steps), default=0) or 1
    steps = "".join(
        f"<tr><td>{escape(s.kind)}</td><td>{escape(s.name)}</td><td>{s.start_ms:.0f}</td><td>{s.duration_ms:.0f} ms "
        f'<span class="bar" style="margin-left:{200 * s.start_ms / total:.0f}px;width:{max(1, 200 * s.duration_ms / total):.0f}px"></span></td>'
        f"<td>{s.input_tokens} / {s.output_tokens}</td><td>{_text(s.error or '')}</td></tr>" for s in reply.steps)
    return (
        f"<h3>Trace</h3><p>model {escape(reply.model or '-')} · sources {escape(sources)} · "
        f"tokens {reply.usage.input_tokens} in / {reply.usage.output_tokens} out</p>"
        + (f"<details><summary>context the agent saw ({len(reply.context)} characters)</summary>"
           f"<pre>{_text(reply.context)}</pre></details>" if reply.context else "")
        + (f"<table><tr><th>tool</th><th>arguments</th><th>status</th><th>result</th></tr>{calls}</table>" if calls
           else "<p class=\"muted\">no tool calls</p>")
        + (f"<table><tr><th>step</th><th>name</th><th>start ms</th><th>duration</th><th>tokens in / out</th>"
           f"<th>error</th></tr>{steps}</table>" if steps else "")
    )


def _text(value: str) -> str:
    return escape(redact(value))
