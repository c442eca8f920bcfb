"""Stratification and flags: a group below its threshold is flagged even when the overall passes."""

from __future__ import annotations

from places import ROOT
from tracegrade.case.schema import GoldenCase
from tracegrade.metrics import Rate, Threshold, run_metrics
from tracegrade.metrics.stratify import flag
from tracegrade.report import stratified
from tracegrade.core.results import CaseResult
from tracegrade.core.trace import Reply


def case(id: str, category: str, split: str = "nominal", risk: str = "low", language: str = "en") -> GoldenCase:
    return GoldenCase(id=id, question="q", category=category, split=split, risk=risk, language=language)


# 10 cases: 8 order-status (all pass), 2 shipping (both fail) -> overall 0.8, shipping 0.0.
CASES = [case(f"o{i}", "order-status", risk="medium") for i in range(8)] + [
    case("s0", "shipping", split="edge"), case("s1", "shipping", language="de")]
RESULTS = [CaseResult(c.id, "fail" if c.category == "shipping" else "pass", reply=Reply(answer="ok")) for c in CASES]


def test_groups_per_dimension_with_counts_and_pass_rates():
    groups = {(g.dimension, g.name): g.metrics["passRate"] for g in run_metrics(RESULTS, CASES).groups}
    assert groups == {
        ("split", "nominal"): Rate(8, 9), ("split", "edge"): Rate(0, 1),
        ("category", "order-status"): Rate(8, 8), ("category", "shipping"): Rate(0, 2),
        ("risk", "medium"): Rate(8, 8), ("risk", "low"): Rate(0, 2),
        ("language", "en"): Rate(8, 9), ("language", "de"): Rate(0, 1),
    }


def test_a_failing_group_is_flagged_while_the_overall_passes():
    metrics = run_metrics(RESULTS, CASES)
    assert metrics.overall["passRate"].value == 0.8  # meets the 0.8 threshold
    scopes = {(f.scope, f.metric) for f in metrics.flags}
    assert ("overall", "passRate") not in scopes
    assert ("category=shipping", "passRate") in scopes
    assert ("risk=low", "passRate") in scopes and ("split=edge", "passRate") in scopes
    assert ("category=order-status", "passRate") not in scopes
    shipping = next(f for f in metrics.flags if f.scope == "category=shipping")
    assert (shipping.value, shipping.n) == (0.0, 2)


def test_thresholds_have_a_direction_and_undefined_metrics_are_never_flagged():
    thresholds = {"passRate": Threshold(minimum=0.9), "safety.violations": Threshold(maximum=0.0),
                  "generation.refusal": Threshold(minimum=0.9)}
    found = flag("overall", {"passRate": Rate(9, 10), "safety.violations": Rate(1, 10),
                             "generation.refusal": Rate(0, 0)}, thresholds)
    assert [(f.metric, str(f.threshold)) for f in found] == [("safety.violations", "<= 0")]


def test_metrics_json_has_every_metric_per_group_and_the_flags():
    data = run_metrics(RESULTS, CASES).to_json()
    shipping = next(g for g in data["groups"] if g["name"] == "shipping")
    assert shipping["dimension"] == "category"
    assert shipping["metrics"]["passRate"] == {"value": 0.0, "n": 2, "unit": "cases"}
    assert set(shipping["metrics"]) == set(data["overall"])  # every metric, per group
    assert {"scope": "category=shipping", "metric": "passRate", "value": 0.0, "threshold": ">= 0.8", "n": 2} in data["flags"]


def test_the_report_prints_groups_and_flags():
    text = stratified.render(run_metrics(RESULTS, CASES))
    assert "COMPONENT METRICS  10 results, 10 with a trace" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("shipping"))
    assert row.split()[:4] == ["shipping", "2", "0", "0.00"]
    flags = text[text.index("FLAGS"):].splitlines()[1:-2]  # the last two: where the thresholds come from
    assert [line.split()[:2] for line in flags] == [
        ["split=edge", "passRate"], ["category=shipping", "passRate"], ["risk=low", "passRate"],
        ["language=de", "passRate"]]


# Issue 34: "passRate wanted >= 0.8" thresholds the user never set: say where they come from and how to set them.
def test_each_flag_says_where_its_threshold_came_from_and_how_to_set_one():
    from tracegrade.run.evaluate import parse_thresholds

    text = stratified.render(run_metrics(RESULTS, CASES, parse_thresholds(["tools.selection>=0.5"])))
    flags = text[text.index("FLAGS"):]
    assert "passRate                    0.00  wanted >= 0.8  (default) n=2" in flags
    assert "--flag-threshold 'passRate>=0.9'" in flags and "do not change the exit code" in flags
    set_high = stratified.render(run_metrics(RESULTS, CASES, parse_thresholds(["passRate>=0.95"])))
    assert "wanted >= 0.95 (set)" in set_high


def test_a_wrong_flag_threshold_names_the_metrics_there_are():
    import pytest

    from tracegrade.core.errors import ConfigError
    from tracegrade.run.evaluate import parse_thresholds

    with pytest.raises(ConfigError, match="flag threshold 'passrate>=0.9'.*passRate, retrieval.recall@k"):
        parse_thresholds(["passrate>=0.9"])


def test_the_docs_table_is_the_defaults():
    import re

    from tracegrade.metrics.stratify import THRESHOLDS

    doc = (ROOT / "docs" / "metrics.md").read_text()
    table = {m: f"{op} {v}" for m, op, v in re.findall(r"\| `([\w.@]+)` \| ([<>]=) ([\d.]+) \|", doc)}
    assert table == {m: str(t).replace(".0 ", " ") for m, t in THRESHOLDS.items()}
