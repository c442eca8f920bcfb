"""The dashboard page: server-rendered HTML with inline SVG charts and a little JS.

    >>> from tracegrade.view.monitor.metrics import Filters
    >>> "requests" in render([], {}, Filters(), versions=[], models=[], store="spans.db")
    True
"""

from __future__ import annotations

import datetime as dt
from html import escape
from typing import Mapping, Sequence

from tracegrade.view.monitor.metrics import Filters, RequestTrace, Summary, judged_scores, over_time, summarize
from tracegrade.report import svg
from tracegrade.report.htmlpage import card, page
from tracegrade.observe.spanstore import Judgement

WINDOWS = (("all time", 0), ("last hour", 3600), ("last 24 h", 86400), ("last 7 days", 7 * 86400))
RECENT = 50

_SCRIPT = """
async function goldenCase(traceId) {
  const response = await fetch('api/traces/' + traceId + '/golden-case', {method: 'POST'});
  const text = JSON.stringify(await response.json(), null, 2);
  const box = document.getElementById('golden');
  box.hidden = false;
  document.getElementById('golden-json').textContent = text;
  const link = document.getElementById('golden-download');
  link.href = URL.createObjectURL(new Blob([text], {type: 'application/json'}));
  link.download = 'golden-case-' + traceId.slice(0, 12) + '.json';
  box.scrollIntoView();
}
for (const row of document.querySelectorAll('tr.trace'))
  row.querySelector('.view').addEventListener('click', () => { row.nextElementSibling.hidden = !row.nextElementSibling.hidden; });
for (const button of document.querySelectorAll('button.golden'))
  button.addEventListener('click', () => goldenCase(button.dataset.trace));
setInterval(() => {
  if (document.getElementById('refresh').checked && document.getElementById('golden').hidden) location.reload();
}, 30000);
"""


def render(traces: Sequence[RequestTrace], judgements: Mapping[str, Judgement], filters: Filters,
           versions: Sequence[str], models: Sequence[str], store: str, judge_note: str = "") -> str:
    """The whole page for the traces that passed ``filters``."""
    summary = summarize(traces, judgements)
    header = escape(f"span store {store} · {summary.requests} requests shown · {judge_note}")
    body = (_filters(filters, versions, models) + _cards(summary) + _charts(traces, judgements, summary)
            + _golden_box() + _recent(traces, judgements))
    return page("tracegrade monitor", body, _SCRIPT, header)


def _filters(filters: Filters, versions: Sequence[str], models: Sequence[str]) -> str:
    def select(name: str, label: str, options: Sequence[tuple[str, str]], current: str) -> str:
        items = "".join(f'<option value="{escape(v)}"{" selected" if v == current else ""}>{escape(t)}</option>'
                        for t, v in options)
        return f'<label>{label} <select name="{name}">{items}</select></label>'

    return (
        '<section><form class="filters" method="get">'
        + select("prompt_version", "prompt version", [("all", "")] + [(v, v) for v in versions], filters.prompt_version)
        + select("model", "model", [("all", "")] + [(m, m) for m in models], filters.model)
        + select("window", "window", [(t, str(s)) for t, s in WINDOWS], str(filters.window_s))
        + '<button type="submit">apply</button>'
        '<label><input type="checkbox" id="refresh" checked> refresh every 30 s</label></form></section>'
    )


def _cards(s: Summary) -> str:
    quality = f"{s.quality:.2f}" if s.quality is not None else "-"
    cards = [
        card("requests", str(s.requests)),
        card("task success", f"{s.success_rate:.0%}", "pass"),
        card("error rate", f"{s.error_rate:.0%}", "fail" if s.error_rate else ""),
        card("latency p50", _ms(s.p50_ms)),
        card("latency p95", _ms(s.p95_ms)),
        card("latency p99", _ms(s.p99_ms)),
        card("avg steps", f"{s.avg_steps:.1f}"),
        card("duplicate-call rate", f"{s.duplicate_rate:.0%}"),
        card("tokens in / out", f"{s.input_tokens} / {s.output_tokens}"),
        card("spend", f"${s.spend_usd:.4f}"),
        card("denied", str(s.denied)),
        card("forbidden tool", str(s.forbidden)),
        card("injection flagged", str(s.injection)),
        card("approvals asked / confirmed", f"{s.approvals_asked} / {s.approvals_confirmed}"),
        card("judged / quality", f"{s.judged} / {quality}"),
    ]
    return f'<section id="summary"><h2>Production</h2><div class="cards">{"".join(cards)}</div></section>'


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 10_000 else f"{value:.0f} ms"


def _charts(traces: Sequence[RequestTrace], judgements: Mapping[str, Judgement], s: Summary) -> str:
    t = over_time(traces, judgements)
    charts = [
        svg.bars(list(zip(t.labels, t.volume)), title="request volume", width=520, height=180),
        svg.lines(t.labels, [("success %", t.success), ("error %", t.errors)], title="task success and errors",
                  unit="%", y_max=100),
        svg.lines(t.labels, [("p50", t.p50), ("p95", t.p95), ("p99", t.p99)], title="latency", unit=" ms"),
        svg.lines(t.labels, [("mean judge score", t.quality)], title="quality (sampled online judge)", y_max=5),
        svg.hbars(list(s.tool_failures.items()), title="failed tool calls by tool"),
        svg.hbars(list(s.provider_failures.items()), title="failed requests by model provider"),
    ]
    return f'<section id="charts"><h2>Over time</h2><div class="charts">{"".join(charts)}</div></section>'


def _golden_box() -> str:
    return ('<section id="golden" hidden><h2>Golden case draft</h2><p class="muted">Redacted. Fill in the fields '
            'under <code>toFill</code>, then add <code>case</code> to a dataset.</p>'
            '<p><a id="golden-download" href="#">download JSON</a></p><pre id="golden-json"></pre></section>')


def _recent(traces: Sequence[RequestTrace], judgements: Mapping[str, Judgement]) -> str:
    scores = judged_scores(traces, judgements)
    head = ("<tr><th>time (UTC)</th><th>question</th><th>status</th><th>latency</th><th>tools</th>"
            "<th>model</th><th>prompt</th><th>judge</th><th></th></tr>")
    rows = "".join(_trace_row(t, scores.get(t.trace_id)) for t in list(reversed(traces))[:RECENT])
    return f'<section id="traces"><h2>Recent requests</h2><table>{head}{rows}</table></section>'


def _trace_row(t: RequestTrace, score: float | None) -> str:
    when = dt.datetime.fromtimestamp(t.start_ns / 1e9, dt.timezone.utc).strftime("%m-%d %H:%M:%S")
    tools = ", ".join(f"{n} [{s}]" for n, s in t.tool_calls) or "-"
    status = "ok" if t.succeeded else ("error" if t.status == "error" else "warn")
    label = t.error_type if t.status == "error" else ("tool failed" if status == "warn" else "ok")
    judge = f"{score:.1f}" if score is not None else "-"
    calls = "\n".join(f"{n} {args} [{s}]" for (n, s), args in zip(t.tool_calls, t.tool_arguments))
    detail = (f"<p><b>answer</b></p><pre>{escape(t.answer or '-')}</pre>"
              + (f"<p><b>tool calls</b></p><pre>{escape(calls)}</pre>" if calls else "")
              + f"<p class=\"muted\">trace {t.trace_id} · "
              f"customer {escape(t.customer or '-')} · provider {escape(t.provider)} · tokens {t.input_tokens} / "
              f"{t.output_tokens} · steps {t.steps}</p>")
    return (
        f'<tr class="trace" data-trace="{t.trace_id}"><td>{when}</td><td>{escape(t.question[:90])}</td>'
        f'<td class="status {status}">{escape(label)}</td><td>{_ms(t.latency_ms)}</td><td>{escape(tools)}</td>'
        f"<td>{escape(t.model)}</td><td>{escape(t.prompt_version)}</td><td>{judge}</td>"
        f'<td><button class="view" type="button">view</button> '
        f'<button class="golden" type="button" data-trace="{t.trace_id}">golden case</button></td></tr>'
        f'<tr class="detail" hidden><td colspan="9">{detail}</td></tr>'
    )
