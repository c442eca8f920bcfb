"""The price table, each case's cost (agent and judge apart), and --budget."""

from __future__ import annotations

import pytest

from runs_support import GOLDEN_PATH, result
from tracegrade.stats.aggregate import cost
from tracegrade.cli import main
from tracegrade.core.errors import ConfigError
from tracegrade.stats.pricing import Price, PriceTable, load_prices, price_case, unpriced_models
from tracegrade.run.runner import Budget
from tracegrade.store.runstore import open_store
from tracegrade.core.trace import Reply, Usage

# 1000 input + 100 output tokens of gpt-4o at $2.50 / $10.00 per million.
PER_CASE = 0.0035


def test_shipped_table_prices_the_local_model_at_zero_and_matches_prefixes():
    table = load_prices()
    assert table.cost("qwen2.5-coder-1.5b-instruct-q4_k_m", 5000, 500) == 0.0
    assert table.cost("gpt-4o-2024-08-06", 1000, 100) == pytest.approx(PER_CASE)
    assert table.price("gpt-4o-mini-2024-07-18") == Price(0.15, 0.60)  # longest prefix wins over gpt-4o*
    assert table.cost("some-new-model", 1, 1) is None


def test_a_price_found_by_prefix_is_the_same_asked_again_and_past_the_kept_ones():
    table = PriceTable({"m*": Price(1.0, 1.0), "m-big*": Price(2.0, 2.0)})
    asked = ["m-big-1", "m-1", "x", *(f"m-{i}" for i in range(100)), "m-big-1", "m-1", "x"]
    assert [table.price(m) for m in asked] == [Price(2.0, 2.0), Price(1.0, 1.0), None,
                                               *[Price(1.0, 1.0)] * 100, Price(2.0, 2.0), Price(1.0, 1.0), None]


def test_a_bad_price_file_names_the_model(tmp_path):
    bad = tmp_path / "prices.toml"
    bad.write_text('[models."m"]\ninput = 1.0\n')
    with pytest.raises(ConfigError, match="'m'"):
        load_prices(bad)


def test_case_cost_keeps_agent_and_judge_apart_and_believes_a_reported_cost():
    table = PriceTable({"agent-m": Price(1.0, 2.0), "judge-m": Price(10.0, 20.0)})
    case = result("c", reply=Reply(answer="x", model="agent-m"))
    case = case.__class__(**{**case.__dict__, "agent_tokens": (1_000_000, 0), "judge_tokens": (0, 1_000_000)})
    priced = price_case(case, table, "fallback", "judge-m")
    assert (priced.agent_cost_usd, priced.judge_cost_usd) == (1.0, 20.0)
    reported = case.__class__(**{**case.__dict__, "reply": Reply(answer="x", model="agent-m", usage=Usage(cost_usd=0.5))})
    assert price_case(reported, table, "fallback", "judge-m").agent_cost_usd == 0.5
    unknown = case.__class__(**{**case.__dict__, "reply": Reply(answer="x", model="mystery")})
    assert unpriced_models([unknown], table, "fallback", "judge-m") == ["mystery"]


def test_cost_per_case_and_per_successful_task():
    spent = cost([result("a", "pass", cost=0.02), result("b", "fail", cost=0.04)])
    assert spent["totalUsd"] == pytest.approx(0.06) and spent["perCaseUsd"] == pytest.approx(0.03)
    assert spent["perSuccessUsd"] == pytest.approx(0.06)
    assert cost([result("a", "fail", cost=0.01)])["perSuccessUsd"] is None


def test_budget_warns_at_80_percent_and_is_exhausted_at_100():
    said = []
    budget = Budget(1.0, say=said.append)
    budget.add(0.5)
    budget.add(0.3)
    assert len(said) == 1 and "80%" in said[0] and not budget.exhausted
    budget.add(0.1)
    assert len(said) == 1  # warned once
    budget.add(0.1)
    assert budget.exhausted and "budget reached" in said[1]


def test_budget_stops_a_run_cleanly_and_resume_finishes_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'runs.db'}")
    log = tmp_path / "calls.log"
    monkeypatch.setenv("TG_CALL_LOG", str(log))
    common = ["--checks-only", "--concurrency", "1", "--quiet", "--out", str(tmp_path / "out")]
    # 0.012 USD: the warning after 3 cases (0.0105), the stop after the 4th (0.014).
    code = main(["run", str(GOLDEN_PATH), "--target", "runs_support:priced_target", "--budget", "0.012", *common])
    err = capsys.readouterr().err
    assert code == 3 and "budget warning" in err and "budget reached" in err
    with open_store() as store:
        [info] = store.runs()
        assert (info.status, info.cases_done) == ("stopped", 4)
        assert info.manifest.totals["costUsd"]["agentUsd"] == pytest.approx(4 * PER_CASE)
    assert len(log.read_text().split()) == 4

    assert main(["run", str(GOLDEN_PATH), "--resume", info.run_id, "--budget", "1", *common]) == 0
    with open_store() as store:
        finished = store.info(info.run_id)
    assert (finished.status, finished.cases_done) == ("finished", 12)
    assert finished.manifest.totals["costUsd"]["totalUsd"] == pytest.approx(12 * PER_CASE)
    assert len(log.read_text().split()) == 12  # 4 before the stop + the 8 left
