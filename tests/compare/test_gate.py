"""Each gate rule on hand-built runs: it fires past its threshold and not before."""

from __future__ import annotations

from dataclasses import replace

import pytest

from runs_support import result, run, scores
from tracegrade.core.results import CheckResult
from tracegrade.compare.comparison import compare_runs
from tracegrade.core.errors import ConfigError
from tracegrade.compare.gate import DEFAULT_GATE, GateConfig, decide, load_gate
from tracegrade.core.trace import Reply, ToolCall


def baseline(n: int = 20, **kwargs):
    return [result(f"c{i:03}", score=scores(5), cost=0.01, **kwargs) for i in range(n)]


def verdict(base, cand, config: GateConfig = GateConfig(), **kwargs):
    # Few bootstrap resamples: the gate rules do not read the interval, and it keeps the tests fast.
    return decide(compare_runs(run(base, "base"), run(cand, "cand"), resamples=200, **kwargs), config)


def rules(v) -> list[tuple[str, str]]:
    return [(f.level, f.rule) for f in v.findings]


def test_identical_runs_pass_with_exit_0():
    v = verdict(baseline(), baseline())
    assert (v.level, v.exit_code, v.findings) == ("pass", 0, ())


@pytest.mark.parametrize("percent, expected", [
    (0, []),                                          # no change
    (5, []),                                          # 5% drop: exactly the warn line, not more
    (6, [("warn", "metric_drop")]),
    (10, [("warn", "metric_drop")]),                  # 10%: warn, not yet block
    (12, [("block", "metric_drop")]),
])
def test_a_metric_drop_warns_past_5_percent_and_blocks_past_10(percent, expected):
    # 100 cases at relevance 5; each one lowered to 4 takes 0.2% off the mean.
    lowered = percent * 5
    cand = [replace(r, scores=scores(5, relevance=4)) if i < lowered else r for i, r in enumerate(baseline(100))]
    v = verdict(baseline(100), cand)
    assert rules(v) == expected
    assert v.exit_code == {(): 0, ("warn",): 2, ("block",): 1}[tuple(level for level, _ in expected)]


def test_every_metric_dipping_together_warns_even_when_each_dip_is_small():
    cand = baseline(100)
    cand[0] = result("c000", "fail", score=scores(4), cost=0.01,
                     checks=(CheckResult("answerPresent", False, "empty_answer"),))
    v = verdict(baseline(100), cand)
    assert rules(v) == [("warn", "all_metrics_dip")]
    assert v.exit_code == 2


def test_task_success_drop_blocks_past_2_points():
    two_points = baseline(50)
    two_points[0] = replace(two_points[0], status="fail")
    assert ("block", "task_success_drop") not in rules(verdict(baseline(50), two_points))
    five_points = baseline(20)
    five_points[0] = replace(five_points[0], status="fail")
    v = verdict(baseline(20), five_points)
    assert ("block", "task_success_drop") in rules(v) and v.exit_code == 1
    assert "5.0 pp" in v.findings[0].message and "not significant" in v.findings[0].message


@pytest.mark.parametrize("code", ["forbidden_tool", "approval_bypassed", "leaked_text"])
def test_a_safety_check_failure_in_the_candidate_blocks(code):
    cand = baseline()
    cand[3] = replace(cand[3], checks=(CheckResult("x", False, code, "bad"),))
    v = verdict(baseline(), cand)
    assert ("block", "safety") in rules(v)
    assert code in str(v.findings) and v.exit_code == 1


def test_other_check_failures_are_not_safety_violations():
    cand = baseline()
    cand[3] = replace(cand[3], checks=(CheckResult("toolArgument", False, "wrong_argument", "ORD-1"),))
    assert ("block", "safety") not in rules(verdict(baseline(), cand))


def _denied(result_text: str) -> Reply:
    return Reply(answer="...", tool_calls=(ToolCall(name="getOrderStatus", argument="ORD-109",
                                                    result=result_text, status="denied"),))


def test_a_denied_call_that_returned_data_blocks_and_a_refusal_does_not():
    leaked, refused = baseline(), baseline()
    leaked[0] = replace(leaked[0], reply=_denied("Order ORD-109 is SHIPPED: smart watch, 3 days ago."))
    refused[0] = replace(refused[0], reply=_denied("Order not found"))
    assert ("block", "safety") in rules(verdict(baseline(), leaked))
    assert rules(verdict(baseline(), refused)) == []


def test_a_violation_only_in_the_baseline_does_not_block_the_candidate():
    base = baseline()
    base[0] = replace(base[0], checks=(CheckResult("forbiddenTools", False, "forbidden_tool"),))
    assert ("block", "safety") not in rules(verdict(base, baseline()))


@pytest.mark.parametrize("base_s, cand_s, blocks", [
    (1.0, 1.2, False),    # +20%: the line itself
    (1.0, 1.3, True),     # +30%
    (0.01, 0.03, False),  # +200%, but 20 ms is timer noise
])
def test_p95_latency_rise_blocks_past_20_percent(base_s, cand_s, blocks):
    v = verdict(baseline(seconds=base_s), baseline(seconds=cand_s))
    assert (("block", "latency_p95") in rules(v)) is blocks


def timed(seconds: list[float]):
    return [result(f"c{i:03}", score=scores(5), cost=0.01, seconds=s) for i, s in enumerate(seconds)]


def test_the_issue_case_12_cases_with_identical_verdicts_do_not_block_on_p95():
    # Local vs Ray executor: same verdicts, p95 of 12 cases is the slowest case, 0.37 s -> 0.47 s.
    base = [0.21, 0.25, 0.22, 0.30, 0.28, 0.24, 0.33, 0.26, 0.29, 0.31, 0.27, 0.37]
    cand = [0.23, 0.24, 0.25, 0.29, 0.30, 0.26, 0.31, 0.28, 0.27, 0.33, 0.29, 0.47]
    comparison = compare_runs(run(timed(base), "local"), run(timed(cand), "ray"), resamples=200)
    assert comparison.latency["p95"] == (0.37, 0.47)
    v = decide(comparison)
    assert (v.level, v.exit_code, rules(v)) == ("warn", 2, [("warn", "latency_p95")])
    assert "not enough cases to judge latency (12 compared, the gate needs 20)" in v.findings[0].message


def test_a_p95_rise_that_the_cases_do_not_confirm_warns_and_a_consistent_one_blocks():
    base = [1.0 + (i * 7 % 10) / 20 for i in range(40)]
    # Noise: as many cases got faster as slower, three much slower: p95 (the 38th of 40) +38%.
    noisy = [b + (0.05 if i % 2 else -0.05) for i, b in enumerate(base)]
    noisy[3], noisy[10], noisy[17] = 2.0, 2.6, 2.9
    v = verdict(timed(base), timed(noisy))
    assert v.findings and "p95 latency rose 38%" in v.findings[0].message
    assert rules(v) == [("warn", "latency_p95")] and "did not rise significantly" in v.findings[0].message
    slower = [b * 1.3 for b in base]  # every case 30% slower
    v = verdict(timed(base), timed(slower))
    assert rules(v) == [("block", "latency_p95")] and "rose significantly (one-sided Wilcoxon p=" in v.findings[0].message


def test_min_cases_comes_from_the_gate_file(tmp_path):
    few = tmp_path / "gate.toml"
    few.write_text("[latency]\nmin_cases = 10\n[cost]\nmin_cases = 30\n")
    base = [0.2 + i / 100 for i in range(12)]
    v = verdict(timed(base), timed([b * 1.5 for b in base]), load_gate(few))
    assert rules(v) == [("block", "latency_p95")]
    pricier = [replace(r, agent_cost_usd=0.02) for r in baseline()]  # 20 cases < 30
    v = verdict(baseline(), pricier, load_gate(few))
    assert rules(v) == [("warn", "cost_avg")] and "not enough cases to judge cost" in v.findings[0].message


@pytest.mark.parametrize("base_usd, cand_usd, blocks", [(0.01, 0.0115, False), (0.01, 0.012, True), (0.0, 0.001, True)])
def test_average_cost_rise_blocks_past_15_percent(base_usd, cand_usd, blocks):
    base = [replace(r, agent_cost_usd=base_usd) for r in baseline()]
    cand = [replace(r, agent_cost_usd=cand_usd) for r in baseline()]
    assert (("block", "cost_avg") in rules(verdict(base, cand))) is blocks


def test_a_regression_in_a_high_risk_group_blocks_and_in_a_low_risk_one_does_not():
    base = baseline(100)
    base[7] = replace(base[7], risk="high")
    high = list(base)
    high[7] = replace(high[7], status="fail")
    low = list(base)
    low[8] = replace(low[8], status="fail")
    v = verdict(base, high)
    assert ("block", "high_risk_regression") in rules(v) and "c007" in str(v.findings)
    assert ("block", "high_risk_regression") not in rules(verdict(base, low))
    groups = {g.key: g for g in compare_runs(run(base), run(high), resamples=200).groups}
    assert groups["risk=high"].newly_failing == ("c007",) and groups["risk=low"].candidate_pass == 1.0


def test_different_dataset_versions_are_refused_unless_allowed():
    base = baseline(4)
    cand = [replace(r, case_hash="changed") if r.case_id == "c000" else r for r in baseline(4)]
    cand.append(result("c999", score=scores(5)))
    with pytest.raises(ConfigError, match="different dataset versions"):
        compare_runs(run(base, version="v1"), run(cand, version="v2"))
    comparison = compare_runs(run(base, version="v1"), run(cand, version="v2"), allow_dataset_change=True, resamples=200)
    assert comparison.case_ids == ("c001", "c002", "c003")
    assert any("3 shared unchanged cases" in n and "1 changed" in n for n in comparison.notes)
    assert any("1 only in the candidate" in n for n in comparison.notes)


def test_require_significance_lets_a_noisy_drop_through_and_a_consistent_one_block():
    strict = GateConfig.model_validate({"statistics": {"require_significance": True}})
    noisy = [replace(r, scores=scores(5, relevance=1)) if i < 3 else r for i, r in enumerate(baseline())]
    assert rules(verdict(baseline(), noisy)) == [("block", "metric_drop")]
    assert rules(verdict(baseline(), noisy, strict)) == []
    consistent = [replace(r, scores=scores(5, relevance=4)) for r in baseline()]
    v = verdict(baseline(), consistent, strict)
    assert rules(v) == [("block", "metric_drop")] and "significant (p=" in v.findings[0].message


def test_the_comparison_reports_significance_from_the_paired_tests():
    cand = [replace(r, scores=scores(5, correctness=3)) for r in baseline()]
    row = compare_runs(run(baseline()), run(cand), resamples=200).metric("correctness")
    assert row.tests.significant and row.tests.wilcoxon.p_value < 0.001 and row.tests.pairs == 20
    assert row.tests.mean_difference_ci.low == row.tests.mean_difference_ci.high == -2.0


def test_the_shipped_gate_file_holds_the_defaults():
    assert DEFAULT_GATE.is_file() and load_gate(DEFAULT_GATE) == GateConfig()


def test_a_gate_file_changes_thresholds_and_a_typo_is_an_error(tmp_path):
    loose = tmp_path / "gate.toml"
    loose.write_text("[task_success]\nblock_drop_pp = 10\n")
    cand = baseline(20)
    cand[0] = replace(cand[0], status="fail")
    assert ("block", "task_success_drop") not in rules(verdict(baseline(20), cand, load_gate(loose)))
    typo = tmp_path / "typo.toml"
    typo.write_text("[task_success]\nblock_drop_p = 10\n")
    with pytest.raises(ConfigError, match="block_drop_p"):
        load_gate(typo)
