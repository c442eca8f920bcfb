"""The one page shell the HTML report and the monitor share: inline CSS, no network.

    >>> "<title>run 1</title>" in page("run 1", "<p>hi</p>")
    True
"""

from __future__ import annotations

from html import escape

CSS = """
:root { --fg:#111827; --muted:#6b7280; --line:#e5e7eb; --ok:#15803d; --bad:#b91c1c; --warn:#b45309; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", system-ui, sans-serif; color: var(--fg); margin: 0; background: #f9fafb; }
header { background: #111827; color: #f9fafb; padding: 14px 24px; }
header h1 { font-size: 18px; margin: 0 0 4px; }
header .meta { color: #d1d5db; font-size: 12px; }
main { padding: 16px 24px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin-bottom: 16px; }
h2 { font-size: 15px; margin: 0 0 10px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 120px; background: #fff; }
.card .label { color: var(--muted); font-size: 12px; }
.card .value { font-size: 20px; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
svg.chart { background: #fff; font-size: 11px; }
svg.chart text.muted { fill: var(--muted); }
svg.chart text.v { fill: var(--fg); font-weight: 600; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
tr.case { cursor: pointer; }
tr.case:hover { background: #f3f4f6; }
.status { font-weight: 600; text-transform: uppercase; font-size: 12px; }
.pass, .ok { color: var(--ok); } .fail, .error { color: var(--bad); } .unscored, .warn { color: var(--warn); }
.detail td { background: #f9fafb; }
.detail h3 { font-size: 13px; margin: 8px 0 4px; }
pre { white-space: pre-wrap; word-break: break-word; background: #f3f4f6; padding: 6px 8px; border-radius: 4px; margin: 0; }
.filters { display: flex; gap: 12px; align-items: center; margin-bottom: 8px; flex-wrap: wrap; }
select, input, button { font: inherit; padding: 3px 6px; }
.muted { color: var(--muted); }
.bar { height: 10px; background: #2563eb; display: inline-block; vertical-align: middle; }
"""


def page(title: str, body: str, script: str = "", header: str = "") -> str:
    """A complete HTML document; ``script`` runs inline at the end of the body."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{escape(title)}</h1><div class=\"meta\">{header}</div></header>"
        f"<main>{body}</main>"
        + (f"<script>{script}</script>" if script else "")
        + "</body></html>\n"
    )


def card(label: str, value: str, cls: str = "") -> str:
    extra = f" {cls}" if cls else ""
    return (f'<div class="card"><div class="label">{escape(label)}</div>'
            f'<div class="value{extra}">{escape(value)}</div></div>')
