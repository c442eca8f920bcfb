"""The comparison's verdict as JSON, for machines (CI, bots, dashboards)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from tracegrade.compare.comparison import Comparison, MetricRow, RiseTest
from tracegrade.compare.gate import GateConfig, Verdict


def _finite(x: Any) -> Any:
    """JSON has no NaN or Infinity: they become null."""
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _tests(row: MetricRow) -> dict[str, Any] | None:
    t = row.tests
    if t is None:
        return None
    def test(r: Any) -> dict[str, Any] | None:
        return None if r is None else {"statistic": _finite(r.statistic), "pValue": _finite(r.p_value), "method": r.method}

    return {"pairs": t.pairs, "pairedT": test(t.t_test), "wilcoxon": test(t.wilcoxon), "mcnemar": test(t.mcnemar),
            "meanDifferenceCi95": [_finite(t.mean_difference_ci.low), _finite(t.mean_difference_ci.high)],
            "significant": t.significant}


def _rise(rise: RiseTest) -> dict[str, Any]:
    return {"pairs": rise.pairs, "test": "one-sided Wilcoxon signed-rank (candidate > baseline)",
            "statistic": _finite(rise.test.statistic), "pValue": _finite(rise.test.p_value), "method": rise.test.method}


def to_json(comparison: Comparison, verdict: Verdict, config: GateConfig) -> dict[str, Any]:
    c = comparison
    return {
        "verdict": verdict.level,
        "exitCode": verdict.exit_code,
        "findings": [dataclasses.asdict(f) for f in verdict.findings],
        "baseline": c.baseline.to_json(),
        "candidate": c.candidate.to_json(),
        "casesCompared": list(c.case_ids),
        "notes": list(c.notes),
        "metrics": [{"name": r.name, "baseline": r.baseline, "candidate": r.candidate, "delta": r.delta,
                     "relativeDelta": r.relative, "tests": _tests(r)} for r in c.metrics],
        "latencyS": {q: {"baseline": b, "candidate": a} for q, (b, a) in c.latency.items()},
        "costPerCaseUsd": {"baseline": c.cost_per_case[0], "candidate": c.cost_per_case[1]},
        "latencyRise": _rise(c.latency_rise),
        "costRise": _rise(c.cost_rise),
        "groups": [{"group": g.key, "cases": g.cases, "baselinePass": g.baseline_pass, "candidatePass": g.candidate_pass,
                    "newlyFailing": list(g.newly_failing)} for g in c.groups],
        "newlyFailing": list(c.newly_failing),
        "newlyPassing": list(c.newly_passing),
        "gate": config.model_dump(mode="json"),
    }


def write(comparison: Comparison, verdict: Verdict, config: GateConfig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(comparison, verdict, config), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_error(reason: str, refs: tuple[str, str], exit_code: int, path: Path) -> Path:
    """The verdict file of a comparison that could not be made: ``"verdict": "error"`` and why."""
    data = {"verdict": "error", "exitCode": exit_code, "error": reason, "baseline": refs[0], "candidate": refs[1]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
