"""Compare two runs: the gate's verdict and findings, every metric with its paired
statistics, the groups, the regressions and improvements, and per case a
side-by-side diff of the tool calls and the answers.

The numbers are ``tracegrade compare``'s own (compare.comparison, compare.gate,
report.compare_table's cells): the page lays them out, it computes nothing."""

from __future__ import annotations

import difflib
import itertools
import json
import textwrap
from typing import Sequence

from tracegrade.compare.comparison import Comparison
from tracegrade.compare.gate import Verdict
from tracegrade.core.results import CaseResult
from tracegrade.core.trace import ToolCall
from tracegrade.report import compare_table as cells
from tracegrade.store.runstore import RunInfo
from tracegrade.view.shell import (case_url, compare_url, diff_url, e, layout, options, run_url, seconds, section,
                                   status_cell, table)

DIFF_CHARS = 20_000  # of each answer: difflib's work grows faster than the text
DIFF_LINE = 100  # answers are one long line: wrapped before diffing so a change shows where it is


def chooser(infos: Sequence[RunInfo], baseline: str, candidate: str, problem: str = "") -> str:
    """The form that picks two runs (and says why the last pick could not be compared)."""
    def select(name: str, current: str) -> str:
        labels = ((i.run_id, " · ".join((i.run_id, i.dataset, i.manifest.agent_model)
                                        + ((i.manifest.prompt_version,) if i.manifest.prompt_version else ())))
                  for i in infos)
        return f'<label>{name} <select name="{name}">{options(labels, current)}</select></label>'

    form = ('<form class="filters" method="get" action="/compare">' + select("baseline", baseline)
            + select("candidate", candidate)
            + '<label><input type="checkbox" name="allow_dataset_change" value="1"> allow a changed dataset</label>'
            '<button type="submit">compare</button></form>')
    error = f'<p class="error" id="problem">{e(for_the_form(problem))}</p>' if problem else ""
    return section("Choose two runs", form + error, "choose")


# WHY rewritten here: the comparison speaks to the command line; on this page the flag is the checkbox.
CLI_HINTS = {"pass --allow-dataset-change": 'tick "allow a changed dataset"'}


def for_the_form(problem: str) -> str:
    """``problem`` as this page's user acts on it: the form's control in place of a CLI flag."""
    for flag, control in CLI_HINTS.items():
        problem = problem.replace(flag, control)
    return problem


def render(comparison: Comparison, verdict: Verdict, alpha: float, form: str) -> str:
    c = comparison
    base, cand = c.baseline.run_id, c.candidate.run_id
    banner = (f'<p class="banner {e(verdict.level)}" id="verdict">{e(cells.verdict_line(verdict))}</p>'
              f"<p>baseline <a href=\"{e(run_url(base))}\">{e(cells.run_label(c.baseline))}</a><br>candidate "
              f"<a href=\"{e(run_url(cand))}\">{e(cells.run_label(c.candidate))}</a><br>"
              f"{len(c.case_ids)} cases compared · {e(cells.significance_sentence(c, alpha))}</p>"
              + "".join(f'<p class="muted">{e(note)}</p>' for note in c.notes))
    findings = (table(("level", "rule", "finding"), (f"<tr>{status_cell(_css(f.level))}<td>{e(f.rule)}</td>"
                                                      f"<td>{e(f.message)}</td></tr>" for f in verdict.findings),
                      "findings") if verdict.findings else "<p>none: every rule of the gate holds</p>")
    metrics = table(cells.METRIC_HEADERS, ("<tr>" + "".join(f"<td>{e(x)}</td>" for x in cells.metric_cells(row))
                                           + "</tr>" for row in c.metrics), "metrics")
    latency = ", ".join(f"{q} {seconds(b)} → {seconds(a)}" for q, (b, a) in c.latency.items())
    groups = table(cells.GROUP_HEADERS, ("<tr>" + "".join(f"<td>{e(x)}</td>" for x in cells.group_cells(g)) + "</tr>"
                                         for g in c.groups), "groups")
    body = (form + section("Verdict", banner, "summary") + section("Findings", findings)
            + section("Regressions: passed in the baseline, fail in the candidate", _cases(base, cand, c.newly_failing),
                      "regressions")
            + section("Improvements: failed in the baseline, pass in the candidate",
                      _cases(base, cand, c.newly_passing), "improvements")
            + section("Metrics", metrics + f"<p>latency {e(latency)}; cost per case ${c.cost_per_case[0]:.4f} → "
                      f"${c.cost_per_case[1]:.4f}</p>", "metric-table")
            + section("Groups", groups))
    return layout(f"Compare {base} → {cand}", body, crumbs=[("runs", "/"), ("compare", compare_url(base, cand))],
                  here="/compare")


def _css(level: str) -> str:
    return {"block": "fail", "warn": "warn"}.get(level, "pass")


def _cases(base: str, cand: str, ids: Sequence[str]) -> str:
    if not ids:
        return '<p class="muted">none</p>'
    rows = (f'<tr class="row"><td><a class="rowlink" href="{e(diff_url(base, cand, i))}">{e(i)}</a></td>'
            f'<td><a href="{e(case_url(base, i))}">in the baseline</a></td>'
            f'<td><a href="{e(case_url(cand, i))}">in the candidate</a></td></tr>' for i in ids)
    return table(("case (side-by-side diff)", "", ""), rows)


def render_diff(base: str, cand: str, case_id: str, before: CaseResult | None, after: CaseResult | None) -> str:
    """One case in two runs side by side: status and failed checks, tool calls row by row, the answers' diff."""
    heads = "".join(f"<div><h3>{e(label)} <a href=\"{e(case_url(rid, case_id))}\">{e(rid)}</a></h3>{_state(r)}</div>"
                    for label, rid, r in (("baseline", base, before), ("candidate", cand, after)))
    body = (section("Status", f'<div class="side">{heads}</div>', "status")
            + section("Tool calls", _calls(before, after), "tool-calls")
            + section("Answer", _answer_diff(before, after), "answer-diff"))
    return layout(f"{case_id}: {base} → {cand}", body, here="/compare",
                  crumbs=[("runs", "/"), ("compare", compare_url(base, cand)), (case_id, diff_url(base, cand, case_id))])


def _state(r: CaseResult | None) -> str:
    if r is None:
        return '<p class="muted">not in this run</p>'
    failed = ", ".join(f"{c.name} ({c.code})" for c in r.failed_checks()) or "none"
    scores = " · ".join(f"{k} {v:g}" for k, v in (r.scores or {}).items()) or "not judged"
    return f'<p><span class="status {e(r.status)}">{e(r.status)}</span> · failed checks: {e(failed)} · {e(scores)}</p>'


def _calls(before: CaseResult | None, after: CaseResult | None) -> str:
    left = list(before.reply.tool_calls) if before and before.reply else []
    right = list(after.reply.tool_calls) if after and after.reply else []
    if not left and not right:
        return '<p class="muted">no tool calls in either run</p>'
    pairs = itertools.zip_longest(map(_call_text, left), map(_call_text, right), fillvalue=_call_text(None))
    rows = (f'<tr class="{"same" if a == b else "changed"}"><td>{number}</td><td><pre>{e(a)}</pre></td>'
            f"<td><pre>{e(b)}</pre></td></tr>" for number, (a, b) in enumerate(pairs, start=1))
    return table(("#", "baseline", "candidate"), rows, "calls-diff")


def _call_text(c: ToolCall | None) -> str:
    if c is None:
        return "(no call)"
    return f"{c.name}({json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)}) [{c.status}]\n→ {c.result}"


def _answer_diff(before: CaseResult | None, after: CaseResult | None) -> str:
    texts = [(r.reply.answer if r and r.reply else "")[:DIFF_CHARS] for r in (before, after)]
    if texts[0] == texts[1]:
        return f'<p class="muted">the same answer in both runs</p><pre>{e(texts[0])}</pre>'
    lines = [_wrapped(t) for t in texts]
    # HtmlDiff escapes the text it lays out (&, <, >).
    return difflib.HtmlDiff(wrapcolumn=70).make_table(lines[0], lines[1], "baseline", "candidate", context=False)


def _wrapped(text: str) -> list[str]:
    return [piece for line in text.splitlines() or [""]
            for piece in (textwrap.wrap(line, DIFF_LINE) or [""])]
