"""The component metrics and the stratified table, printed after the final report.

Each number carries its denominator, "-" marks a metric no case qualifies for,
and the flags list every group below its threshold even when the overall passes.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from tracegrade.metrics import JUDGE, Group, Rate, RunMetrics
from tracegrade.metrics.routing import RoutingReport
from tracegrade.metrics.stratify import THRESHOLDS, Threshold

RULE = "=" * 60

# The component block: (label, [(short name, metric key)]).
COMPONENTS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("retrieval", (("recall@k", "retrieval.recall@k"), ("precision@k", "retrieval.precision@k"),
                   ("mrr", "retrieval.mrr"), ("ndcg@k", "retrieval.ndcg@k"), ("leakage", "retrieval.leakage"))),
    ("tools", (("selection", "tools.selection"), ("argExact", "tools.argExact"), ("argPartial", "tools.argPartial"),
               ("execSuccess", "tools.execSuccess"))),
    ("", (("duplicateSideEffects", "tools.duplicateSideEffects"),
          ("unauthorizedAttempts", "tools.unauthorizedAttempts"))),
    ("routing", (("accuracy", "routing.accuracy"), ("macroF1", "routing.macroF1"))),
    ("generation", (("refusal", "generation.refusal"), ("falseRefusal", "generation.falseRefusal"),
                    ("format", "generation.format"))),
)

# The stratified table's columns: (header, metric key).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("pass", "passRate"), ("select", "tools.selection"), ("argEx", "tools.argExact"),
    ("R@k", "retrieval.recall@k"), ("ndcg", "retrieval.ndcg@k"), ("route", "routing.accuracy"),
    ("refuse", "generation.refusal"), ("format", "generation.format"),
)


def _value(rate: Rate | None) -> str:
    return "-" if rate is None or rate.value is None else f"{rate.value:.2f}"


def _with_n(rate: Rate) -> str:
    unit = "" if rate.unit == "cases" else f" {rate.unit}"
    return f"{_value(rate)} ({rate.n}{unit})"


def component_block(metrics: RunMetrics) -> list[str]:
    k = ",".join(str(k) for k in metrics.k) or "-"
    lines = [RULE, f"COMPONENT METRICS  {metrics.cases} results, {metrics.traced} with a trace, retrieval k={k}"]
    for label, entries in COMPONENTS:
        parts = "  ".join(f"{short} {_with_n(metrics.overall[key])}" for short, key in entries)
        lines.append(f"  {label:<10}  {parts}")
        if label == "routing":
            lines += _routing_lines(metrics.routing)
    safety = metrics.overall["safety.violations"]
    lines.append(f"  {'safety':<10}  {int(safety.total)} of {safety.n} cases with a violation (target 0)")
    lines += [f"              {v.case_id}  {v.kind}: {v.detail}" for v in metrics.violations]
    return lines


def _routing_lines(routing: RoutingReport) -> list[str]:
    if not routing.classes:
        return [f"  {'':<10}  (no case has an expected route{', or the agent reports none' if routing.unrouted else ''})"]
    labels = list(routing.classes)
    width = max(len(label) for label in [*labels, "expected \\ reported"])
    lines = [f"  {'':<10}  {'route':<{width}}  precision  recall    f1  expected  reported   (# = column in the confusion)"]
    for number, (label, c) in enumerate(routing.classes.items(), start=1):
        lines.append(f"  {'':<10}  {label:<{width}}  {c.precision:9.2f}  {c.recall:6.2f}  {c.f1:4.2f}"
                     f"  {c.support:8d}  {c.predicted:8d}   #{number}")
    header = "".join(f"{'#' + str(i):>5}" for i in range(1, len(labels) + 1))
    corner = "expected \\ reported"
    lines.append(f"  {'confusion':<10}  {corner:<{width}}{header}")
    for label in labels:
        row = "".join(f"{routing.confusion[label][other]:>5}" for other in labels)
        lines.append(f"  {'':<10}  {label:<{width}}{row}")
    if routing.unrouted:
        lines.append(f"  {'':<10}  {routing.unrouted} case(s) with an expected route got no route from the agent")
    return lines


def stratified_table(groups: Sequence[Group]) -> list[str]:
    lines = [RULE, "STRATIFIED  every metric per group is in the results JSON; '-' = no case qualifies"]
    # The judge's metrics are the run's own (from its results): one column each.
    judged = list(dict.fromkeys(k for g in groups for k in g.metrics if k.startswith(JUDGE)))
    columns = [*((name, key, 7) for name, key in COLUMNS),
               *((key.removeprefix(JUDGE), key, max(7, len(key) - len(JUDGE) + 1)) for key in judged)]
    dimension = None
    width = max([len(g.name) for g in groups] + [12])
    for group in groups:
        if group.dimension != dimension:
            dimension = group.dimension
            header = "".join(f"{name:>{w}}" for name, _, w in columns)
            lines.append(f"  {dimension:<{width}} {'n':>4} {'passed':>6}{header} {'unsafe':>6}")
        lines.append(_group_row(group, width, columns))
    return lines


def _group_row(group: Group, width: int, columns: Sequence[tuple[str, str, int]]) -> str:
    m: Mapping[str, Rate] = group.metrics
    cells = "".join(f"{_value(m.get(key)):>{w}}" for _, key, w in columns)
    passed = m["passRate"]
    return f"  {group.name:<{width}} {passed.n:>4} {int(passed.total):>6}{cells} {int(m['safety.violations'].total):>6}"


# WHY said under the flags: a reader met "wanted >= 0.8" thresholds they never set.
THRESHOLDS_FROM = ("  thresholds: tracegrade's defaults (docs/metrics.md), a judge metric's from its rubric; "
                   "set one with --flag-threshold 'passRate>=0.9'\n  (evaluate(flag_thresholds=...)). "
                   "Flags warn: they do not change the exit code.")


def flag_lines(metrics: RunMetrics) -> list[str]:
    if not metrics.flags:
        return [RULE, "FLAGS  none: every group meets every threshold"]
    scopes = list(dict.fromkeys(f.scope for f in metrics.flags))
    lines = [RULE, f"FLAGS  {len(metrics.flags)} below threshold in {len(scopes)} groups "
             "(a group can fail while the overall passes)"]
    width = max(len(scope) for scope in scopes)
    previous = None
    for f in metrics.flags:
        scope = f.scope if f.scope != previous else ""
        previous = f.scope
        lines.append(f"  {scope:<{width}}  {f.metric:<26} {f.value:5.2f}  wanted {str(f.threshold):<7} "
                     f"{_origin(f.metric, f.threshold):<9} n={f.n}")
    return [*lines, THRESHOLDS_FROM]


def _origin(metric: str, threshold: Threshold) -> str:
    if metric.startswith(JUDGE):
        return "(rubric)"
    return "(default)" if THRESHOLDS.get(metric) == threshold else "(set)"


def render(metrics: RunMetrics) -> str:
    return "\n".join([*component_block(metrics), *stratified_table(metrics.groups), *flag_lines(metrics)])
