"""The landing page: every run in the store, newest first, filtered and sorted,
each linked to its cases, and a form to compare any two.

    >>> "no runs" in render([], 0, [], {}, RunFilters(), 1, 1, "sqlite:///x.db")
    True
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Mapping, Sequence

from tracegrade.store.runstore import RunInfo
from tracegrade.view.shell import (e, layout, money, options, run_url, seconds, section, status_cell, table,
                                   with_query)

PAGE_SIZE = 50
SORTS = {  # name -> (label, key over a run); "newest" is the store's own order
    "newest": ("newest first", None),
    "pass": ("pass rate, lowest first", lambda i: (rate if (rate := recorded_pass_rate(i)) is not None else 2.0)),
    "cost": ("cost, highest first", lambda i: -(cost_of(i) or 0.0)),
}
HEADERS = ("baseline", "candidate", "run", "started (UTC)", "dataset", "version", "agent", "judge", "prompt",
           "cases", "passed", "pass rate", "failed", "unscored", "errors", "cost", "duration", "status")


@dataclass(frozen=True)
class RunFilters:
    dataset: str = ""
    status: str = ""  # running | finished | stopped
    sort: str = "newest"
    page: int = 1


def recorded_pass_rate(info: RunInfo) -> float | None:
    """The pass rate the run recorded at its end (None while it runs)."""
    totals = info.manifest.totals
    return totals["passed"] / totals["cases"] if totals.get("cases") else None


def cost_of(info: RunInfo) -> float | None:
    spent = info.manifest.totals.get("costUsd")
    return float(spent["totalUsd"]) if isinstance(spent, Mapping) and "totalUsd" in spent else None


def duration_of(info: RunInfo) -> float | None:
    try:
        start, end = dt.datetime.fromisoformat(info.started_at), dt.datetime.fromisoformat(info.ended_at)
    except ValueError:
        return None
    return (end - start).total_seconds()


def chosen(infos: Sequence[RunInfo], filters: RunFilters) -> list[RunInfo]:
    """The runs the filters keep, in the order asked for. WHY sorted on what the
    manifest recorded: counting every run's cases by status reads every stored case."""
    kept = [i for i in infos if (not filters.dataset or i.dataset == filters.dataset)
            and (not filters.status or i.status == filters.status)]
    key = SORTS.get(filters.sort, SORTS["newest"])[1]
    return sorted(kept, key=key) if key else kept


def render(infos: Sequence[RunInfo], kept: int, shown: Sequence[RunInfo], counts: Mapping[str, Mapping[str, int]],
           filters: RunFilters, number: int, pages: int, store_url: str) -> str:
    """``infos``: every run read; ``kept`` of them pass the filters; ``shown``: this page's,
    with ``counts`` (status -> cases) for each."""
    if not infos:
        body = section("Runs", f"<p>no runs in {e(store_url)} yet: <code>tracegrade run</code> records them here.</p>")
        return layout("Runs", body, here="/")
    body = (f'<p class="muted">store {e(store_url)} · {kept} of {len(infos)} runs shown</p>'
            + _filter_form(infos, filters)
            + section("Runs", _compare_form(shown, counts) + _pager(filters, number, pages), "runs"))
    return layout("Runs", body, here="/")


def _filter_form(infos: Sequence[RunInfo], filters: RunFilters) -> str:
    datasets = [(d, d or "all") for d in sorted({i.dataset for i in infos})]
    statuses = [(s, s) for s in ("finished", "running", "stopped", "failed")]
    sorts = options(((k, label) for k, (label, _) in SORTS.items()), filters.sort)
    return ('<form class="filters" method="get" action="/">'
            f'<label>dataset <select name="dataset">{options([("", "all"), *datasets], filters.dataset)}</select></label>'
            f'<label>status <select name="status">{options([("", "all"), *statuses], filters.status)}'
            f'</select></label><label>sort <select name="sort">{sorts}</select></label>'
            '<button type="submit">apply</button></form>')


def _compare_form(shown: Sequence[RunInfo], counts: Mapping[str, Mapping[str, int]]) -> str:
    body = "".join(_row(info, counts.get(info.run_id, {}), first=i == 0, second=i == 1) for i, info in enumerate(shown))
    return ('<form method="get" action="/compare" id="compare-form">'
            + table(HEADERS, body, "runs-table")
            + '<p><button type="submit">compare the chosen baseline and candidate</button></p></form>')


def _row(info: RunInfo, counts: Mapping[str, int], first: bool, second: bool) -> str:
    m = info.manifest
    expected = m.case_count * int(m.settings.get("repeat", 1) or 1)
    done = sum(counts.values())
    rate = f"{counts.get('pass', 0) / done:.0%}" if done else "-"
    rid = e(info.run_id)
    # The newest run is the candidate and the one before it the baseline, as `tracegrade compare previous latest`.
    return (f'<tr class="row"><td><input type="radio" name="baseline" value="{rid}" aria-label="baseline {rid}"'
            f'{" checked" if second else ""}></td>'
            f'<td><input type="radio" name="candidate" value="{rid}" aria-label="candidate {rid}"'
            f'{" checked" if first else ""}></td>'
            f'<td><a class="rowlink" href="{e(run_url(info.run_id))}">{rid}</a></td>'
            f"<td>{e(info.started_at.replace('+00:00', '').replace('T', ' ')[:19])}</td><td>{e(info.dataset)}</td>"
            f"<td>{e(info.dataset_version[:12])}</td><td>{e(m.agent_model)}</td><td>{e(m.judge_model or '-')}</td>"
            f"<td>{e(m.prompt_version or '-')}</td><td class=\"num\">{info.cases_done}/{expected}</td>"
            f"<td class=\"num\">{counts.get('pass', 0)}</td><td class=\"num\">{rate}</td>"
            f"<td class=\"num\">{counts.get('fail', 0)}</td><td class=\"num\">{counts.get('unscored', 0)}</td>"
            f"<td class=\"num\">{counts.get('error', 0)}</td><td class=\"num\">{money(cost_of(info))}</td>"
            f"<td class=\"num\">{seconds(duration_of(info))}</td>{status_cell(info.status)}</tr>")


def _pager(filters: RunFilters, number: int, pages: int) -> str:
    if pages == 1:
        return ""
    params = {"dataset": filters.dataset, "status": filters.status, "sort": filters.sort}
    prev = (f'<a rel="prev" href="{e(with_query("/", {**params, "page": number - 1}))}">previous</a>'
            if number > 1 else "")
    nxt = (f'<a rel="next" href="{e(with_query("/", {**params, "page": number + 1}))}">next</a>'
           if number < pages else "")
    return f'<div class="pager">{prev}<span>page {number} of {pages}</span>{nxt}</div>'
