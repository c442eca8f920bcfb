"""The frame every page of `tracegrade view` shares: navigation, breadcrumbs,
keyboard keys, and the small helpers pages build links and cells with.

    >>> "<nav" in layout("runs", "<p>hi</p>", crumbs=[("runs", "/")])
    True
    >>> run_url("2026/x y")
    '/runs/2026%2Fx%20y'

Everything a page puts in the HTML goes through ``html.escape`` (``e``) or is
built here from escaped parts; no page needs the network (inline CSS and JS).
"""

from __future__ import annotations

from html import escape
from typing import Iterable, Mapping, Sequence
from urllib.parse import quote, urlencode

from tracegrade.report.htmlpage import CSS

NAV = (("Runs", "/"), ("History", "/history"), ("Compare", "/compare"), ("Calibration", "/calibration"),
       ("Production", "/production/"))

VIEW_CSS = """
nav { display: flex; gap: 18px; align-items: baseline; background: #1f2937; padding: 8px 24px; }
nav a { color: #e5e7eb; text-decoration: none; font-weight: 600; }
nav a.here, nav a:hover, nav a:focus { color: #fff; text-decoration: underline; }
nav .keys { margin-left: auto; color: #9ca3af; font-size: 12px; }
.crumbs { font-size: 12px; color: #d1d5db; margin-bottom: 4px; }
.crumbs a { color: #bfdbfe; }
a { color: #1d4ed8; }
a:focus, tr:focus-within { outline: 2px solid #2563eb; outline-offset: -2px; }
tr.row:hover { background: #f3f4f6; }
.pager { display: flex; gap: 12px; align-items: center; margin-top: 8px; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.timeline { position: relative; height: 14px; background: #f3f4f6; border-radius: 3px; min-width: 240px; }
.timeline span { position: absolute; top: 2px; height: 10px; border-radius: 2px; }
.k-retrieval { background: #0891b2; } .k-model { background: #2563eb; } .k-tool { background: #d97706; }
.k-approval { background: #7c3aed; } .k-error { background: #dc2626; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.beside > div { min-width: 0; } .beside pre { white-space: pre-wrap; word-break: break-word; }
.changed { background: #fef3c7; }
table.diff td { font-family: monospace; font-size: 12px; white-space: pre-wrap; word-break: break-word; }
.diff_add { background: #dcfce7; } .diff_chg { background: #fef9c3; } .diff_sub { background: #fee2e2; }
.banner { font-size: 18px; font-weight: 700; }
button[aria-pressed="true"] { background: #1d4ed8; color: #fff; }
"""

# Keys: "/" to the first filter, j/k through the rows' links, Enter opens (native).
KEYS_JS = """
document.addEventListener('keydown', (event) => {
  const tag = (event.target.tagName || '').toLowerCase();
  if (['input', 'select', 'textarea'].includes(tag) || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === '/') {
    const first = document.querySelector('form.filters input, form.filters select');
    if (first) { event.preventDefault(); first.focus(); }
    return;
  }
  if (event.key !== 'j' && event.key !== 'k') return;
  const links = Array.from(document.querySelectorAll('a.rowlink'));
  if (!links.length) return;
  const at = links.indexOf(document.activeElement);
  const next = event.key === 'j' ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
  links[at < 0 ? 0 : next].focus();
  event.preventDefault();
});
"""


def e(value: object) -> str:
    """Escaped text for HTML content or a quoted attribute."""
    return escape(str(value), quote=True)


def layout(title: str, body: str, crumbs: Sequence[tuple[str, str]] = (), here: str = "/", script: str = "") -> str:
    """A complete page: the navigation, ``title`` with its breadcrumbs, then ``body``."""
    nav = nav_bar(here)
    trail = " / ".join(f'<a href="{e(href)}">{e(name)}</a>' for name, href in crumbs)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · tracegrade view</title><style>{CSS}{VIEW_CSS}</style></head><body>"
        f"{nav}"
        f'<header><div class="crumbs">{trail}</div><h1>{e(title)}</h1></header>'
        f"<main>{body}</main><script>{KEYS_JS}{script}</script></body></html>\n"
    )


def nav_bar(here: str) -> str:
    """The navigation bar; ``here``: the address of the section the page is in."""
    current = ' aria-current="page" class="here"'
    links = "".join(f'<a href="{e(href)}"{current if href == here else ""}>{e(name)}</a>' for name, href in NAV)
    return (f'<nav aria-label="main"><a href="/" class="brand">tracegrade view</a>{links}'
            '<span class="keys">keys: / filter · j k rows · Enter open</span></nav>')


def framing_nav(here: str) -> str:
    """The navigation bar with its own style, for a page this module did not lay out (the monitor's)."""
    styles = "".join(line for line in VIEW_CSS.splitlines(keepends=True) if line.startswith("nav"))
    return f"<style>{styles}</style>{nav_bar(here)}"


def run_url(run_id: str) -> str:
    return f"/runs/{quote(run_id, safe='')}"


def case_url(run_id: str, case_id: str, repeat: int = 0) -> str:
    suffix = f"?repeat={repeat}" if repeat else ""
    return f"{run_url(run_id)}/cases/{quote(case_id, safe='')}{suffix}"


def compare_url(baseline: str, candidate: str) -> str:
    return "/compare?" + urlencode({"baseline": baseline, "candidate": candidate})


def diff_url(baseline: str, candidate: str, case_id: str) -> str:
    return (f"/compare/{quote(baseline, safe='')}/{quote(candidate, safe='')}/cases/{quote(case_id, safe='')}")


def with_query(path: str, params: Mapping[str, object]) -> str:
    kept = {k: v for k, v in params.items() if v not in ("", None, 0)}
    return f"{path}?{urlencode(kept)}" if kept else path


def options(choices: Iterable[tuple[str, str]], current: str) -> str:
    """A select's ``<option>``s from (value, label) pairs, ``current`` selected."""
    return "".join(f'<option value="{e(value)}"{" selected" if value == current else ""}>{e(label)}</option>'
                   for value, label in choices)


def status_cell(status: str) -> str:
    return f'<td class="status {e(status)}">{e(status)}</td>'


def table(headers: Iterable[str], rows: Iterable[str], table_id: str = "") -> str:
    """A table of ready ``<tr>`` rows under escaped ``headers``."""
    ident = f' id="{e(table_id)}"' if table_id else ""
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def section(title: str, content: str, ident: str = "") -> str:
    attr = f' id="{e(ident)}"' if ident else ""
    return f"<section{attr}><h2>{e(title)}</h2>{content}</section>"


def money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def seconds(value: float | None) -> str:
    """A duration as people write it: "1 s", "1.25 s", "2.5 min".

        >>> seconds(1.0), seconds(1.254), seconds(150), seconds(None)
        ('1 s', '1.25 s', '2.5 min', '-')
    """
    if value is None:
        return "-"
    if value >= 120:
        return f"{value / 60:.1f} min"
    shown = f"{value:.2f}"
    return f"{shown.rstrip('0').rstrip('.')} s" if "." in shown else f"{shown} s"
