"""A case's page: question and answer, every check and metric, the trace as a
timeline (each step placed on the request's clock, each tool call with its
arguments, result and status), the evidence the judge saw, and the same case
in the other runs.

Shown as stored: the store redacted the text before it wrote it."""

from __future__ import annotations

import json
import math
from typing import Iterator, Sequence

from tracegrade.core.results import CaseResult, CheckResult, MetricScore
from tracegrade.core.trace import Reply, Step, ToolCall
from tracegrade.view.shell import case_url, diff_url, e, layout, money, run_url, seconds, section, status_cell, table

ARGUMENT_CHARS = 4000  # a tool call's arguments as shown; the rest is cut (with a note)


def render(run_id: str, result: CaseResult, others: Sequence[tuple[str, str, CaseResult]],
           reference: str | None = None, no_reference: str = "", labels: str = "") -> str:
    """``others``: the same case (same repetition) in other runs, newest first, as (run id, agent, result);
    ``reference``: the dataset's reference answer, or None and ``no_reference`` says why;
    ``labels``: the section where a person labels the answer (label_forms.case_labels)."""
    r = result
    known = f"<pre>{e(reference)}</pre>" if reference else f'<p class="muted">{e(no_reference or "none")}</p>'
    parts = [
        f'<p>{"".join(_facts(r))}</p>',
        section("Question", f"<pre>{e(r.question)}</pre>", "question"),
        section("Answer", f"<pre>{e(r.reply.answer)}</pre>" if r.reply else '<p class="muted">no reply</p>', "answer"),
        section("Reference answer", known, "reference"),
        section("Checks", _checks(r.checks), "checks"),
        section("Metrics", _metrics(r), "metrics"),
        labels,
        section("Trace", _trace(r.reply, r.replay.diverged_at if r.replay else None) if r.reply
                else '<p class="muted">no trace</p>', "trace"),
        section("Evidence the judge saw", _evidence(r.reply) if r.reply else '<p class="muted">none</p>', "evidence"),
        section("In other runs", _others(run_id, r, others), "other-runs"),
    ]
    if r.replay is not None:  # --replay-users: where the agent first differed from the stored conversation
        parts.insert(1, section("Replay", f"<p>{e(r.replay.describe())}</p>", "replay"))
    if r.error:
        parts.insert(1, section("Error", f'<pre class="error">{e(r.error)}</pre>', "error"))
    label = r.case_id + (f" #{r.repeat + 1}" if r.repeat else "")
    return layout(f"Case {label}", "".join(parts), crumbs=[("runs", "/"), (run_id, run_url(run_id)),
                                                           (label, case_url(run_id, r.case_id, r.repeat))])


def _facts(r: CaseResult) -> Iterator[str]:
    yield f'status <span class="status {e(r.status)}">{e(r.status)}</span>'
    for name, value in (("split", r.split), ("category", r.category), ("risk", r.risk)):
        if value:
            yield f" · {name} {e(value)}"
    yield f" · {seconds(r.seconds)} · agent tokens {r.agent_tokens[0]} / {r.agent_tokens[1]}"
    yield f" · judge tokens {r.judge_tokens[0]} / {r.judge_tokens[1]}"
    if any(r.user_tokens):
        yield f" · simulated user tokens {r.user_tokens[0]} / {r.user_tokens[1]}"
    cost = r.agent_cost_usd + r.judge_cost_usd + r.user_cost_usd
    if cost:
        yield f" · {money(cost)}"
    if r.attempts:
        yield f" · attempts {e(', '.join(r.attempts))}"


def _checks(checks: Sequence[CheckResult]) -> str:
    if not checks:
        return '<p class="muted">no checks ran</p>'
    rows = (f'<tr>{status_cell("pass" if c.passed else "fail")}<td>{e(c.name)}</td><td>{e(c.code)}</td>'
            f"<td>{e(c.detail)}</td></tr>" for c in checks)
    return table(("result", "check", "code", "detail"), rows, "checks-table")


def _metrics(r: CaseResult) -> str:
    if r.metrics:
        return table(("metric", "value", "source", "verdict", "pass at", "reason"),
                     (_metric_row(m) for m in r.metrics), "metrics-table") + _reason(r)
    if r.scores:  # stored before metrics carried their source
        return "<p>" + " · ".join(f"{e(k)} <b>{v:g}</b>" for k, v in r.scores.items()) + "</p>" + _reason(r)
    return '<p class="muted">not judged</p>' + _reason(r)


def _metric_row(m: MetricScore) -> str:
    # WHY each number checked: a non-finite threshold or bound is stored as null (JSON has no NaN).
    bounds = all(_number(x) for x in (m.threshold, m.low, m.high))
    if m.scored and bounds:
        verdict, value = (("pass" if m.passed else "fail") if m.gates else "info"), f"{m.value:.2f}"
    else:
        verdict, value = ("unscored", "-") if not m.scored else ("no threshold", f"{m.value:.2f}")
    at = f"&ge; {m.threshold:g} (range {m.low:g}–{m.high:g})" if bounds else "not a number"
    return (f"<tr><td>{e(m.name)}</td><td><b>{value}</b></td><td>{e(m.source)}</td>{status_cell(verdict)}"
            f"<td>{at}</td><td>{e(m.detail)}</td></tr>")


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _reason(r: CaseResult) -> str:
    return f"<h3>Judge reason</h3><pre>{e(r.judge_reason)}</pre>" if r.judge_reason else ""


def _trace(reply: Reply, diverged_at: int | None = None) -> str:
    usage = reply.usage
    head = (f"<p>model {e(reply.model or '-')} · route {e(reply.route or '-')} · tokens {usage.input_tokens} in / "
            f"{usage.output_tokens} out · {len(reply.steps)} steps · {len(reply.tool_calls)} tool calls</p>")
    return head + _timeline(reply.steps, reply.tool_calls) + _turns(reply, diverged_at)


def _timeline(steps: Sequence[Step], calls: Sequence[ToolCall]) -> str:
    """Each step on the request's clock; a tool step followed by its call (matched by
    name, in order); calls no step names are listed after the steps."""
    end = max((s.start_ms + s.duration_ms for s in steps), default=0.0) or 1.0
    unmatched = list(calls)
    rows = []
    for number, step in enumerate(steps, start=1):
        rows.append(_step_row(number, step, end))
        if step.kind == "tool":
            call = next((c for c in unmatched if c.name == step.name), None)
            if call is not None:
                unmatched.remove(call)
                rows.append(_call_row(call))
    rows += [_call_row(c) for c in unmatched]
    if not rows:
        return '<p class="muted">the agent reported no steps and no tool calls</p>'
    return table(("#", "kind", "name", "when", "start", "duration", "tokens in / out", "status"), rows, "timeline")


def _step_row(number: int, s: Step, end: float) -> str:
    left, width = 100 * s.start_ms / end, max(0.5, 100 * s.duration_ms / end)
    kind = "error" if s.error else s.kind
    bar = (f'<div class="timeline"><span class="k-{e(kind)}" style="left:{left:.2f}%;width:{min(width, 100 - left):.2f}%"'
           f' title="{e(s.kind)} {e(s.name)}: {s.duration_ms:.0f} ms"></span></div>')
    status = f'<td class="status error">{e(s.error)}</td>' if s.error else '<td class="status ok">ok</td>'
    retries = f" ({s.retries} retries)" if s.retries else ""
    return (f'<tr class="step" data-kind="{e(s.kind)}"><td>{number}</td><td>{e(s.kind)}</td><td>{e(s.name)}</td>'
            f'<td>{bar}</td><td class="num">{s.start_ms:.0f} ms</td><td class="num">{s.duration_ms:.0f} ms{retries}</td>'
            f'<td class="num">{s.input_tokens} / {s.output_tokens}</td>{status}</tr>')


def _call_row(c: ToolCall) -> str:
    arguments = json.dumps(c.arguments, ensure_ascii=False, indent=1, sort_keys=True)
    if len(arguments) > ARGUMENT_CHARS:
        arguments = arguments[:ARGUMENT_CHARS] + f"\n… ({len(arguments) - ARGUMENT_CHARS} more characters)"
    where = " · ".join(f"{k} {v}" for k, v in (("turn", c.turn), ("round", c.round), ("id", c.id)) if v is not None)
    css = "ok" if c.status == "ok" else "warn" if c.status in ("needs_approval", "denied") else "error"
    return (f'<tr class="toolcall"><td></td><td>tool call</td><td><b>{e(c.name)}</b>'
            f'{f"<br><span class=muted>{e(where)}</span>" if where else ""}</td>'
            f'<td colspan="4"><div class="muted">arguments</div><pre class="arguments">{e(arguments)}</pre>'
            f'<div class="muted">result</div><pre class="result">{e(c.result)}</pre></td>'
            f'<td class="status {css}">{e(c.status)}</td></tr>')


def _turns(reply: Reply, diverged_at: int | None = None) -> str:
    """The conversation turn by turn, each answer with the calls the agent made for it
    (those marked with the user message it answers); a replay's first answer that differed
    from the stored one (``diverged_at``) says so."""
    if not reply.turns:
        return ""
    by_turn: dict[int, list[str]] = {}
    for c in reply.tool_calls:
        if c.turn is not None:
            by_turn.setdefault(c.turn, []).append(c.name)
    rows, number = [], 0
    for m in reply.turns:
        number += m.role == "user"
        calls = ", ".join(by_turn.get(number, ())) if m.role == "assistant" else ""
        if m.role == "assistant" and number == diverged_at:
            calls += " (diverged from the stored reply here)"
        rows.append(f"<tr><td>{e(m.role)}</td><td><pre>{e(m.content)}</pre></td><td>{e(calls)}</td></tr>")
    return "<h3>Conversation</h3>" + table(("role", "message", "calls for this answer"), rows, "turns")


def _evidence(reply: Reply) -> str:
    sources = ", ".join(f"{s} ({score:.2f})" for s, score in zip(reply.retrieved_sources, reply.retrieval_scores)) \
        or ", ".join(reply.retrieved_sources) or "none"
    context = (f"<details open><summary>context ({len(reply.context)} characters)</summary><pre>{e(reply.context)}"
               "</pre></details>" if reply.context else '<p class="muted">no context</p>')
    state = (f"<h3>State the tools left</h3><pre>{e(json.dumps(reply.state, ensure_ascii=False, indent=1))}</pre>"
             if reply.state is not None else "")
    return f"<p>retrieved sources: {e(sources)}</p>{context}{state}"


def _others(run_id: str, r: CaseResult, others: Sequence[tuple[str, str, CaseResult]]) -> str:
    if not others:
        return '<p class="muted">this case is in no other recent run on this dataset</p>'
    rows = (f'<tr class="row"><td><a class="rowlink" href="{e(case_url(other_id, o.case_id, o.repeat))}">{e(other_id)}'
            f"</a></td><td>{e(agent)}</td>{status_cell(o.status)}"
            f"<td>{e(', '.join(c.code for c in o.failed_checks()) or '-')}</td>"
            f'<td><a href="{e(diff_url(other_id, run_id, r.case_id))}">diff against this run</a></td></tr>'
            for other_id, agent, o in others)
    return table(("run", "agent", "status", "failed codes", ""), rows, "other-runs-table")
