"""History: one chart per metric over a dataset's recent runs, with the gate's
lines drawn in: where the next run would be blocked (and warned) compared with
the newest run, as `tracegrade compare latest NEXT` would decide.

    >>> "no runs" in render([], "", [], __import__("tracegrade.compare.gate", fromlist=["GateConfig"]).GateConfig())
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean
from typing import Mapping, Sequence

from tracegrade.compare.gate import GateConfig
from tracegrade.report import svg
from tracegrade.store.runstore import RunInfo
from tracegrade.view.caseindex import CaseIndex
from tracegrade.view.shell import e, layout, options, run_url, section, table

RUNS = 20  # the newest runs of the dataset a chart shows


@dataclass(frozen=True)
class Point:
    """What the charts take of one run. WHY not its case index: a chart's run is one
    point, so a page of 20 runs keeps 20 small points, not 20 indexes."""

    cases: int
    pass_rate: float | None
    scores: Mapping[str, float]  # each judge metric's mean over the cases it scored


def point_of(index: CaseIndex) -> Point:
    rows = index.rows
    names = dict.fromkeys(name for row in rows for name in row.scores)
    means = {name: fmean([r.scores[name] for r in rows if name in r.scores]) for name in names}
    return Point(len(rows), sum(r.status == "pass" for r in rows) / len(rows) if rows else None, means)


SELECTION_FLAGS = ("only", "split", "category", "smoke")


def kind(info: RunInfo) -> str:
    """What a run measured, as far as a chart line may join it to others: "all cases" of a
    live agent, "a selection of cases" (--only, --split, --category, --smoke, pytest -k) or
    "recorded traces" (`tracegrade grade`)."""
    settings = info.manifest.settings
    if any(settings.get(flag) for flag in SELECTION_FLAGS):
        return "a selection of cases"
    return "recorded traces" if info.manifest.target.startswith("recorded:") else "all cases"


def charted(infos: Sequence[RunInfo]) -> tuple[list[RunInfo], list[RunInfo]]:
    """The newest runs of the newest run's kind (charted, newest first), and the others among them.
    WHY apart: a run of three cases, or of traces recorded elsewhere, on the same line as
    whole runs of the agent reads as a rise or a drop that no change made."""
    wanted = kind(infos[0]) if infos else ""
    same = [i for i in infos if kind(i) == wanted]
    return same[:RUNS], [i for i in infos[:RUNS] if kind(i) != wanted]


def series(runs: Sequence[tuple[RunInfo, Point]]) -> dict[str, list[float | None]]:
    """Per metric (the pass rate, then each judge metric), its value in each run (oldest first)."""
    out: dict[str, list[float | None]] = {"taskSuccess": [point.pass_rate for _, point in runs]}
    for name in dict.fromkeys(name for _, point in runs for name in point.scores):
        out[name] = [point.scores.get(name) for _, point in runs]
    return out


def render(datasets: Sequence[str], chosen: str, runs: Sequence[tuple[RunInfo, Point]], gate: GateConfig,
           apart: Sequence[RunInfo] = ()) -> str:
    """``runs``: the charted runs, oldest first; ``apart``: recent runs of another kind, listed only."""
    if not runs:
        return layout("History", section("History", "<p>no runs in the store yet</p>"), here="/history")
    labels = [info.run_id[-6:] for info, _ in runs]
    charts = [_chart(name, labels, values, gate) for name, values in series(runs).items()]
    form = (f'<form class="filters" method="get" action="/history"><label>dataset <select name="dataset">'
            f'{options(((d, d) for d in datasets), chosen)}'
            '</select></label><button type="submit">show</button></form>')
    rows = (f'<tr class="row"><td><a class="rowlink" href="{e(run_url(i.run_id))}">{e(i.run_id)}</a></td>'
            f"<td>{e(i.started_at)}</td><td>{e(i.manifest.agent_model)}</td><td>{e(i.manifest.prompt_version or '-')}"
            f"</td><td>{point.cases}</td></tr>" for i, point in runs)
    body = (form + section(f"{chosen}: the last {len(runs)} runs, oldest first",
                           '<p class="muted">flat lines: where the gate would block (and warn) a next run compared '
                           f'with the newest one</p><div class="charts" id="history-charts">{"".join(charts)}</div>',
                           "history")
            + section(f"Runs charted: {kind(runs[-1][0])}", table(("run", "started", "agent", "prompt", "cases"), rows))
            + _apart(apart))
    return layout("History", body, crumbs=[("runs", "/")], here="/history")


def _chart(name: str, labels: Sequence[str], values: Sequence[float | None], gate: GateConfig) -> str:
    latest = next((v for v in reversed(values) if v is not None), None)
    lines: list[tuple[str, Sequence[float | None]]] = [(name, values)]
    if latest is not None:
        if name == "taskSuccess":
            block = latest - gate.task_success.block_drop_pp / 100
            lines.append((f"block below {block:.2f}", [block] * len(values)))
        else:
            block, warn = latest * (1 - gate.metrics.block_relative_drop), latest * (1 - gate.metrics.warn_relative_drop)
            # block first: the palette's second colour (red) is the one a reader takes for "stop"
            lines += [(f"block below {block:.2f}", [block] * len(values)), (f"warn below {warn:.2f}", [warn] * len(values))]
    peak = max([v for _, ys in lines for v in ys if v is not None] + [1.0])
    return svg.lines(labels, lines, title=name, y_max=peak * 1.05 if peak > 1 else 1.0)


def _apart(infos: Sequence[RunInfo]) -> str:
    if not infos:
        return ""
    rows = (f'<tr class="row"><td><a class="rowlink" href="{e(run_url(i.run_id))}">{e(i.run_id)}</a></td>'
            f"<td>{e(i.started_at)}</td><td>{e(kind(i))}</td><td>{e(i.manifest.agent_model)}</td>"
            f"<td>{i.manifest.case_count}</td></tr>" for i in infos)
    return section("Not charted: runs of another kind", table(("run", "started", "kind", "agent", "cases"), rows),
                   "not-charted")
