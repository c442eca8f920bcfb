"""A run's page: its manifest, its counts, and its cases a page at a time,
filtered (failed only, by status, by check code, by split, by text).

The filters are a plain GET form, so every filtered page is a link."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from tracegrade.report.htmlpage import card
from tracegrade.outputs.labels import dataset_label
from tracegrade.store.runstore import RunInfo
from tracegrade.view.caseindex import FAILED, STATUSES, CaseIndex, CaseRow, Filters, Page, preview
from tracegrade.view.runs_page import cost_of
from tracegrade.view.shell import (case_url, compare_url, e, layout, money, options, run_url, section, status_cell,
                                   table, with_query)

PAGE_SIZE = 50
GROUPS_SHOWN = 50  # per dimension
HEADERS = ("case", "status", "split", "category", "risk", "failed checks (code)", "below threshold", "scores",
           "seconds", "question")


def render(info: RunInfo, index: CaseIndex, filters: Filters, page: Page, previous: str | None) -> str:
    m = info.manifest
    meta = (f"dataset {dataset_label(m)} (version {m.dataset_version}) · agent {m.agent_model} · "
            f"judge {m.judge_model or 'none (checks only)'} · prompt {m.prompt_version or '-'} · "
            f"commit {m.git_commit or '-'} · {info.started_at} → {info.ended_at or '(not finished)'} · {info.status}")
    links = [f'<a href="{e(run_url(info.run_id))}/metrics">component metrics and stratified table</a>',
             f'<a href="{e(run_url(info.run_id))}/results.json">results JSON</a>',
             f'<a href="{e(run_url(info.run_id))}/junit.xml">JUnit</a>',
             f'<a href="{e(run_url(info.run_id))}/summary.md">summary</a>',
             f'<a href="{e(run_url(info.run_id))}/label" id="label-queue">label answers</a>',
             f'<a href="{e(with_query("/labels.json", {"run": info.run_id}))}">labels JSON</a>']
    if previous:
        links.append(f'<a href="{e(compare_url(previous, info.run_id))}">compare with the previous run on this dataset</a>')
    body = (f'<p class="muted">{e(meta)}</p><p>{" · ".join(links)}</p>' + _summary(info, index)
            + _groups(info.run_id, index)
            + section("Cases", _form(index, filters) + _cases(info.run_id, page) + _pager(info.run_id, filters, page),
                      "cases"))
    return layout(f"Run {info.run_id}", body, crumbs=[("runs", "/"), (info.run_id, run_url(info.run_id))])


def _summary(info: RunInfo, index: CaseIndex) -> str:
    counts = index.statuses
    total = len(index.rows)
    cards = [("cases", str(total)), ("passed", str(counts.get("pass", 0))),
             ("pass rate", f"{counts.get('pass', 0) / total:.0%}" if total else "-"),
             ("failed", str(counts.get("fail", 0))), ("unscored", str(counts.get("unscored", 0))),
             ("errors", str(counts.get("error", 0))), ("cost", money(cost_of(info)))]
    return section("Summary", f'<div class="cards">{"".join(card(k, v) for k, v in cards)}</div>', "summary")


def _groups(run_id: str, index: CaseIndex) -> str:
    """Pass rate per split, category and risk: the first columns of the stratified table,
    from the index (the full table: the metrics page)."""
    rows, per_dimension = [], Counter[str]()
    for dimension, name, n, passed in index.groups:
        per_dimension[dimension] += 1
        if per_dimension[dimension] > GROUPS_SHOWN:  # a dataset with a category per case is a list, not groups
            continue
        label = e(name)
        if dimension == "split" and name != "-":
            label = f'<a href="{e(with_query(run_url(run_id), {"split": name}))}">{label}</a>'
        rows.append(f'<tr><td>{dimension}</td><td>{label}</td><td class="num">{n}</td>'
                    f'<td class="num">{passed}</td><td class="num">{passed / n:.0%}</td></tr>')
    if not rows:
        return ""
    cut = "".join(f"<p class=\"muted\">{e(d)}: {n - GROUPS_SHOWN} more groups not shown</p>"
                  for d, n in per_dimension.items() if n > GROUPS_SHOWN)
    content = cut + table(("dimension", "group", "cases", "passed", "pass rate"), rows, "groups-table")
    return f'<section id="groups"><details><summary><b>Groups</b> (pass rate per split, category, risk)</summary>' \
           f"{content}</details></section>"


def _form(index: CaseIndex, filters: Filters) -> str:
    statuses = [("", "all"), (FAILED, "failed (not passed)"), *((s, f"{s} ({index.statuses.get(s, 0)})")
                                                              for s in STATUSES)]
    splits = [("", "all"), *((s, s) for s in index.splits)]
    codes = [("", "all"), *((c, f"{c} ({n})") for c, n in index.codes.items())]
    return ('<form class="filters" method="get">'
            + _select("status", statuses, filters.status) + _select("split", splits, filters.split)
            + _select("code", codes, filters.code)
            + f'<label>search <input type="search" name="q" value="{e(filters.text)}" placeholder="id or question" '
            'maxlength="200"></label><button type="submit">apply</button>'
            + (' <a href="?">clear</a>' if filters.active else "") + "</form>")


def _select(name: str, choices: Sequence[tuple[str, str]], current: str) -> str:
    label = "check code" if name == "code" else name
    return f'<label>{e(label)} <select name="{e(name)}">{options(choices, current)}</select></label>'


def _cases(run_id: str, page: Page) -> str:
    if not page.rows:
        return '<p class="muted" id="shown">no case matches these filters</p>'
    first = (page.number - 1) * page.size + 1
    shown = f'<p class="muted" id="shown">{first}–{first + len(page.rows) - 1} of {page.matching} cases</p>'
    return shown + table(HEADERS, (_row(run_id, r) for r in page.rows), "cases-table")


def _row(run_id: str, r: CaseRow) -> str:
    label = r.case_id + (f" #{r.repeat + 1}" if r.repeat else "")
    failed = ", ".join(f"{name} ({code})" for name, code in r.failed) or "-"
    scores = " ".join(f"{name} {value:g}" for name, value in r.scores.items()) or "-"
    return (f'<tr class="row case" data-status="{e(r.status)}"><td><a class="rowlink" '
            f'href="{e(case_url(run_id, r.case_id, r.repeat))}">{e(label)}</a></td>{status_cell(r.status)}'
            f"<td>{e(r.split)}</td><td>{e(r.category)}</td><td>{e(r.risk)}</td><td>{e(failed)}</td>"
            f"<td>{e(', '.join(r.low) or '-')}</td>"
            f'<td>{e(scores)}</td><td class="num">{r.seconds:.2f}</td><td>{e(preview(r.question))}</td></tr>')


def _pager(run_id: str, filters: Filters, page: Page) -> str:
    if page.pages == 1:
        return ""
    params = {"status": filters.status, "split": filters.split, "code": filters.code, "q": filters.text}

    def link(number: int, text: str, rel: str) -> str:
        return f'<a rel="{rel}" href="{e(with_query(run_url(run_id), {**params, "page": number}))}">{text}</a>'

    parts = [link(1, "first", "first") if page.number > 2 else "",
             link(page.number - 1, "previous", "prev") if page.number > 1 else "",
             f"<span>page {page.number} of {page.pages}</span>",
             link(page.number + 1, "next", "next") if page.number < page.pages else "",
             link(page.pages, "last", "last") if page.number < page.pages - 1 else ""]
    return f'<div class="pager">{"".join(parts)}</div>'
